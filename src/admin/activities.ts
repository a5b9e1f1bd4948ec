// Operator commands for activities (DECISIONS §3): `activities approve|reject|open ID`.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import type { OperatorAction } from "../domain/activities.js"
import { Activities } from "../services/Activities.js"

export const ActivityAction: Schema.Schema<OperatorAction> = Schema.Literal("approve", "reject", "open")

/** Audits (approve/reject) a draft or opens an approved one; prints the activity as it is after. */
export const activityCommand = (action: OperatorAction, id: number) => Effect.flatMap(Activities, (a) => a.operate(id, action))
