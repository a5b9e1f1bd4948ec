// Activity rules of DECISIONS §4 and §5: the operator's audit and opening, the time window, and
// which quota and fee a guest's gender picks.
import * as Schema from "effect/Schema"

/** An activity's status and its audit's (SPEC §2.9, §3.3): the contract's fields and the states below. */
export const ActivityStatus = Schema.Literals(["draft", "registering", "ongoing", "ended"])
export type ActivityStatus = typeof ActivityStatus.Type
export const AuditStatus = Schema.Literals(["pending", "approved", "rejected"])
export type AuditStatus = typeof AuditStatus.Type

export type OperatorAction = "approve" | "reject" | "open"

export interface ActivityState {
  readonly status: ActivityStatus
  readonly audit_status: AuditStatus
}

/** The operator's move: the next state, "unchanged" (already there), or the reason it is refused. */
export type OperatorOutcome =
  | { readonly _tag: "Next"; readonly state: ActivityState }
  | { readonly _tag: "Unchanged" }
  | { readonly _tag: "Refused"; readonly reason: string }

const next = (state: ActivityState): OperatorOutcome => ({ _tag: "Next", state })
const unchanged: OperatorOutcome = { _tag: "Unchanged" }
const refused = (reason: string): OperatorOutcome => ({ _tag: "Refused", reason })

/**
 * approve / reject audit a draft (either may overturn the other before it opens); open moves an
 * approved draft to registering. Once open, the audit is settled and only the daemon moves it.
 */
export const operatorMove = (current: ActivityState, action: OperatorAction): OperatorOutcome => {
  switch (action) {
    case "approve":
    case "reject": {
      const audit: AuditStatus = action === "approve" ? "approved" : "rejected"
      if (current.audit_status === audit) return unchanged
      if (current.status !== "draft") return refused(`an activity in status ${current.status} is no longer audited`)
      return next({ ...current, audit_status: audit })
    }
    case "open": {
      if (current.status === "registering") return unchanged
      if (current.status !== "draft") return refused(`an activity in status ${current.status} cannot be opened`)
      if (current.audit_status !== "approved") return refused(`the activity's audit is ${current.audit_status}, not approved`)
      return next({ ...current, status: "registering" })
    }
  }
}

/** end_time must be after start_time (both `YYYY-MM-DD HH:MM:SS` in one zone, so text order is time order). */
export const windowIsValid = (startTime: string, endTime: string): boolean => endTime > startTime

/** The status the daemon gives an activity at `now` (DECISIONS §5); drafts and ended ones stay. */
export const statusByTime = (status: ActivityStatus, start: Date, end: Date, now: Date): ActivityStatus => {
  if (status === "registering" && start <= now) return end <= now ? "ended" : "ongoing"
  if (status === "ongoing" && end <= now) return "ended"
  return status
}

/** The quota and fee columns a guest's gender picks. */
export const genderSide = (gender: "male" | "female") =>
  gender === "male"
    ? ({ quota: "male_quota", fee: "male_fee", registered: "male_registered" } as const)
    : ({ quota: "female_quota", fee: "female_fee", registered: "female_registered" } as const)
