// Follow-up use cases (SPEC §4.5; DECISIONS §5, §7): the task list and detail, the dispatch lock
// with its lease, the three reports (complete records its event in the same transaction), and the
// operator's plans and task generation (also run by the job daemon).
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"

import {
  type CompleteBody,
  type Dispatched,
  type FailBody,
  FOLLOW_UP_PAGE,
  type FollowUpGuest,
  type FollowUpTaskDetail,
  type FollowUpTaskListItem,
  type FollowUpTaskListParams,
  type SkipBody,
  type TaskReported,
  type TaskType
} from "../../schema/FollowUps.js"
import { AppConfig } from "../Config.js"
import { InvalidInput, InvalidTransition, NotFound, TaskLocked } from "../domain/errors.js"
import {
  cityOfCode,
  decide,
  educationLevel,
  FINAL_STATE_OF,
  genderCode,
  incomeLevelNumber,
  marriageStatusCode,
  scheduledDate,
  type TaskAction,
  type TaskStatus,
  yesNoCode
} from "../domain/followUp.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { formatDate } from "../domain/time.js"
import {
  type CompleteInput,
  type FollowUpDetailRow,
  FollowUpsRepo,
  GENERATE_BATCH,
  type StoredGuest,
  taskRecord
} from "../repos/FollowUpsRepo.js"
import { Transaction } from "../repos/sqlHelpers.js"
import { ChangeEvents } from "./ChangeEvents.js"
import { method, syncWindow } from "./common.js"

/** A report or dispatch whose conditional update lost a race with its own state read is tried again this often. */
const ATTEMPTS = 3

/** The conditional update changed nothing, yet the state read shows it would now apply: it raced a change. */
class Raced extends Data.TaggedError("Raced")<{ readonly why: string }> {}

/**
 * An action run again at once while it loses races, ATTEMPTS runs in all (no wait: the race is
 * already over when the state read sees it); still racing after that is a defect, `what` kept racing.
 */
const retryRaces = (what: string) => <A, E, R>(action: Effect.Effect<A, E | Raced, R>): Effect.Effect<A, Exclude<E, Raced>, R> =>
  action.pipe(
    Effect.retry({ schedule: Schedule.recurs(ATTEMPTS - 1), while: (e) => e instanceof Raced }),
    Effect.catchIf(
      (e): e is Raced => e instanceof Raced,
      (e) => Effect.die(new Error(`${what} kept racing${e.why}`)),
      Effect.fail
    )
  )

/** A follow-up plan to create: its guest, task type, plan days, and start date (undefined: today). */
interface PlanInput {
  readonly guestId: number
  readonly taskType: TaskType
  readonly days: ReadonlyArray<number>
  readonly startDate: string | undefined
}

const verbs: Record<TaskAction, string> = { dispatch: "dispatch", complete: "complete", fail: "fail", skip: "skip" }

const invalidTransition = (action: TaskAction, status: TaskStatus) =>
  new InvalidTransition({ message: `cannot ${verbs[action]} a task that is ${status}` })

const taskLocked = (holder: string) => new TaskLocked({ message: "the task is locked by another client", dispatched_to: holder })

const toGuest = (g: StoredGuest): FollowUpGuest => {
  const { education, gender, has_car, has_children, has_house, income_level, marital_status, ...rest } = g
  return {
    ...rest,
    gender: genderCode(gender),
    education_level: educationLevel(education),
    income_level: incomeLevelNumber(income_level),
    marriage_status: marriageStatusCode(marital_status),
    has_children: yesNoCode(has_children),
    has_car: yesNoCode(has_car),
    has_house: yesNoCode(has_house)
  }
}

const toDetail = (row: FollowUpDetailRow): FollowUpTaskDetail => ({
  task: taskRecord(row),
  guest: toGuest(row.guest),
  matchmaker: row.matchmaker === null ? null : (() => {
    const { cert_level, ...m } = row.matchmaker
    return { ...m, certified: cert_level !== "none" }
  })(),
  already_recommended_guest_ids: row.already_recommended_guest_ids,
  history_match_count: row.history_match_count
})

