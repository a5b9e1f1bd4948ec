// The follow-up service's dispatch and report rules (DECISIONS §5, §7) over in-memory fakes of its
// repositories, time on the TestClock: no database, no network. The same rules end to end, with
// real row locks and races, are in test/followUps.test.ts and test/followUpDispatchRace.test.ts.
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"

import { appConfigWith } from "../../src/Config.js"
import * as Scopes from "../../src/domain/scope.js"
import { FollowUpsRepo } from "../../src/repos/FollowUpsRepo.js"
import { FollowUps } from "../../src/services/FollowUps.js"
import { makeFakeFollowUpsRepo, storedTask, storedTasksOf } from "../fakes/followUpsRepo.js"
import { recordedEvents } from "../fakes/outboxRepo.js"
import { seedGuest } from "../fakes/seed.js"
import { FakeStore } from "../fakes/store.js"

const LEASE_S = 1800
// 2026-11-24 12:00 in Asia/Shanghai.
const START = Date.UTC(2026, 10, 24, 4, 0, 0)

/** The service over a fresh fake store, the clock at START. */
const TestLayer = () =>
  FollowUps.layerWithoutDependencies.pipe(
    Layer.provideMerge(FakeStore),
    Layer.provideMerge(appConfigWith({ followUpLeaseSeconds: LEASE_S })),
    Layer.provideMerge(Layer.effectDiscard(TestClock.setTime(START)))
  )

const test = <A, E>(name: string, body: () => Effect.Effect<A, E, Layer.Success<ReturnType<typeof TestLayer>>>) =>
  it.effect(name, () => Effect.provide(body(), TestLayer()))

/** A guest with a plan starting today: its day-1 task exists at once. */
const taskToday = Effect.gen(function*() {
  const guest = yield* seedGuest()
  const plan = yield* (yield* FollowUps).createPlan(Scopes.all, {
    guestId: guest.id,
    taskType: "recommend",
    days: [1, 3],
    startDate: undefined
  })
  const [task] = yield* storedTasksOf(plan.id)
  return { guest, plan, taskId: task!.id }
})

const complete = (id: number, caller: string, body: { matched_guest_id?: number } = {}) =>
  Effect.flatMap(FollowUps, (f) => f.complete(Scopes.all, id, caller, body))

