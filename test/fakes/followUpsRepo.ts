// An in-memory FollowUpsRepo over the fake database: plans and their tasks with the real
// repository's rules that the service relies on — the lock (a pending task, the holder's own
// repeat keeping its dispatched_at, or a task whose lease ran out; nothing for anyone else), the
// reports (complete and fail only by the holder of a dispatched task, lease or not; skip from
// pending or dispatched), one task per plan and day, generation up to a date moving next_date
// past it, and plans newest first. The list and the detail page are not faked (a test reaching
// them dies naming them). Checked against the real one by test/contracts/followUpsRepo.contract.ts.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { PlatformTimeZone } from "../../src/Config.js"
import { scheduledDate } from "../../src/domain/followUp.js"
import * as Scopes from "../../src/domain/scope.js"
import { formatIso, formatTimestamp } from "../../src/domain/time.js"
import { type CompletedRow, FollowUpsRepo, type PlanRow } from "../../src/repos/FollowUpsRepo.js"
import { FakeDb, type FakePlan, type FakeTask, nextId, now } from "./db.js"

export const makeFakeFollowUpsRepo = Effect.gen(function*() {
  const db = yield* FakeDb
  const iso = (ms: number) => Effect.map(PlatformTimeZone, (tz) => formatIso(new Date(ms), tz))
  const task = (id: number) => db.tables.followUpTasks.get(id)

  /** Inserts the plan's tasks for these days unless (plan, day) exists; the ids created. */
  const createTasks = (plan: FakePlan, days: ReadonlyArray<number>): Array<number> => {
    const guest = db.tables.guests.get(plan.guest_id)!
    const created: Array<number> = []
    for (const day of days) {
      const exists = [...db.tables.followUpTasks.values()].some((t) => t.plan_id === plan.id && t.task_day === day)
      if (exists) continue
      const t: FakeTask = {
        id: nextId(db, "followUpTasks"),
        plan_id: plan.id,
        guest_id: plan.guest_id,
        company_id: guest.state.company_id,
        matchmaker_id: plan.matchmaker_id,
        task_type: plan.task_type,
        task_day: day,
        scheduled_date: scheduledDate(plan.start_date, day),
        status: "pending",
        dispatched_to: null,
        dispatched_at: null,
        finished_at: null,
        matched_guest_id: null,
        match_score: null,
        share_link: null,
        share_channel: null,
        extra: null,
        error_code: null,
        error_msg: null,
        skip_reason: null
      }
      db.tables.followUpTasks.set(t.id, t)
      created.push(t.id)
    }
    return created
  }

  // One batch holds every due plan: the fake has no batch limit to page past.
  const generateBatch = (today: string, planId: number | null = null) =>
    Effect.sync(() => {
      const due = [...db.tables.followUpPlans.values()]
        .filter((p) => p.next_date !== null && p.next_date <= today && (planId === null || p.id === planId))
        .sort((a, b) => (a.next_date! < b.next_date! ? -1 : a.next_date! > b.next_date! ? 1 : a.id - b.id))
      const created: Array<number> = []
      for (const plan of due) {
        created.push(...createTasks(plan, plan.days.filter((d) => scheduledDate(plan.start_date, d) <= today)))
        const later = plan.days.map((d) => scheduledDate(plan.start_date, d)).filter((date) => date > today).sort()
        plan.next_date = later[0] ?? null
      }
      return { created, plans: due.length }
    })

  return FollowUpsRepo.of({
    list: () => Effect.die(new Error("FollowUpsRepo.list is not faked: list tests run against PostgreSQL")),
    detail: () => Effect.die(new Error("FollowUpsRepo.detail is not faked: detail tests run against PostgreSQL")),
    dispatch: (id, caller, nowMs, leaseMs) =>
      Effect.gen(function*() {
        const t = task(id)
        const cutoff = nowMs - leaseMs
        const due = t !== undefined &&
          (t.status === "pending" || (t.status === "dispatched" && (t.dispatched_to === caller || t.dispatched_at! < cutoff)))
        if (!due) return Option.none()
        const repeat = t.status === "dispatched" && t.dispatched_to === caller && t.dispatched_at! >= cutoff
        t.status = "dispatched"
        t.dispatched_to = caller
        if (!repeat) t.dispatched_at = nowMs
        return Option.some({ id, dispatched_at: yield* iso(t.dispatched_at!), dispatched_to: caller, idempotent: repeat })
      }),
    lockState: (scope, id) =>
      Effect.sync(() =>
        Option.map(Option.filter(Option.fromNullishOr(task(id)), (t) => Scopes.includes(scope, t.company_id)), (t) => ({
          status: t.status,
          dispatched_to: t.dispatched_to,
          dispatched_at: t.dispatched_at === null ? null : new Date(t.dispatched_at)
        }))
      ),
    complete: (id, caller, input, nowMs) =>
      Effect.gen(function*() {
        const t = task(id)
        if (t === undefined || t.status !== "dispatched" || t.dispatched_to !== caller) return Option.none<CompletedRow>()
        Object.assign(t, { status: "completed", ...structuredClone(input), finished_at: nowMs })
        const row: CompletedRow = {
          id: t.id,
          follow_up_id: t.plan_id,
          guest_id: t.guest_id,
          company_id: t.company_id,
          task_type: t.task_type,
          task_day: t.task_day,
          scheduled_date: t.scheduled_date,
          dispatched_to: caller,
          matched_guest_id: t.matched_guest_id,
          match_score: t.match_score,
          share_link: t.share_link,
          share_channel: t.share_channel,
          extra: structuredClone(t.extra),
          finished_at: yield* iso(nowMs)
        }
        return Option.some(row)
      }),
    fail: (id, caller, error, nowMs) =>
      Effect.sync(() => {
        const t = task(id)
        if (t === undefined || t.status !== "dispatched" || t.dispatched_to !== caller) return false
        Object.assign(t, { status: "failed", ...error, finished_at: nowMs })
        return true
      }),
    skip: (id, reason, nowMs) =>
      Effect.sync(() => {
        const t = task(id)
        if (t === undefined || (t.status !== "pending" && t.status !== "dispatched")) return false
        Object.assign(t, { status: "skipped", skip_reason: reason, finished_at: nowMs })
        return true
      }),
    guestExists: (scope, id) =>
      Effect.sync(() => {
        const guest = db.tables.guests.get(id)
        return guest !== undefined && Scopes.includes(scope, guest.state.company_id)
      }),
    insertPlan: (plan) =>
      Effect.gen(function*() {
        const guest = db.tables.guests.get(plan.guestId)
        if (guest === undefined) return Option.none()
        const row: FakePlan = {
          id: nextId(db, "followUpPlans"),
          guest_id: guest.id,
          matchmaker_id: guest.state.matchmaker_id,
          task_type: plan.taskType,
          start_date: plan.startDate,
          days: [...plan.days],
          next_date: plan.firstDate,
          created_at: yield* now
        }
        db.tables.followUpPlans.set(row.id, row)
        return Option.some(row.id)
      }),
    plans: (scope, guestId) =>
      Effect.map(PlatformTimeZone, (tz) =>
        [...db.tables.followUpPlans.values()]
          .filter((p) => guestId === null || p.guest_id === guestId)
          .filter((p) => Scopes.includes(scope, db.tables.guests.get(p.guest_id)?.state.company_id))
          .sort((a, b) => b.id - a.id)
          .map((p): PlanRow => ({
            id: p.id,
            guest_id: p.guest_id,
            guest_name: db.tables.guests.get(p.guest_id)!.state.name,
            matchmaker_id: p.matchmaker_id,
            task_type: p.task_type,
            start_date: p.start_date,
            days: [...p.days],
            next_date: p.next_date,
            task_count: [...db.tables.followUpTasks.values()].filter((t) => t.plan_id === p.id).length,
            created_at: formatTimestamp(new Date(p.created_at), tz)
          }))),
    generateBatch,
    generateOnDate: (date) =>
      Effect.sync(() => {
        const created: Array<number> = []
        for (const plan of db.tables.followUpPlans.values()) {
          if (plan.start_date > date) continue
          created.push(...createTasks(plan, plan.days.filter((d) => scheduledDate(plan.start_date, d) === date)))
        }
        return created.sort((a, b) => a - b)
      })
  })
})

export const FakeFollowUpsRepo: Layer.Layer<FollowUpsRepo, never, FakeDb> = Layer.effect(FollowUpsRepo, makeFakeFollowUpsRepo)

/** A task as stored (for assertions on what the service wrote). */
export const storedTask = (id: number) => Effect.map(FakeDb, (db) => structuredClone(db.tables.followUpTasks.get(id)))

/** The tasks of a plan as stored, by day. */
export const storedTasksOf = (planId: number) =>
  Effect.map(
    FakeDb,
    (db) =>
      [...db.tables.followUpTasks.values()].filter((t) => t.plan_id === planId).sort((a, b) => a.task_day - b.task_day).map((t) =>
        structuredClone(t)
      )
  )
