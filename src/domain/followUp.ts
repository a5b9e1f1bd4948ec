// Follow-up tasks as pure rules (SPEC §2.6, §3.1; DECISIONS §4, §5, §7): the transitions and the
// lock with its lease, the numeric codes of the task detail, plan days and their dates.
import { Education, MaritalStatus } from "./guestFields.js"
import { INCOME_LEVELS } from "./income.js"
import { AREAS, CITIES, PROVINCES } from "./regions.js"

export const TASK_STATUSES = ["pending", "dispatched", "completed", "failed", "skipped"] as const
export type TaskStatus = (typeof TASK_STATUSES)[number]
export const TASK_TYPES = ["recommend", "revisit", "reactivate"] as const
export type TaskType = (typeof TASK_TYPES)[number]
export type TaskAction = "dispatch" | "complete" | "fail" | "skip"

/** What the rules need of a stored task. */
export interface TaskLockState {
  readonly status: TaskStatus
  readonly dispatchedTo: string | null
  readonly dispatchedAtMs: number | null
}

/**
 * A lock older than the lease may be taken by another client. The cutoff is the same comparison
 * the SQL makes (`dispatched_at < now - lease` is expired).
 */
export const isLockExpired = (task: TaskLockState, nowMs: number, leaseMs: number): boolean =>
  task.status === "dispatched" && task.dispatchedAtMs !== null && task.dispatchedAtMs < nowMs - leaseMs

/**
 * The status a client sees: a dispatched task whose lease ran out is `pending` again (it is listed
 * with the pending tasks and anyone may dispatch it), although the row keeps its last holder until
 * then, so that holder can still finish it if nobody took it over.
 */
export const effectiveStatus = (task: TaskLockState, nowMs: number, leaseMs: number): TaskStatus =>
  isLockExpired(task, nowMs, leaseMs) ? "pending" : task.status

/** The final state each report leads to. */
export const FINAL_STATE_OF: Readonly<Record<Exclude<TaskAction, "dispatch">, TaskStatus>> = {
  complete: "completed",
  fail: "failed",
  skip: "skipped"
}

export type Decision =
  | { readonly _tag: "Apply" }
  | { readonly _tag: "Idempotent" }
  | { readonly _tag: "InvalidTransition"; readonly status: TaskStatus }
  | { readonly _tag: "Locked"; readonly holder: string }

const apply: Decision = { _tag: "Apply" }
const idempotent: Decision = { _tag: "Idempotent" }
const invalid = (status: TaskStatus): Decision => ({ _tag: "InvalidTransition", status })
const locked = (holder: string): Decision => ({ _tag: "Locked", holder })

/**
 * What an action by `caller` does to a task (SPEC §3.1 with DECISIONS §5's additions):
 * - dispatch: pending → a new lock; the holder's repeat while the lease runs → the same lock
 *   (idempotent); another client's → 409 while the lease runs, a new lock once it has run out;
 *   a final state → 400.
 * - complete / fail: only the holder, on a dispatched task (even past the lease, as long as nobody
 *   took it over); another client while the lock is live → 409; a task back to pending (never
 *   dispatched, or its lease ran out) → 400; the same final state again → idempotent for the client
 *   that reached it, 409 for any other; another final state → 400.
 * - skip: any client, from pending or dispatched; skipped again → idempotent; completed or
 *   failed → 400.
 */
export const decide = (action: TaskAction, task: TaskLockState, caller: string, nowMs: number, leaseMs: number): Decision => {
  const expired = isLockExpired(task, nowMs, leaseMs)
  const holder = task.dispatchedTo
  switch (action) {
    case "dispatch":
      if (task.status === "pending") return apply
      if (task.status !== "dispatched") return invalid(task.status)
      if (holder === caller) return expired ? apply : idempotent
      return expired || holder === null ? apply : locked(holder)
    case "complete":
    case "fail": {
      const target = FINAL_STATE_OF[action]
      if (task.status === "dispatched") {
        if (holder === caller) return apply
        return expired || holder === null ? invalid("pending") : locked(holder)
      }
      if (task.status === target) return holder === caller ? idempotent : holder === null ? invalid(task.status) : locked(holder)
      return invalid(task.status)
    }
    case "skip":
      if (task.status === "pending" || task.status === "dispatched") return apply
      return task.status === "skipped" ? idempotent : invalid(task.status)
  }
}

// Numeric codes of the task detail (DECISIONS §4).

