// Operator commands for matchmakers (DECISIONS §3): `matchmakers status|cert-level ID VALUE`;
// each prints the matchmaker as it is after.
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"

import { CertLevel, MatchmakerStatus } from "../../schema/Matchmakers.js"
import { Matchmakers } from "../services/Matchmakers.js"
import { answering, idArgument } from "./cli.js"

export const matchmakersCommand = Command.make("matchmakers").pipe(
  Command.withDescription("Matchmakers: status and certification, set by the operator"),
  Command.withSubcommands([
    answering(
      "status",
      { id: idArgument(), status: Argument.Literals("STATUS", MatchmakerStatus.literals) },
      ({ id, status }) => Effect.flatMap(Matchmakers, (m) => m.setStatus(id, status))
    ).pipe(Command.withDescription("Set a matchmaker's status")),
    answering(
      "cert-level",
      { id: idArgument(), level: Argument.Literals("LEVEL", CertLevel.literals) },
      ({ id, level }) => Effect.flatMap(Matchmakers, (m) => m.setCertLevel(id, level))
    ).pipe(
      Command.withDescription("Set a matchmaker's certification level")
    )
  ])
)
