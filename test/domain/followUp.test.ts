// The follow-up rules as tables: every transition of SPEC §3.1 with DECISIONS §5's lock and lease,
// the numeric codes of DECISIONS §4, the brief's city, and plan days and dates.
import { describe, expect, it } from "vitest"

import {
  addDays,
  cityOfCode,
  decide,
  type Decision,
  educationLevel,
  effectiveStatus,
  genderCode,
  incomeLevelNumber,
  isDate,
  marriageStatusCode,
  parseDays,
  scheduledDate,
  type TaskAction,
  type TaskLockState,
  yesNoCode
} from "../../src/domain/followUp.js"

const LEASE = 7200_000
const NOW = 1_700_000_000_000

const pending: TaskLockState = { status: "pending", dispatchedTo: null, dispatchedAtMs: null }
const heldBy = (holder: string, ageMs = 1000): TaskLockState => ({
  status: "dispatched",
  dispatchedTo: holder,
  dispatchedAtMs: NOW - ageMs
})
const finished = (status: "completed" | "failed" | "skipped", holder: string | null): TaskLockState => ({
  status,
  dispatchedTo: holder,
  dispatchedAtMs: holder === null ? null : NOW - 5000
})

const APPLY: Decision = { _tag: "Apply" }
const IDEMPOTENT: Decision = { _tag: "Idempotent" }
const invalid = (status: TaskLockState["status"]): Decision => ({ _tag: "InvalidTransition", status })
const locked = (holder: string): Decision => ({ _tag: "Locked", holder })

const expiredA = heldBy("A", LEASE + 1)
const exactlyLeaseA = heldBy("A", LEASE)

describe("follow-up task transitions", () => {
  const table: ReadonlyArray<readonly [string, TaskAction, TaskLockState, string, Decision]> = [
    // dispatch
    ["pending → dispatched", "dispatch", pending, "A", APPLY],
    ["the holder's repeat is the same lock", "dispatch", heldBy("A"), "A", IDEMPOTENT],
    ["another client while the lock is live → 409", "dispatch", heldBy("A"), "B", locked("A")],
    ["a lock exactly as old as the lease still holds", "dispatch", exactlyLeaseA, "B", locked("A")],
    ["a lock older than the lease may be taken over", "dispatch", expiredA, "B", APPLY],
    ["the holder of an expired lock takes a new one", "dispatch", expiredA, "A", APPLY],
    ["dispatch of a completed task → 400", "dispatch", finished("completed", "A"), "A", invalid("completed")],
    ["dispatch of a failed task → 400", "dispatch", finished("failed", "A"), "B", invalid("failed")],
    ["dispatch of a skipped task → 400", "dispatch", finished("skipped", null), "A", invalid("skipped")],
    // complete
    ["complete by the holder", "complete", heldBy("A"), "A", APPLY],
    ["complete by the holder after the lease, nobody took it", "complete", expiredA, "A", APPLY],
    ["complete by another client while locked → 409", "complete", heldBy("A"), "B", locked("A")],
    ["complete by another client of an expired lock → 400 (it is pending again)", "complete", expiredA, "B", invalid("pending")],
    ["complete on pending → 400", "complete", pending, "A", invalid("pending")],
    ["complete again by the client that completed → idempotent", "complete", finished("completed", "A"), "A", IDEMPOTENT],
    ["complete again by another client → 409", "complete", finished("completed", "A"), "B", locked("A")],
    ["complete on failed → 400", "complete", finished("failed", "A"), "A", invalid("failed")],
    ["complete on skipped → 400", "complete", finished("skipped", "A"), "A", invalid("skipped")],
    // fail
    ["fail by the holder", "fail", heldBy("A"), "A", APPLY],
    ["fail by another client while locked → 409", "fail", heldBy("A"), "B", locked("A")],
    ["fail on pending → 400", "fail", pending, "B", invalid("pending")],
    ["fail again by the client that failed → idempotent", "fail", finished("failed", "A"), "A", IDEMPOTENT],
    ["fail on completed → 400", "fail", finished("completed", "A"), "A", invalid("completed")],
    ["fail on skipped → 400", "fail", finished("skipped", null), "A", invalid("skipped")],
    // skip
    ["skip from pending", "skip", pending, "A", APPLY],
    ["skip from dispatched by the holder", "skip", heldBy("A"), "A", APPLY],
    ["skip from dispatched by any client", "skip", heldBy("A"), "B", APPLY],
    ["skip again → idempotent, whoever asks", "skip", finished("skipped", null), "B", IDEMPOTENT],
    ["skip on completed → 400", "skip", finished("completed", "A"), "A", invalid("completed")],
    ["skip on failed → 400", "skip", finished("failed", "A"), "B", invalid("failed")]
  ]
  it.each(table)("%s", (_name, action, task, caller, expected) => {
    expect(decide(action, task, caller, NOW, LEASE)).toEqual(expected)
  })

  it("a dispatched task whose lease ran out is seen as pending; every other status as stored", () => {
    expect(effectiveStatus(expiredA, NOW, LEASE)).toBe("pending")
    expect(effectiveStatus(exactlyLeaseA, NOW, LEASE)).toBe("dispatched")
    expect(effectiveStatus(heldBy("A"), NOW, LEASE)).toBe("dispatched")
    expect(effectiveStatus(finished("completed", "A"), NOW + 10 * LEASE, LEASE)).toBe("completed")
    expect(effectiveStatus(pending, NOW, LEASE)).toBe("pending")
  })
})