export class FollowUps extends Context.Service<FollowUps>()("FollowUps/Service", {
  make: Effect.gen(function*() {
    const repo = yield* FollowUpsRepo
    const events = yield* ChangeEvents
    const tx = yield* Transaction
    const config = yield* AppConfig
    const leaseMs = config.followUpLeaseSeconds * 1000
    const todayOf = (nowMs: number) => formatDate(new Date(nowMs), config.timeZone)

    const list = method("FollowUps.list")(function*(scope: CompanyScope, params: FollowUpTaskListParams) {
      const nowMs = yield* Clock.currentTimeMillis
      const date = params.date ?? todayOf(nowMs)
      // The scope of a cursor holds the day it lists, also when `date` was left to default.
      const sync = yield* syncWindow("follow-up/tasks", { ...params, date }, FOLLOW_UP_PAGE)
      const { list: rows, next_cursor, total } = yield* repo.list(scope, params, date, nowMs - leaseMs, sync)
      const items = rows.map((r): FollowUpTaskListItem => ({
        id: r.id,
        follow_up_id: r.follow_up_id,
        guest_id: r.guest_id,
        guest_name: r.guest_name,
        company_id: r.company_id,
        task_type: r.task_type,
        task_day: r.task_day,
        scheduled_date: r.scheduled_date,
        status: r.status,
        guest_brief: {
          gender: r.gender,
          age: r.age,
          city: cityOfCode(r.native_place_code),
          education: r.education,
          occupation: r.occupation
        },
        matchmaker_brief: r.matchmaker
      }))
      return { list: items, total, next_cursor }
    })

    const get = method("FollowUps.get")(function*(scope: CompanyScope, id: number) {
      const nowMs = yield* Clock.currentTimeMillis
      const row = yield* repo.detail(scope, id, nowMs - leaseMs)
      return Option.isSome(row) ? toDetail(row.value) : yield* NotFound.of("follow_up_task", id)
    })

    /**
     * Why an action's conditional update changed nothing, as the error (or idempotent answer) it
     * means; `retry` when the state read shows the update would now succeed (it raced a change).
     */
    const explain = Effect.fnUntraced(function*(id: number, action: TaskAction, caller: string, nowMs: number) {
      // Unscoped: the action itself was checked against the scope before it ran.
      const state = yield* repo.lockState(Scopes.all, id)
      if (Option.isNone(state)) return yield* NotFound.of("follow_up_task", id)
      const { dispatched_at, dispatched_to, status } = state.value
      const decision = decide(
        action,
        { status, dispatchedTo: dispatched_to, dispatchedAtMs: dispatched_at?.getTime() ?? null },
        caller,
        nowMs,
        leaseMs
      )
      switch (decision._tag) {
        case "InvalidTransition":
          return yield* invalidTransition(action, decision.status)
        case "Locked":
          return yield* taskLocked(decision.holder)
        case "Idempotent":
          return action === "dispatch" ? ("retry" as const) : ("idempotent" as const)
        case "Apply":
          return "retry" as const
      }
    })

    /**
     * A task outside the caller's scope is unknown to it (DECISIONS §14): 404 before any action.
     * A task's company never changes, so the check holds for the action that follows.
     */
    const inScope = (scope: CompanyScope, id: number) =>
      Scopes.isScoped(scope)
        ? Effect.flatMap(
          repo.lockState(scope, id),
          (state) => Option.isSome(state) ? Effect.void : Effect.fail(NotFound.of("follow_up_task", id))
        )
        : Effect.void

    /** The dispatch lock taken (or kept by its holder) and, when that changed it, its event. */
    const takeLock = Effect.fnUntraced(function*(id: number, caller: string, nowMs: number) {
      const taken = yield* repo.dispatch(id, caller, nowMs, leaseMs)
      // A holder's repeat keeps the same lock: nothing changed, no event.
      if (Option.isSome(taken) && !taken.value.idempotent) yield* events.records("follow_up.task_dispatched", [id])
      return taken
    })

    /** One attempt of dispatch: the lock taken in a transaction, or why not. */
    const dispatchOnce = Effect.fnUntraced(function*(id: number, caller: string) {
      const nowMs = yield* Clock.currentTimeMillis
      const lock = yield* tx.run(takeLock(id, caller, nowMs))
      if (Option.isSome(lock)) return { ...lock.value, status: "dispatched" } satisfies Dispatched
      const why = yield* explain(id, "dispatch", caller, nowMs)
      return yield* new Raced({ why: ` (${why})` })
    })

    const dispatch = method("FollowUps.dispatch")(function*(scope: CompanyScope, id: number, caller: string) {
      yield* inScope(scope, id)
      return yield* dispatchOnce(id, caller).pipe(retryRaces(`follow-up task ${id}: dispatch`))
    })

    /** One attempt of a report: its conditional update, or why it changed nothing. */
    const reportOnce = Effect.fnUntraced(function*<E, R>(
      id: number,
      action: Exclude<TaskAction, "dispatch">,
      caller: string,
      apply: (nowMs: number) => Effect.Effect<boolean, E, R>
    ) {
      const nowMs = yield* Clock.currentTimeMillis
      const status = FINAL_STATE_OF[action]
      if (yield* apply(nowMs)) return { task_id: id, status, idempotent: false } satisfies TaskReported
      const why = yield* explain(id, action, caller, nowMs)
      if (why === "idempotent") return { task_id: id, status, idempotent: true } satisfies TaskReported
      return yield* new Raced({ why: "" })
    })

    /** Runs a report's conditional update until it applies or its refusal is explained. */
    const report = <E, R>(
      id: number,
      action: Exclude<TaskAction, "dispatch">,
      caller: string,
      apply: (nowMs: number) => Effect.Effect<boolean, E, R>
    ) => reportOnce(id, action, caller, apply).pipe(retryRaces(`follow-up task ${id}: ${action}`))

    /** complete's conditional update and, when it applied, its event; false: it changed nothing. */
    const completeOnce = Effect.fnUntraced(function*(id: number, caller: string, input: CompleteInput, nowMs: number) {
      const done = yield* repo.complete(id, caller, input, nowMs)
      if (Option.isNone(done)) return false
      if (done.value.guest_id === input.matched_guest_id) {
        // Rolls the completion back: a guest is not recommended to themself.
        return yield* InvalidInput.of([{ path: "matched_guest_id", message: "must be another guest than the task's" }])
      }
      yield* events.records("follow_up.task_completed", [id])
      return true
    })

    const complete = method("FollowUps.complete")(function*(scope: CompanyScope, id: number, caller: string, body: CompleteBody) {
      yield* inScope(scope, id)
      const matched = body.matched_guest_id ?? null
      // A recommended guest outside the scope is unknown, as one that does not exist.
      if (matched !== null && !(yield* repo.guestExists(scope, matched))) return yield* NotFound.of("guest", matched)
      const input = {
        matched_guest_id: matched,
        match_score: body.match_score ?? null,
        share_link: body.share_link ?? null,
        share_channel: body.share_channel ?? null,
        extra: body.extra ?? null
      }
      return yield* report(id, "complete", caller, (nowMs) => tx.run(completeOnce(id, caller, input, nowMs)))
    })

    /** A report's update and, when it applied, its event, in one transaction. */
    const reported = Effect.fnUntraced(function*<E, R>(
      type: "follow_up.task_failed" | "follow_up.task_skipped",
      id: number,
      update: Effect.Effect<boolean, E, R>
    ) {
      const applied = yield* update
      if (applied) yield* events.records(type, [id])
      return applied
    }, (effect) => tx.run(effect))

    const fail = method("FollowUps.fail")(function*(scope: CompanyScope, id: number, caller: string, body: FailBody) {
      yield* inScope(scope, id)
      return yield* report(
        id,
        "fail",
        caller,
        (nowMs) =>
          reported(
            "follow_up.task_failed",
            id,
            repo.fail(id, caller, { error_code: body.error_code ?? null, error_msg: body.error_msg ?? null }, nowMs)
          )
      )
    })

    const skip = method("FollowUps.skip")(function*(scope: CompanyScope, id: number, caller: string, body: SkipBody) {
      yield* inScope(scope, id)
      return yield* report(id, "skip", caller, (nowMs) => reported("follow_up.task_skipped", id, repo.skip(id, body.reason ?? null, nowMs)))
    })

    // Plans and generation (the operator's command line and the job daemon).

    /** Creates the tasks of every plan day scheduled up to today that has none (the daemon's run). */
    const generateDue = Effect.gen(function*() {
      const today = todayOf(yield* Clock.currentTimeMillis)
      const { created, plans } = yield* generateDueOn(today, null)
      return { date: today, created, plans }
    }).pipe(Effect.withSpan("FollowUps.generateDue"))

    /**
     * Every due plan (or one), batch after batch, each batch in a transaction with the
     * `follow_up.task_created` events of its tasks; the tasks created and the plans visited.
     */
    const generateDueOn = Effect.fnUntraced(function*(today: string, planId: number | null) {
      let created = 0
      let visited = 0
      for (;;) {
        const batch = yield* tx.run(
          Effect.tap(repo.generateBatch(today, planId), (b) => events.records("follow_up.task_created", b.created))
        )
        created += batch.created.length
        visited += batch.plans
        if (batch.plans < GENERATE_BATCH) return { created, plans: visited }
      }
    })

    /** A date's tasks exactly, with their events, in one transaction. */
    const generateOn = Effect.fnUntraced(function*(date: string) {
      const ids = yield* repo.generateOnDate(date)
      yield* events.records("follow_up.task_created", ids)
      return { date, created: ids.length }
    }, (effect) => tx.run(effect))

    /** `follow-up generate [--date D]`: that date's tasks exactly, or (no date) what the daemon would create now. */
    const generate = (date: string | undefined) => date === undefined ? generateDue : generateOn(date)

    /** createPlan's transaction: the plan and the tasks already due by `today`. */
    const insertPlan = Effect.fnUntraced(function*(input: PlanInput, start: string, today: string) {
      const id = yield* repo.insertPlan({
        guestId: input.guestId,
        taskType: input.taskType,
        startDate: start,
        days: input.days,
        firstDate: scheduledDate(start, input.days[0]!)
      })
      if (Option.isNone(id)) return yield* NotFound.of("guest", input.guestId)
      const { created } = yield* generateDueOn(today, id.value)
      return { id: id.value, start_date: start, days: input.days, tasks_created: created }
    })

    /** A plan and, in the same transaction, the tasks already due (a plan starting today has its day-1 task at once). */
    /** The guest must be one of the scope's (else 404 as if unknown); the operator's scope is every company. */
    const createPlan = method("FollowUps.createPlan")(function*(scope: CompanyScope, input: PlanInput) {
      const today = todayOf(yield* Clock.currentTimeMillis)
      const start = input.startDate ?? today
      if (!(yield* repo.guestExists(scope, input.guestId))) return yield* NotFound.of("guest", input.guestId)
      return yield* tx.run(insertPlan(input, start, today))
    })

    const listPlans = (scope: CompanyScope, guestId: number | undefined) => repo.plans(scope, guestId ?? null)

    return { list, get, dispatch, complete, fail, skip, createPlan, listPlans, generate, generateDue } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(FollowUps, FollowUps.make)
  static readonly layer = FollowUps.layerWithoutDependencies.pipe(
    Layer.provide([FollowUpsRepo.layer, ChangeEvents.layer, Transaction.layer])
  )
}
