// What the follow-up service relies on from FollowUpsRepo (the lock, the reports, plans and
// generation; not the list or detail pages), run against the real repository (integration) and
// its in-memory fake (unit). Times are the caller's (`nowMs`), as the service passes its clock.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { scheduledDate } from "../../src/domain/followUp.js"
import { deriveGuest } from "../../src/domain/guest.js"
import * as Scopes from "../../src/domain/scope.js"
import { FollowUpsRepo } from "../../src/repos/FollowUpsRepo.js"
import { GuestsRepo } from "../../src/repos/GuestsRepo.js"
import { ContractSeed } from "./seed.js"

const LEASE = 30 * 60_000
const T0 = Date.UTC(2026, 5, 1, 2, 0, 0)
let seq = 0

const noResult = { matched_guest_id: null, match_score: null, share_link: null, share_channel: null, extra: null }

/** A guest of a new company and matchmaker, and a plan for it from `start` with these days. */
const planFor = (start: string, days: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const seed = yield* ContractSeed
    const company = yield* seed.company
    const matchmaker = yield* seed.matchmaker(company)
    const guest = yield* (yield* GuestsRepo).insert(
      deriveGuest({ name: `跟进嘉宾${seq++}`, gender: "female", company_id: company, matchmaker_id: matchmaker }, undefined)
    )
    const planId = Option.getOrThrow(
      yield* (yield* FollowUpsRepo).insertPlan({
        guestId: guest.id,
        taskType: "recommend",
        startDate: start,
        days,
        firstDate: scheduledDate(start, days[0]!)
      })
    )
    return { company, matchmaker, guest, planId }
  })

/** A plan whose only task (day 1) is generated: its id. */
const oneTask = Effect.gen(function*() {
  const start = "2026-03-01"
  const plan = yield* planFor(start, [1])
  yield* (yield* FollowUpsRepo).generateBatch(start, plan.planId)
  const [task] = yield* (yield* ContractSeed).followUpTasks(plan.planId)
  return { ...plan, taskId: task!.id }
})

