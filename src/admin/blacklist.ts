// Operator commands for the image blacklist (DECISIONS §3): `blacklist disable ID`.
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"

import { ImageBlacklist } from "../services/ImageBlacklist.js"
import { answering, idArgument } from "./cli.js"

export const blacklistCommand = Command.make("blacklist").pipe(
  Command.withDescription("The image blacklist"),
  Command.withSubcommands([
    answering("disable", { id: idArgument() }, ({ id }) => Effect.flatMap(ImageBlacklist, (b) => b.disable(id))).pipe(
      Command.withDescription("Stop refusing a blacklisted image")
    )
  ])
)
