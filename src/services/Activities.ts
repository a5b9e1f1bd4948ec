// Activity use cases (SPEC §4.8; DECISIONS §4, §5): create, list, register with per-gender quota,
// and the operator's audit and opening. The daemon's time moves are in jobs/TimeMoves.ts.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { ACTIVITY_PAGE, type ActivityCreate, type ActivityListParams, type RegistrationCreate } from "../../schema/Activities.js"
import type { Guest } from "../../schema/Guests.js"
import { type OperatorAction, operatorMove, windowIsValid } from "../domain/activities.js"
import type { DatabaseUnavailable } from "../domain/errors.js"
import { ActivityNotOpen, AlreadyRegistered, InvalidInput, InvalidTransition, QuotaFull } from "../domain/errors.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { ActivitiesRepo } from "../repos/ActivitiesRepo.js"
import { CompaniesRepo } from "../repos/CompaniesRepo.js"
import { GuestsRepo } from "../repos/GuestsRepo.js"
import { Transaction } from "../repos/sqlHelpers.js"
import { ChangeEvents } from "./ChangeEvents.js"
import { inScopeOrNotFound, method, namedCompanyInScope, someOrNotFound, syncWindow } from "./common.js"

export class Activities extends Context.Service<Activities>()("Activities/Service", {
  make: Effect.gen(function*() {
    const repo = yield* ActivitiesRepo
    const companies = yield* CompaniesRepo
    const guests = yield* GuestsRepo
    const tx = yield* Transaction
    const events = yield* ChangeEvents

    /** A scoped client creates activities only of its companies: another named is 403 out_of_scope (DECISIONS §14). */
    const create = method("Activities.create")(function*(scope: CompanyScope, input: ActivityCreate) {
      if (!windowIsValid(input.start_time, input.end_time)) {
        return yield* InvalidInput.of([{ path: "end_time", message: "must be after start_time" }])
      }
      yield* namedCompanyInScope(scope, input.company_id)
      yield* companies.findById(scope, input.company_id).pipe(someOrNotFound("company", input.company_id))
      // The activity and its activity.created event in one statement (ActivitiesRepo.insert).
      const activity = yield* repo.insert({
        title: input.title,
        address: input.address,
        start_time: input.start_time,
        end_time: input.end_time,
        company_id: input.company_id,
        description: input.description ?? null,
        cover_url: input.cover_url ?? null,
        male_quota: input.male_quota ?? null,
        female_quota: input.female_quota ?? null,
        male_fee: input.male_fee ?? 0,
        female_fee: input.female_fee ?? 0
      })
      return { id: activity.id, status: activity.status, audit_status: activity.audit_status, created_at: activity.created_at }
    })

    /** The scope's activities; a `company_id` filter outside the scope is 403 out_of_scope (DECISIONS §14). */
    const list = method("Activities.list")(function*(scope: CompanyScope, params: ActivityListParams) {
      yield* namedCompanyInScope(scope, params.company_id)
      return yield* repo.list(scope, params, yield* syncWindow("activities", params, ACTIVITY_PAGE))
    })

    /** register's transaction: a place taken (or why none is) and the registration with its event. */
    const takePlaceAndRegister = Effect.fnUntraced(function*(id: number, guest: Guest, input: RegistrationCreate) {
      const fee = yield* repo.takePlace(id, guest.gender)
      if (Option.isNone(fee)) {
        const state = yield* repo.registrationState(id, guest.id).pipe(someOrNotFound("activity", id))
        return yield* state.status !== "registering"
          ? new ActivityNotOpen({ message: `the activity is ${state.status}, not open for registration` })
          : state.registered
          ? new AlreadyRegistered({ message: "the guest is already registered for this activity" })
          : new QuotaFull({ message: `no ${guest.gender} places are left` })
      }
      const registration = yield* repo.insertRegistration({
        activity_id: id,
        guest_id: guest.id,
        name: input.name ?? guest.name,
        phone: input.phone ?? guest.phone,
        remark: input.remark ?? null,
        fee: fee.value
      })
      // The registration record, as the register answer shows it (no read endpoint lists them).
      yield* events.payloads("activity.registered", [registration])
      return registration
    })

    /**
     * Takes a place of the guest's gender and records the registration in one transaction: a
     * refused registration (already registered) gives its place back by rolling back. A scoped
     * client registers only its companies' guests for its companies' activities: either outside
     * the scope is 404 as if unknown (DECISIONS §14).
     */
    const register = method("Activities.register")(function*(scope: CompanyScope, id: number, input: RegistrationCreate) {
      yield* repo.findById(scope, id).pipe(someOrNotFound("activity", id))
      const guest = yield* guests.findById(Scopes.all, input.guest_id).pipe(
        someOrNotFound("guest", input.guest_id),
        inScopeOrNotFound(scope, "guest", input.guest_id)
      )
      return yield* tx.run(takePlaceAndRegister(id, guest, input))
    })

    /** operate's transaction: the activity's state locked, the move decided and made, with its event. */
    const operateLocked = Effect.fnUntraced(function*(id: number, action: OperatorAction) {
      const current = yield* repo.lockState(id).pipe(someOrNotFound("activity", id))
      const outcome = operatorMove(current, action)
      switch (outcome._tag) {
        case "Refused":
          return yield* new InvalidTransition({ message: `cannot ${action} activity ${id}: ${outcome.reason}` })
        case "Unchanged":
          return yield* repo.findById(Scopes.all, id).pipe(someOrNotFound("activity", id))
        case "Next": {
          const activity = yield* repo.setState({ id, ...outcome.state })
          yield* events.updated("activity.updated", [id], ["status", "audit_status"])
          return activity
        }
      }
    })

    /** The operator's approve / reject / open (DECISIONS §3, §5); answers the activity as it is after. */
    const operate = method("Activities.operate")(function*(id: number, action: OperatorAction) {
      return yield* tx.run(operateLocked(id, action))
    })

    /**
     * The daemon's time moves (DECISIONS §5, §7): registering → ongoing (→ ended) at start_time,
     * ongoing → ended at end_time, each statement in a transaction with its activity.updated events.
     */
    const moveByTime = Effect.gen(function*() {
      const move = (ids: Effect.Effect<ReadonlyArray<number>, DatabaseUnavailable>) =>
        tx.run(Effect.tap(ids, (moved) => events.updated("activity.updated", moved, ["status"])))
      // Starts first, so an activity that started and ended since the last pass ends in this one.
      const started = yield* move(repo.startDue)
      const ended = yield* move(repo.endDue)
      return { started: started.length, ended: ended.length }
    })

    return { create, list, register, operate, moveByTime } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Activities, Activities.make)
  static readonly layer = Activities.layerWithoutDependencies.pipe(
    Layer.provide([ActivitiesRepo.layer, CompaniesRepo.layer, GuestsRepo.layer, ChangeEvents.layer, Transaction.layer])
  )
}
