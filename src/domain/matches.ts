// Match rules of DECISIONS §5 and §6: the allowed status moves, which matches are open (one per
// pair), and the matchmakers whose counters a match moves.
import * as Schema from "effect/Schema"

/** A match's status (SPEC §2.10): the contract's field and the states of the moves below. */
export const MatchStatus = Schema.Literals(["pending", "pending_date", "dating", "completed", "rejected", "closed"])
export type MatchStatus = typeof MatchStatus.Type

/** Where each status may go; the final ones go nowhere. */
export const MATCH_MOVES: Readonly<Record<MatchStatus, ReadonlyArray<MatchStatus>>> = {
  pending: ["pending_date", "rejected", "closed"],
  pending_date: ["dating", "rejected", "closed"],
  dating: ["completed", "rejected", "closed"],
  completed: [],
  rejected: [],
  closed: []
}

/** A pair of guests has at most one match in these states (either order). */
export const OPEN_MATCH_STATUSES: ReadonlyArray<MatchStatus> = ["pending", "pending_date", "dating"]

export type Move = "unchanged" | "allowed" | "invalid"

/** Setting the current status again is a no-op; anything not in MATCH_MOVES is invalid. */
export const matchMove = (from: MatchStatus, to: MatchStatus): Move =>
  from === to ? "unchanged" : MATCH_MOVES[from].includes(to) ? "allowed" : "invalid"
