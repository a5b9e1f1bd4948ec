// Membership use cases (SPEC §4.10; DECISIONS §3, §5): create-or-renew, list, the operator's
// cancel and plans. Expiry at expire_at is the daemon's (jobs/TimeMoves.ts).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { MEMBERSHIP_PAGE, type MembershipCreate, type MembershipListParams } from "../../schema/Memberships.js"
import { InvalidInput, InvalidTransition, NotFound, OutOfScope } from "../domain/errors.js"
import { membershipMove, validPlanDays } from "../domain/memberships.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { GuestsRepo } from "../repos/GuestsRepo.js"
import { MembershipsRepo } from "../repos/MembershipsRepo.js"
import { Transaction } from "../repos/sqlHelpers.js"
import { UsersRepo } from "../repos/UsersRepo.js"
import { ChangeEvents } from "./ChangeEvents.js"
import { inScopeOrNotFound, method, namedCompanyInScope, someOrNotFound, syncWindow } from "./common.js"

export class Memberships extends Context.Service<Memberships>()("Memberships/Service", {
  make: Effect.gen(function*() {
    const repo = yield* MembershipsRepo
    const users = yield* UsersRepo
    const guests = yield* GuestsRepo
    const tx = yield* Transaction
    const events = yield* ChangeEvents

    /** Expires what is due (all, or one user's plan) with a membership.expired event each; the count. */
    const expire = Effect.fnUntraced(function*(scope: { readonly userId: number; readonly planId: number } | null) {
      const ids = yield* repo.expireDue(scope)
      yield* events.records("membership.expired", ids)
      return ids.length
    })

    /** The daemon's expiry at expire_at, in one transaction with its events. */
    const expireDue = tx.run(expire(null))

    /** createOrRenew's transaction: the user's due membership of the plan expired, then the renewal or new one and its event. */
    const renewOrStart = Effect.fnUntraced(function*(scope: CompanyScope, input: MembershipCreate, guestId: number | null) {
      yield* expire({ userId: input.user_id, planId: input.plan_id })
      const saved = yield* repo.upsert(scope, input.user_id, input.plan_id, guestId).pipe(
        Effect.flatMap(Option.match({
          // createOrRenew found the plan: what refused is the active membership to renew, another company's.
          onNone: () =>
            Effect.fail(
              Scopes.isScoped(scope)
                ? new OutOfScope({
                  message: `user ${input.user_id}'s active membership of plan ${input.plan_id} belongs to another company`
                })
                : NotFound.of("plan", input.plan_id)
            ),
          onSome: Effect.succeed
        }))
      )
      yield* events.records(saved.renewed ? "membership.renewed" : "membership.created", [saved.id])
      return saved
    })

    /**
     * Renews the user's active membership of the plan in place, or starts a new one now. One that
     * is still active but past its expire_at (the daemon has not reached it yet) is expired first,
     * with its event, so it is never extended from the past. A scoped client links a guest of its
     * companies (another company's is 404 as if unknown); a membership without a guest belongs to
     * no company, so it may not create one (403 out_of_scope, DECISIONS §14).
     */
    const createOrRenew = method("Memberships.createOrRenew")(function*(scope: CompanyScope, input: MembershipCreate) {
      if (!(yield* users.exists(input.user_id))) return yield* NotFound.of("user", input.user_id)
      yield* repo.findPlan(input.plan_id).pipe(someOrNotFound("plan", input.plan_id))
      const guestId = input.guest_id ?? null
      if (guestId === null && Scopes.isScoped(scope)) {
        return yield* new OutOfScope({ message: "guest_id is required: a membership without a guest belongs to no company of this client" })
      }
      if (guestId !== null) {
        yield* guests.findById(Scopes.all, guestId).pipe(someOrNotFound("guest", guestId), inScopeOrNotFound(scope, "guest", guestId))
      }
      const saved = yield* tx.run(renewOrStart(scope, input, guestId))
      return { id: saved.id, status: saved.status, expire_at: saved.expire_at }
    })

    /** The scope's memberships; a `company_id` filter outside the scope is 403 out_of_scope (DECISIONS §14). */
    const list = method("Memberships.list")(function*(scope: CompanyScope, params: MembershipListParams) {
      yield* namedCompanyInScope(scope, params.company_id)
      return yield* repo.list(scope, params, yield* syncWindow("memberships", params, MEMBERSHIP_PAGE))
    })

    /** cancel's transaction: the membership locked, moved, and read back. */
    const cancelLocked = Effect.fnUntraced(function*(id: number) {
      const current = yield* repo.lock(id).pipe(someOrNotFound("membership", id))
      const move = membershipMove(current.status, "cancelled")
      if (move === "invalid") {
        return yield* new InvalidTransition({
          message: `membership ${id} is ${current.status}; it cannot be cancelled`
        })
      }
      if (move === "allowed") {
        yield* repo.setStatus(id, "cancelled")
        yield* events.records("membership.cancelled", [id])
      }
      return yield* repo.findById(Scopes.all, id).pipe(someOrNotFound("membership", id))
    })

    /** The operator's `memberships cancel ID`: active → cancelled; cancelled again is a no-op. */
    const cancel = method("Memberships.cancel")(function*(id: number) {
      return yield* tx.run(cancelLocked(id))
    })

    const createPlan = Effect.fnUntraced(function*(name: string, days: number) {
      const trimmed = name.trim()
      if (trimmed === "" || [...trimmed].length > 50) return yield* InvalidInput.at("name", "must be 1 to 50 characters")
      if (!validPlanDays(days)) return yield* InvalidInput.at("days", "must be a whole number from 1 to 36500")
      return yield* repo.insertPlan({ name: trimmed, days })
    })

    const plans = repo.plans

    return { createOrRenew, list, cancel, createPlan, plans, expireDue } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Memberships, Memberships.make)
  static readonly layer = Memberships.layerWithoutDependencies.pipe(
    Layer.provide([MembershipsRepo.layer, UsersRepo.layer, GuestsRepo.layer, ChangeEvents.layer, Transaction.layer])
  )
}