describe("follow-up service over fakes", () => {
  test("a plan starting today has its day-1 task at once; later days come as the clock reaches them", () =>
    Effect.gen(function*() {
      const followUps = yield* FollowUps
      const { plan } = yield* taskToday
      expect(plan).toMatchObject({ start_date: "2026-11-24", days: [1, 3], tasks_created: 1 })
      expect(yield* followUps.generateDue).toEqual({ date: "2026-11-24", created: 0, plans: 0 })
      yield* TestClock.adjust("2 days")
      expect(yield* followUps.generateDue).toEqual({ date: "2026-11-26", created: 1, plans: 1 })
      expect((yield* storedTasksOf(plan.id)).map((t) => [t.task_day, t.scheduled_date])).toEqual([[1, "2026-11-24"], [3, "2026-11-26"]])
    }))

  test("a plan for an unknown guest is 404 guest and creates nothing", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        (yield* FollowUps).createPlan(Scopes.all, { guestId: 999, taskType: "revisit", days: [1], startDate: undefined })
      )
      expect(error).toMatchObject({ _tag: "NotFound", resource: "guest" })
      expect(yield* (yield* FollowUps).listPlans(Scopes.all, undefined)).toEqual([])
    }))

  test("dispatch locks a pending task for the caller at now; another caller gets 409 task_locked naming the holder", () =>
    Effect.gen(function*() {
      const followUps = yield* FollowUps
      const { taskId } = yield* taskToday
      const lock = yield* followUps.dispatch(Scopes.all, taskId, "ak_a")
      expect(lock).toEqual({
        id: taskId,
        status: "dispatched",
        dispatched_to: "ak_a",
        dispatched_at: "2026-11-24T12:00:00",
        idempotent: false
      })
      const refused = yield* Effect.flip(followUps.dispatch(Scopes.all, taskId, "ak_b"))
      expect(refused).toMatchObject({ _tag: "TaskLocked", dispatched_to: "ak_a" })
    }))

  test("the holder's repeated dispatch within the lease is the same lock: idempotent, dispatched_at unchanged", () =>
    Effect.gen(function*() {
      const followUps = yield* FollowUps
      const { taskId } = yield* taskToday
      const first = yield* followUps.dispatch(Scopes.all, taskId, "ak_a")
      yield* TestClock.adjust(`${LEASE_S - 1} seconds`)
      expect(yield* followUps.dispatch(Scopes.all, taskId, "ak_a")).toEqual({ ...first, idempotent: true })
    }))

  test("when the lease runs out another caller takes the task, and the former holder is then locked out", () =>
    Effect.gen(function*() {
      const followUps = yield* FollowUps
      const { taskId } = yield* taskToday
      yield* followUps.dispatch(Scopes.all, taskId, "ak_a")
      yield* TestClock.adjust(`${LEASE_S + 1} seconds`)
      expect(yield* followUps.dispatch(Scopes.all, taskId, "ak_b")).toMatchObject({
        dispatched_to: "ak_b",
        dispatched_at: "2026-11-24T12:30:01"
      })
      expect(yield* Effect.flip(followUps.dispatch(Scopes.all, taskId, "ak_a"))).toMatchObject({
        _tag: "TaskLocked",
        dispatched_to: "ak_b"
      })
      expect(yield* Effect.flip(complete(taskId, "ak_a"))).toMatchObject({ _tag: "TaskLocked", dispatched_to: "ak_b" })
    }))

  test("complete by the holder stores the result, and the task's life is one event per change: created, dispatched, completed", () =>
    Effect.gen(function*() {
      const followUps = yield* FollowUps
      const { taskId } = yield* taskToday
      const other = yield* seedGuest({ name: "推荐对象" })
      yield* followUps.dispatch(Scopes.all, taskId, "ak_a")
      // The holder's repeat keeps the same lock: no second dispatched event.
      yield* followUps.dispatch(Scopes.all, taskId, "ak_a")
      yield* TestClock.adjust("5 minutes")
      const body = { matched_guest_id: other.id, match_score: 88, share_link: "https://x.example/s/1", share_channel: "wechat" }
      expect(yield* followUps.complete(Scopes.all, taskId, "ak_a", body)).toEqual({
        task_id: taskId,
        status: "completed",
        idempotent: false
      })
      expect(yield* storedTask(taskId)).toMatchObject({ status: "completed", dispatched_to: "ak_a", ...body, extra: null })
      const events = yield* recordedEvents
      expect(events.map((e) => [e.type, e.permission, e.data])).toEqual([
        ["follow_up.task_created", "open:follow-up:read", { id: taskId }],
        ["follow_up.task_dispatched", "open:follow-up:read", { id: taskId }],
        ["follow_up.task_completed", "open:follow-up:read", { id: taskId }]
      ])
    }))

  test("a repeated complete by the holder is idempotent and records no second event; by another caller it is 409", () =>
    Effect.gen(function*() {
      const followUps = yield* FollowUps
      const { taskId } = yield* taskToday
      yield* followUps.dispatch(Scopes.all, taskId, "ak_a")
      yield* complete(taskId, "ak_a")
      expect(yield* complete(taskId, "ak_a")).toEqual({ task_id: taskId, status: "completed", idempotent: true })
      expect(yield* Effect.flip(complete(taskId, "ak_b"))).toMatchObject({ _tag: "TaskLocked", dispatched_to: "ak_a" })
      expect((yield* recordedEvents).filter((e) => e.type === "follow_up.task_completed")).toHaveLength(1)
    }))

  test("complete naming the task's own guest is 400 and rolled back: the task stays dispatched, no event", () =>
    Effect.gen(function*() {
      const followUps = yield* FollowUps
      const { guest, taskId } = yield* taskToday
      yield* followUps.dispatch(Scopes.all, taskId, "ak_a")
      const refused = yield* Effect.flip(complete(taskId, "ak_a", { matched_guest_id: guest.id }))
      expect(refused).toMatchObject({ _tag: "InvalidInput" })
      expect(yield* storedTask(taskId)).toMatchObject({
        status: "dispatched",
        dispatched_to: "ak_a",
        finished_at: null,
        matched_guest_id: null
      })
      expect((yield* recordedEvents).filter((e) => e.type === "follow_up.task_completed")).toEqual([])
    }))

  test("complete of a pending task is 400 invalid_transition; of an unknown task 404; naming an unknown guest 404 guest", () =>
    Effect.gen(function*() {
      const { taskId } = yield* taskToday
      expect(yield* Effect.flip(complete(taskId, "ak_a"))).toMatchObject({
        _tag: "InvalidTransition",
        message: "cannot complete a task that is pending"
      })
      expect(yield* Effect.flip(complete(taskId + 100, "ak_a"))).toMatchObject({ _tag: "NotFound", resource: "follow_up_task" })
      expect(yield* Effect.flip(complete(taskId, "ak_a", { matched_guest_id: 999 }))).toMatchObject({ _tag: "NotFound", resource: "guest" })
    }))

  test("a holder whose lease ran out, not taken by anyone, may still complete; the task then reads completed", () =>
    Effect.gen(function*() {
      const followUps = yield* FollowUps
      const { taskId } = yield* taskToday
      yield* followUps.dispatch(Scopes.all, taskId, "ak_a")
      yield* TestClock.adjust(`${2 * LEASE_S} seconds`)
      expect(yield* complete(taskId, "ak_a")).toMatchObject({ status: "completed", idempotent: false })
      expect(yield* storedTask(taskId)).toMatchObject({ status: "completed", dispatched_to: "ak_a" })
    }))

  test("fail is the holder's: another caller gets 409; the holder's repeat is idempotent; then skip is 400", () =>
    Effect.gen(function*() {
      const followUps = yield* FollowUps
      const { taskId } = yield* taskToday
      yield* followUps.dispatch(Scopes.all, taskId, "ak_a")
      expect(yield* Effect.flip(followUps.fail(Scopes.all, taskId, "ak_b", {}))).toMatchObject({ _tag: "TaskLocked" })
      expect(yield* followUps.fail(Scopes.all, taskId, "ak_a", { error_code: "NO_REPLY" })).toEqual({
        task_id: taskId,
        status: "failed",
        idempotent: false
      })
      expect(yield* followUps.fail(Scopes.all, taskId, "ak_a", {})).toEqual({ task_id: taskId, status: "failed", idempotent: true })
      expect(yield* Effect.flip(followUps.skip(Scopes.all, taskId, "ak_b", {}))).toMatchObject({
        _tag: "InvalidTransition",
        message: "cannot skip a task that is failed"
      })
      expect(yield* storedTask(taskId)).toMatchObject({ error_code: "NO_REPLY", finished_at: START })
      expect((yield* recordedEvents).map((e) => e.type)).toEqual([
        "follow_up.task_created",
        "follow_up.task_dispatched",
        "follow_up.task_failed"
      ])
    }))

  test("skip is anyone's from pending or dispatched; skipping again is idempotent; dispatching a skipped task is 400", () =>
    Effect.gen(function*() {
      const followUps = yield* FollowUps
      const { taskId } = yield* taskToday
      yield* followUps.dispatch(Scopes.all, taskId, "ak_a")
      expect(yield* followUps.skip(Scopes.all, taskId, "ak_b", { reason: "guest paused" })).toEqual({
        task_id: taskId,
        status: "skipped",
        idempotent: false
      })
      expect(yield* followUps.skip(Scopes.all, taskId, "ak_c", {})).toEqual({ task_id: taskId, status: "skipped", idempotent: true })
      expect(yield* Effect.flip(followUps.dispatch(Scopes.all, taskId, "ak_a"))).toMatchObject({
        _tag: "InvalidTransition",
        message: "cannot dispatch a task that is skipped"
      })
      expect((yield* recordedEvents).map((e) => e.type)).toEqual([
        "follow_up.task_created",
        "follow_up.task_dispatched",
        "follow_up.task_skipped"
      ])
    }))
})

