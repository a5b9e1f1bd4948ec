// Membership rules of DECISIONS §5: active → expired (the daemon, at expire_at) and active →
// cancelled (the operator); a renewal of an expired or cancelled one makes a new record.
import * as Schema from "effect/Schema"

import type { Move } from "./matches.js"

/** A membership's status (SPEC §2.11, §3.3): the contract's field and the states of the moves below. */
export const MembershipStatus = Schema.Literals(["active", "expired", "cancelled"])
export type MembershipStatus = typeof MembershipStatus.Type

export const MEMBERSHIP_MOVES: Readonly<Record<MembershipStatus, ReadonlyArray<MembershipStatus>>> = {
  active: ["expired", "cancelled"],
  expired: [],
  cancelled: []
}

export const membershipMove = (from: MembershipStatus, to: MembershipStatus): Move =>
  from === to ? "unchanged" : MEMBERSHIP_MOVES[from].includes(to) ? "allowed" : "invalid"

/** A plan's length in days as the operator gives it: a whole number from 1 to 36500 (100 years). */
export const validPlanDays = (days: number): boolean => Number.isInteger(days) && days >= 1 && days <= 36_500
