// Operator commands for activities (DECISIONS §3): `activities approve|reject|open ID`; each
// prints the activity as it is after.
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"

import type { OperatorAction } from "../domain/activities.js"
import { Activities } from "../services/Activities.js"
import { answering, idArgument } from "./cli.js"

const action = (name: OperatorAction, description: string) =>
  answering(name, { id: idArgument() }, ({ id }) => Effect.flatMap(Activities, (a) => a.operate(id, name))).pipe(
    Command.withDescription(description)
  )

export const activitiesCommand = Command.make("activities").pipe(
  Command.withDescription("Activities: audit drafts and open approved ones"),
  Command.withSubcommands([
    action("approve", "Approve a draft"),
    action("reject", "Reject a draft"),
    action("open", "Open an approved activity for registration")
  ])
)
