// Operator commands for memberships (DECISIONS §3): `membership-plans create|list` and
// `memberships cancel ID`.
import * as Effect from "effect/Effect"

import { Memberships } from "../services/Memberships.js"

/** A new plan; prints `{id, name, days}`. */
export const createPlan = (name: string, days: number) => Effect.flatMap(Memberships, (m) => m.createPlan(name, days))

/** Every plan, seeded ones first. */
export const listPlans = Effect.flatMap(Memberships, (m) => m.plans)

/** active → cancelled; prints the membership. */
export const cancelMembership = (id: number) => Effect.flatMap(Memberships, (m) => m.cancel(id))