describe("a dispatch that loses a race", () => {
  /**
   * The service over a store whose first `lose` dispatch updates change nothing although the task
   * is free, as when another caller's change commits between the update and the state read.
   */
  const racing = (lose: number) => {
    let runs = 0
    const RacingRepo = Layer.effect(
      FollowUpsRepo,
      Effect.map(makeFakeFollowUpsRepo, (repo) =>
        FollowUpsRepo.of({
          ...repo,
          dispatch: (...args) => Effect.suspend(() => ++runs <= lose ? Effect.succeed(Option.none()) : repo.dispatch(...args))
        }))
    )
    const layer = FollowUps.layerWithoutDependencies.pipe(
      Layer.provide(RacingRepo),
      Layer.provideMerge(FakeStore),
      Layer.provideMerge(appConfigWith({ followUpLeaseSeconds: LEASE_S })),
      Layer.provideMerge(Layer.effectDiscard(TestClock.setTime(START)))
    )
    return { layer, runs: () => runs }
  }

  it.effect("is run again at once: two lost races, and the third run locks the task, with one event", () => {
    const { layer, runs } = racing(2)
    return Effect.gen(function*() {
      const { taskId } = yield* taskToday
      expect(yield* (yield* FollowUps).dispatch(Scopes.all, taskId, "ak_a")).toMatchObject({ status: "dispatched", dispatched_to: "ak_a" })
      expect(runs()).toBe(3)
      expect((yield* recordedEvents).map((e) => e.type)).toEqual(["follow_up.task_created", "follow_up.task_dispatched"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("still racing after three runs is a defect naming the task, and the task stays pending", () => {
    const { layer, runs } = racing(Number.MAX_SAFE_INTEGER)
    return Effect.gen(function*() {
      const { taskId } = yield* taskToday
      const exit = yield* Effect.exit((yield* FollowUps).dispatch(Scopes.all, taskId, "ak_a"))
      expect(runs()).toBe(3)
      expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toEqual(new Error(`follow-up task ${taskId}: dispatch kept racing (retry)`))
      expect(yield* storedTask(taskId)).toMatchObject({ status: "pending" })
    }).pipe(Effect.provide(layer))
  })
})
