// Operator commands for the master keys of secrets at rest (DECISIONS §13): `keys list` (each key
// id and what it seals, never key material) and `keys rotate` (re-seal everything under the
// sealing key). Procedure in docs/operator.md, "Rotating the master key".
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"

import { SealedSecrets } from "../services/SealedSecrets.js"
import { answering, positiveIntFlag } from "./cli.js"

const list = answering("list", {}, () => Effect.flatMap(SealedSecrets, (s) => s.list)).pipe(
  Command.withDescription("Each key id, whether it is configured and seals, how many stored values it seals, and which can be removed")
)

const rotate = answering("rotate", {
  batchSize: positiveIntFlag("batch-size").pipe(Flag.withDescription("rows read and written at a time"), Flag.withDefault(500))
}, ({ batchSize }) => Effect.flatMap(SealedSecrets, (s) => s.rotate(batchSize))).pipe(
  Command.withDescription(
    "Re-seal every stored secret and kept answer under the sealing key (the first of SECRET_KEYS), safely while the service runs; counts per column"
  )
)

export const keysCommand = Command.make("keys").pipe(
  Command.withDescription("The master keys of secrets at rest (SECRET_KEYS, SECRET_KEY)"),
  Command.withSubcommands([list, rotate])
)