export const followUpsRepoContract = (name: string, repo: Layer.Layer<FollowUpsRepo | GuestsRepo | ContractSeed>) =>
  layer(repo)(`FollowUpsRepo contract (${name})`, (it) => {
    it.effect("a plan takes its guest's matchmaker; an unknown guest makes none; plans list newest first with task count and next date", () =>
      Effect.gen(function*() {
        const repo = yield* FollowUpsRepo
        const { guest, matchmaker, planId } = yield* planFor("2026-03-01", [2, 5])
        const second = Option.getOrThrow(
          yield* repo.insertPlan({ guestId: guest.id, taskType: "revisit", startDate: "2026-04-01", days: [1], firstDate: "2026-04-01" })
        )
        expect(second).toBeGreaterThan(planId)
        const unknown = yield* repo.insertPlan({
          guestId: guest.id + 1000,
          taskType: "recommend",
          startDate: "2026-03-01",
          days: [1],
          firstDate: "2026-03-01"
        })
        expect(Option.isNone(unknown)).toBe(true)
        const plans = yield* repo.plans(Scopes.all, guest.id)
        expect(plans.map((p) => p.id)).toEqual([second, planId])
        expect(plans[1]).toMatchObject({
          guest_id: guest.id,
          guest_name: guest.name,
          matchmaker_id: matchmaker,
          task_type: "recommend",
          start_date: "2026-03-01",
          days: [2, 5],
          next_date: "2026-03-02",
          task_count: 0
        })
        expect((yield* repo.plans(Scopes.all, null)).map((p) => p.id)).toEqual(expect.arrayContaining([second, planId]))
      }))

    it.effect("generateDue creates each day scheduled up to today once, with the guest's company, and moves next_date past today", () =>
      Effect.gen(function*() {
        const repo = yield* FollowUpsRepo
        const seed = yield* ContractSeed
        const { company, guest, matchmaker, planId } = yield* planFor("2026-03-01", [1, 3, 7])
        const [first, second] = (yield* seed.followUpTasks(planId)).map((t) => t.id)
        expect(first).toBeUndefined()
        const made = yield* repo.generateBatch("2026-03-03", planId)
        expect(made).toEqual({ created: (yield* seed.followUpTasks(planId)).map((t) => t.id), plans: 1 })
        expect([made.created.length, second]).toEqual([2, undefined])
        expect(yield* seed.followUpTasks(planId)).toMatchObject([
          { task_day: 1, scheduled_date: "2026-03-01", company_id: company, matchmaker_id: matchmaker },
          { task_day: 3, scheduled_date: "2026-03-03", company_id: company, matchmaker_id: matchmaker }
        ])
        expect((yield* repo.plans(Scopes.all, guest.id))[0]).toMatchObject({ next_date: "2026-03-07", task_count: 2 })
        // Not due again until next_date.
        expect(yield* repo.generateBatch("2026-03-06", planId)).toEqual({ created: [], plans: 0 })
        expect(yield* repo.generateBatch("2026-03-20", planId)).toMatchObject({ created: [expect.any(Number)], plans: 1 })
        expect((yield* repo.plans(Scopes.all, guest.id))[0]).toMatchObject({ next_date: null, task_count: 3 })
        expect(yield* repo.generateBatch("2026-03-21", planId)).toEqual({ created: [], plans: 0 })
      }))

    it.effect("generateOnDate creates the tasks scheduled on that date exactly, once", () =>
      Effect.gen(function*() {
        const repo = yield* FollowUpsRepo
        const { planId } = yield* planFor("2031-01-01", [1, 2, 3])
        const made = yield* repo.generateOnDate("2031-01-02")
        expect(yield* repo.generateOnDate("2031-01-02")).toEqual([])
        const tasks = yield* (yield* ContractSeed).followUpTasks(planId)
        expect(tasks.map((t) => t.task_day)).toEqual([2])
        expect(made).toEqual(tasks.map((t) => t.id))
      }))

    it.effect("dispatch locks a pending task at now; the holder's repeat keeps the lock; others get none until the lease runs out", () =>
      Effect.gen(function*() {
        const repo = yield* FollowUpsRepo
        const { taskId } = yield* oneTask
        const first = Option.getOrThrow(yield* repo.dispatch(taskId, "ak_a", T0, LEASE))
        expect(first).toMatchObject({ id: taskId, dispatched_to: "ak_a", idempotent: false })
        expect(Option.getOrThrow(yield* repo.lockState(Scopes.all, taskId))).toEqual({
          status: "dispatched",
          dispatched_to: "ak_a",
          dispatched_at: new Date(T0)
        })
        expect(Option.isNone(yield* repo.dispatch(taskId, "ak_b", T0 + 1000, LEASE))).toBe(true)
        const repeat = Option.getOrThrow(yield* repo.dispatch(taskId, "ak_a", T0 + 60_000, LEASE))
        expect(repeat).toEqual({ ...first, idempotent: true })
        const taken = Option.getOrThrow(yield* repo.dispatch(taskId, "ak_b", T0 + LEASE + 1, LEASE))
        expect(taken).toMatchObject({ dispatched_to: "ak_b", idempotent: false })
        expect((yield* repo.lockState(Scopes.all, taskId)).pipe(Option.getOrThrow).dispatched_at).toEqual(new Date(T0 + LEASE + 1))
        expect(Option.isNone(yield* repo.dispatch(taskId, "ak_a", T0 + LEASE + 2, LEASE))).toBe(true)
      }))

    it.effect("the holder's dispatch after its own lease ran out is a new lock from now", () =>
      Effect.gen(function*() {
        const repo = yield* FollowUpsRepo
        const { taskId } = yield* oneTask
        yield* repo.dispatch(taskId, "ak_a", T0, LEASE)
        const again = Option.getOrThrow(yield* repo.dispatch(taskId, "ak_a", T0 + LEASE + 5000, LEASE))
        expect(again.idempotent).toBe(false)
        expect(Option.getOrThrow(yield* repo.lockState(Scopes.all, taskId)).dispatched_at).toEqual(new Date(T0 + LEASE + 5000))
      }))

    it.effect("complete is the holder's alone (even after its lease) and answers the completed task; then nobody completes it", () =>
      Effect.gen(function*() {
        const repo = yield* FollowUpsRepo
        const { company, guest, planId, taskId } = yield* oneTask
        expect(Option.isNone(yield* repo.complete(taskId, "ak_a", noResult, T0))).toBe(true)
        yield* repo.dispatch(taskId, "ak_a", T0, LEASE)
        expect(Option.isNone(yield* repo.complete(taskId, "ak_b", noResult, T0 + 1000))).toBe(true)
        const input = {
          matched_guest_id: guest.id,
          match_score: 87.5,
          share_link: "https://x.example/s",
          share_channel: "wechat",
          extra: { k: [1] }
        }
        const done = Option.getOrThrow(yield* repo.complete(taskId, "ak_a", input, T0 + LEASE + 1000))
        expect(done).toMatchObject({
          id: taskId,
          follow_up_id: planId,
          guest_id: guest.id,
          company_id: company,
          task_type: "recommend",
          task_day: 1,
          scheduled_date: "2026-03-01",
          dispatched_to: "ak_a",
          ...input
        })
        expect(Option.getOrThrow(yield* repo.lockState(Scopes.all, taskId))).toMatchObject({ status: "completed", dispatched_to: "ak_a" })
        expect(Option.isNone(yield* repo.complete(taskId, "ak_a", noResult, T0 + LEASE + 2000))).toBe(true)
      }))

    it.effect("fail is the holder's alone; skip takes a pending or dispatched task and never a finished one", () =>
      Effect.gen(function*() {
        const repo = yield* FollowUpsRepo
        const a = yield* oneTask
        const err = { error_code: "E1", error_msg: "no answer" }
        expect(yield* repo.fail(a.taskId, "ak_a", err, T0)).toBe(false)
        yield* repo.dispatch(a.taskId, "ak_a", T0, LEASE)
        expect(yield* repo.fail(a.taskId, "ak_b", err, T0)).toBe(false)
        expect(yield* repo.fail(a.taskId, "ak_a", err, T0)).toBe(true)
        expect(Option.getOrThrow(yield* repo.lockState(Scopes.all, a.taskId)).status).toBe("failed")
        expect(yield* repo.skip(a.taskId, "late", T0)).toBe(false)
        const pending = yield* oneTask
        expect(yield* repo.skip(pending.taskId, null, T0)).toBe(true)
        expect(yield* repo.skip(pending.taskId, null, T0)).toBe(false)
        const dispatched = yield* oneTask
        yield* repo.dispatch(dispatched.taskId, "ak_a", T0, LEASE)
        expect(yield* repo.skip(dispatched.taskId, "by anyone", T0)).toBe(true)
        expect(Option.getOrThrow(yield* repo.lockState(Scopes.all, dispatched.taskId))).toMatchObject({
          status: "skipped",
          dispatched_to: "ak_a"
        })
      }))

    it.effect("unknown tasks have no lock state and take no action; guestExists tells guests apart", () =>
      Effect.gen(function*() {
        const repo = yield* FollowUpsRepo
        const { guest, taskId } = yield* oneTask
        const unknown = taskId + 100_000
        expect(Option.isNone(yield* repo.lockState(Scopes.all, unknown))).toBe(true)
        expect(Option.isNone(yield* repo.dispatch(unknown, "ak_a", T0, LEASE))).toBe(true)
        expect(yield* repo.skip(unknown, null, T0)).toBe(false)
        expect(yield* repo.guestExists(Scopes.all, guest.id)).toBe(true)
        expect(yield* repo.guestExists(Scopes.all, guest.id + 100_000)).toBe(false)
      }))

    it.effect("a scoped read (DECISIONS §14) sees only its companies' tasks, guests and plans; an unscoped one sees all", () =>
      Effect.gen(function*() {
        const repo = yield* FollowUpsRepo
        const mine = yield* oneTask
        const theirs = yield* oneTask
        const scope = Scopes.of([mine.company])
        expect(Option.isSome(yield* repo.lockState(scope, mine.taskId))).toBe(true)
        expect(Option.isNone(yield* repo.lockState(scope, theirs.taskId))).toBe(true)
        expect(Option.isSome(yield* repo.lockState(Scopes.all, theirs.taskId))).toBe(true)
        expect(yield* repo.guestExists(scope, mine.guest.id)).toBe(true)
        expect(yield* repo.guestExists(scope, theirs.guest.id)).toBe(false)
        expect((yield* repo.plans(scope, null)).map((p) => p.id)).toEqual([mine.planId])
        expect(yield* repo.plans(scope, theirs.guest.id)).toEqual([])
        expect((yield* repo.plans(Scopes.all, theirs.guest.id)).map((p) => p.id)).toEqual([theirs.planId])
      }))
  })