export const genderCode = (gender: "male" | "female"): 1 | 2 => (gender === "male" ? 1 : 2)

const code = <A extends string>(values: ReadonlyArray<A>) => (value: A | null): number | null => {
  if (value === null) return null
  const i = values.indexOf(value)
  return i === -1 ? null : i + 1
}

/** 1 高中及以下 … 5 博士. */
export const educationLevel = code<typeof Education.Type>(Education.literals)
/** 1 10万以下 … 6 100万以上. */
export const incomeLevelNumber = code<(typeof INCOME_LEVELS)[number]>(INCOME_LEVELS)
/** 1 未婚, 2 离异, 3 丧偶. */
export const marriageStatusCode = code<typeof MaritalStatus.Type>(MaritalStatus.literals)

/** has_children / has_car / has_house: 1 yes, 0 no, null unknown. */
export const yesNoCode = (value: "yes" | "no" | null): 0 | 1 | null => (value === null ? null : value === "yes" ? 1 : 0)

// The city of a guest brief. A guest has no city field of its own; the brief names the
// prefecture-level city of the guest's native place (its derived GB/T 2260 code).

const PROVINCE_NAMES = new Map(PROVINCES.map((p) => [p.code, p.name]))
const CITY_NAMES = new Map(CITIES.map((c) => [c.code, c.name]))
const AREA_NAMES = new Map(AREAS.map((a) => [a.code, a.name]))
/** City-level entries of the data that are placeholders, not cities. */
const MUNICIPAL_PLACEHOLDERS = new Set(["市辖区", "县"])
const COUNTY_PLACEHOLDER = "省直辖县级行政区划"

/**
 * The city a 6-digit region code lies in: the prefecture-level city (`430102` → 长沙市); the
 * municipality for its districts (`110105` → 北京市); the county-level city itself where a
 * province governs it directly (`429004` → 仙桃市, given its name); null for a province alone or
 * an unknown code.
 */
export const cityOfCode = (regionCode: string | null): string | null => {
  if (regionCode === null || !/^\d{6}$/.test(regionCode) || regionCode.endsWith("0000")) return null
  const city = CITY_NAMES.get(regionCode.slice(0, 4))
  if (city === undefined) return null
  if (MUNICIPAL_PLACEHOLDERS.has(city)) return PROVINCE_NAMES.get(regionCode.slice(0, 2)) ?? null
  if (city === COUNTY_PLACEHOLDER) return AREA_NAMES.get(regionCode) ?? null
  return city
}

// Plans: day numbers and dates (DECISIONS §7: scheduled_date = start + day − 1).

/** The largest day number of a plan (ten years) and the most days one plan may hold. */
export const MAX_PLAN_DAY = 3650
export const MAX_PLAN_DAYS = 366

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/

/** A real calendar date `YYYY-MM-DD`. */
export const isDate = (text: string): boolean => {
  const m = DATE.exec(text)
  if (m === null) return false
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return d.toISOString().slice(0, 10) === text
}

/** `date` plus `n` days (calendar arithmetic, no time zone involved). */
export const addDays = (date: string, n: number): string => {
  const m = DATE.exec(date)
  if (m === null) throw new Error(`not a date: ${date}`)
  return new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + n)).toISOString().slice(0, 10)
}

/** The date a plan day falls on: day 1 is the start date. */
export const scheduledDate = (start: string, day: number): string => addDays(start, day - 1)

/** `1,3,7` → [1, 3, 7]: distinct day numbers in order, each 1…MAX_PLAN_DAY; or what is wrong. */
export const parseDays = (
  text: string
): { readonly _tag: "Right"; readonly days: ReadonlyArray<number> } | { readonly _tag: "Left"; readonly message: string } => {
  const parts = text.split(",").map((s) => s.trim())
  const days = new Set<number>()
  for (const part of parts) {
    if (!/^\d{1,5}$/.test(part) || Number(part) < 1 || Number(part) > MAX_PLAN_DAY) {
      return { _tag: "Left", message: `days must be day numbers from 1 to ${MAX_PLAN_DAY} separated by commas, got "${part}"` }
    }
    days.add(Number(part))
  }
  if (days.size > MAX_PLAN_DAYS) return { _tag: "Left", message: `a plan holds at most ${MAX_PLAN_DAYS} days` }
  return { _tag: "Right", days: [...days].sort((a, b) => a - b) }
}