describe("numeric codes of the task detail (DECISIONS §4)", () => {
  it.each(
    [
      ["male", 1],
      ["female", 2]
    ] as const
  )("gender %s → %i", (g, code) => expect(genderCode(g)).toBe(code))

  it.each(
    [
      ["高中及以下", 1],
      ["大专", 2],
      ["本科", 3],
      ["硕士", 4],
      ["博士", 5],
      [null, null]
    ] as const
  )("education %s → %s", (e, code) => expect(educationLevel(e)).toBe(code))

  it.each(
    [
      ["10万以下", 1],
      ["10-20万", 2],
      ["20-30万", 3],
      ["30-50万", 4],
      ["50-100万", 5],
      ["100万以上", 6],
      [null, null]
    ] as const
  )("income level %s → %s", (l, code) => expect(incomeLevelNumber(l)).toBe(code))

  it.each(
    [
      ["未婚", 1],
      ["离异", 2],
      ["丧偶", 3],
      [null, null]
    ] as const
  )("marital status %s → %s", (m, code) => expect(marriageStatusCode(m)).toBe(code))

  it.each(
    [
      ["yes", 1],
      ["no", 0],
      [null, null]
    ] as const
  )("has_* %s → %s", (v, code) => expect(yesNoCode(v)).toBe(code))
})

describe("the city of a guest brief (from the native place's region code)", () => {
  it.each(
    [
      ["430102", "长沙市"],
      ["430100", "长沙市"],
      ["440305", "深圳市"],
      ["110105", "北京市"],
      ["310115", "上海市"],
      ["500101", "重庆市"],
      ["429004", "仙桃市"],
      ["430000", null],
      ["990101", null],
      ["abc", null],
      [null, null]
    ] as const
  )("%s → %s", (code, city) => expect(cityOfCode(code)).toBe(city))
})

describe("plan days and dates", () => {
  it.each(
    [
      ["1,3,7", [1, 3, 7]],
      ["7, 3,1,3", [1, 3, 7]],
      ["1", [1]],
      ["3650", [3650]]
    ] as const
  )("days %s → %j", (text, days) => expect(parseDays(text)).toEqual({ _tag: "Right", days }))

  it.each(["", "0", "1,,3", "-1", "1.5", "a", "3651", "1;3"])("days %j are refused", (text) => {
    expect(parseDays(text)._tag).toBe("Left")
  })

  it("a plan holds at most 366 days", () => {
    expect(parseDays(Array.from({ length: 367 }, (_, i) => i + 1).join(","))._tag).toBe("Left")
    expect(parseDays(Array.from({ length: 366 }, (_, i) => i + 1).join(","))._tag).toBe("Right")
  })

  it.each(
    [
      ["2024-01-01", 1, "2024-01-01"],
      ["2024-01-01", 3, "2024-01-03"],
      ["2024-02-27", 4, "2024-03-01"],
      ["2023-02-27", 3, "2023-03-01"],
      ["2024-12-30", 7, "2025-01-05"]
    ] as const
  )("day %2$i of a plan starting %1$s is %3$s", (start, day, date) => expect(scheduledDate(start, day)).toBe(date))

  it("adds days across months and years", () => {
    expect(addDays("2024-03-01", -1)).toBe("2024-02-29")
    expect(addDays("2024-12-31", 1)).toBe("2025-01-01")
  })

  it.each(
    [
      ["2024-02-29", true],
      ["2023-02-29", false],
      ["2024-13-01", false],
      ["2024-1-01", false],
      ["20240101", false]
    ] as const
  )("%s is a date: %s", (text, ok) => expect(isDate(text)).toBe(ok))
})
