// Operator commands for memberships (DECISIONS §3): `membership-plans create|list` and
// `memberships cancel ID`.
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"

import { Memberships } from "../services/Memberships.js"
import { answering, idArgument, positiveIntFlag, withFlags } from "./cli.js"

/** A new plan; prints `{id, name, days}`. */
const createPlan = answering("create", {
  name: Flag.String("name").pipe(Flag.withDescription("the plan's name")),
  days: positiveIntFlag("days").pipe(Flag.withDescription("how long a membership lasts"))
}, ({ days, name }) => Effect.flatMap(Memberships, (m) => m.createPlan(name, days)).pipe(withFlags({ name: "--name", days: "--days" })))
  .pipe(
    Command.withDescription("Create a membership plan")
  )

/** Every plan, seeded ones first. */
const listPlans = answering("list", {}, () => Effect.flatMap(Memberships, (m) => m.plans)).pipe(
  Command.withDescription("Every membership plan")
)

export const membershipPlansCommand = Command.make("membership-plans").pipe(
  Command.withDescription("Membership plans"),
  Command.withSubcommands([createPlan, listPlans])
)

/** active → cancelled; prints the membership. */
const cancel = answering("cancel", { id: idArgument() }, ({ id }) => Effect.flatMap(Memberships, (m) => m.cancel(id))).pipe(
  Command.withDescription("Cancel an active membership")
)

export const membershipsCommand = Command.make("memberships").pipe(
  Command.withDescription("Memberships"),
  Command.withSubcommands([cancel])
)
