// Status rules of matches, memberships and activities (DECISIONS §5), and the matchmakers a match
// counts for (§6).
import { describe, expect, it } from "@effect/vitest"

import {
  type ActivityStatus,
  type AuditStatus,
  type OperatorAction,
  operatorMove,
  statusByTime,
  windowIsValid
} from "../../src/domain/activities.js"
import { matchMove, MatchStatus, type Move } from "../../src/domain/matches.js"
import { membershipMove, type MembershipStatus, validPlanDays } from "../../src/domain/memberships.js"

describe("match status moves", () => {
  const allowed = new Set([
    "pending>pending_date",
    "pending>rejected",
    "pending>closed",
    "pending_date>dating",
    "pending_date>rejected",
    "pending_date>closed",
    "dating>completed",
    "dating>rejected",
    "dating>closed"
  ])
  for (const from of MatchStatus.literals) {
    for (const to of MatchStatus.literals) {
      const expected: Move = from === to ? "unchanged" : allowed.has(`${from}>${to}`) ? "allowed" : "invalid"
      it(`${from} → ${to} is ${expected}`, () => expect(matchMove(from, to)).toBe(expected))
    }
  }
})

describe("membership status moves", () => {
  const table: ReadonlyArray<readonly [MembershipStatus, MembershipStatus, Move]> = [
    ["active", "cancelled", "allowed"],
    ["active", "expired", "allowed"],
    ["cancelled", "cancelled", "unchanged"],
    ["expired", "cancelled", "invalid"],
    ["cancelled", "active", "invalid"],
    ["expired", "active", "invalid"]
  ]
  for (const [from, to, expected] of table) it(`${from} → ${to} is ${expected}`, () => expect(membershipMove(from, to)).toBe(expected))

  it("a plan lasts a whole number of days from 1 to 36500", () => {
    expect([1, 30, 36_500].map(validPlanDays)).toEqual([true, true, true])
    expect([0, -1, 1.5, 36_501, Number.NaN].map(validPlanDays)).toEqual([false, false, false, false, false])
  })
})

describe("the operator's activity moves", () => {
  const table: ReadonlyArray<
    readonly [ActivityStatus, AuditStatus, OperatorAction, { status: ActivityStatus; audit_status: AuditStatus } | "unchanged" | "refused"]
  > = [
    ["draft", "pending", "approve", { status: "draft", audit_status: "approved" }],
    ["draft", "pending", "reject", { status: "draft", audit_status: "rejected" }],
    ["draft", "rejected", "approve", { status: "draft", audit_status: "approved" }],
    ["draft", "approved", "reject", { status: "draft", audit_status: "rejected" }],
    ["draft", "approved", "approve", "unchanged"],
    ["draft", "approved", "open", { status: "registering", audit_status: "approved" }],
    ["draft", "pending", "open", "refused"],
    ["draft", "rejected", "open", "refused"],
    ["registering", "approved", "open", "unchanged"],
    ["registering", "approved", "reject", "refused"],
    ["ongoing", "approved", "open", "refused"],
    ["ended", "approved", "open", "refused"]
  ]
  for (const [status, audit, action, expected] of table) {
    it(`${action} on ${status}/${audit} → ${typeof expected === "string" ? expected : `${expected.status}/${expected.audit_status}`}`, () => {
      const outcome = operatorMove({ status, audit_status: audit }, action)
      if (expected === "unchanged") expect(outcome._tag).toBe("Unchanged")
      else if (expected === "refused") expect(outcome._tag).toBe("Refused")
      else expect(outcome).toEqual({ _tag: "Next", state: expected })
    })
  }
})

describe("the daemon's activity moves by time", () => {
  const t = (minutes: number) => new Date(Date.UTC(2030, 0, 1, 12, minutes))
  const now = t(0)
  const table: ReadonlyArray<readonly [string, ActivityStatus, number, number, ActivityStatus]> = [
    ["registering before its start stays", "registering", 10, 20, "registering"],
    ["registering at its start becomes ongoing", "registering", 0, 20, "ongoing"],
    ["registering past its end goes straight to ended", "registering", -20, -10, "ended"],
    ["ongoing before its end stays", "ongoing", -10, 10, "ongoing"],
    ["ongoing at its end becomes ended", "ongoing", -10, 0, "ended"],
    ["a draft never moves by time", "draft", -20, -10, "draft"],
    ["ended stays ended", "ended", -20, -10, "ended"]
  ]
  for (const [name, status, start, end, expected] of table) {
    it(name, () => expect(statusByTime(status, t(start), t(end), now)).toBe(expected))
  }

  it("end_time must be after start_time", () => {
    expect(windowIsValid("2030-01-01 10:00:00", "2030-01-01 10:00:01")).toBe(true)
    expect(windowIsValid("2030-01-01 10:00:00", "2030-01-01 10:00:00")).toBe(false)
    expect(windowIsValid("2030-01-02 10:00:00", "2030-01-01 23:00:00")).toBe(false)
  })
})
