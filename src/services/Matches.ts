// Match use cases (SPEC §4.9; DECISIONS §5, §6): create with its score, list, and status moves.
// Each write moves the matchmakers' match_count / success_count and records its events in the
// same statement (issue 37; a status move decided on a row another write changed meanwhile is made
// again under the row's lock, in a transaction).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { MATCH_PAGE, type MatchCreate, type MatchListParams, type MatchStatus } from "../../schema/Matches.js"
import { InvalidInput, InvalidTransition, NotFound } from "../domain/errors.js"
import { matchMove } from "../domain/matches.js"
import { matchScore } from "../domain/matchScore.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { GuestsRepo } from "../repos/GuestsRepo.js"
import { MatchesRepo } from "../repos/MatchesRepo.js"
import { Transaction } from "../repos/sqlHelpers.js"
import { inScopeOrNotFound, method, namedCompanyInScope, someOrNotFound, syncWindow } from "./common.js"

export class Matches extends Context.Service<Matches>()("Matches/Service", {
  make: Effect.gen(function*() {
    const repo = yield* MatchesRepo
    const guests = yield* GuestsRepo
    const tx = yield* Transaction

    /** A guest the match names; for a scoped client one of another company is 404 as if unknown (DECISIONS §14). */
    const guestOf = (scope: CompanyScope, id: number) =>
      guests.findById(Scopes.all, id).pipe(someOrNotFound("guest", id), inScopeOrNotFound(scope, "guest", id))

    const create = method("Matches.create")(function*(scope: CompanyScope, input: MatchCreate) {
      if (input.guest_a_id === input.guest_b_id) {
        return yield* InvalidInput.of([{ path: "guest_b_id", message: "must be a different guest from guest_a_id" }])
      }
      const [a, b] = yield* Effect.all([guestOf(scope, input.guest_a_id), guestOf(scope, input.guest_b_id)])
      const sent = [input.guest_a_matchmaker_id, input.guest_b_matchmaker_id].filter((id): id is number => id != null)
      // A matchmaker of another company (or an independent one) is 404 to a scoped client, as if unknown (DECISIONS §14).
      const known = yield* guests.existingIds(scope, "matchmakers", sent)
      const unknown = sent.find((id) => !known.has(id))
      if (unknown !== undefined) return yield* NotFound.of("matchmaker", unknown)
      // The match, match.created, and the counted matchmakers' match_count and events, in one
      // statement (MatchesRepo.insert).
      const match = yield* repo.insert({
        guest_a_id: a.id,
        guest_b_id: b.id,
        guest_a_matchmaker_id: input.guest_a_matchmaker_id ?? a.matchmaker_id,
        guest_b_matchmaker_id: input.guest_b_matchmaker_id ?? b.matchmaker_id,
        match_score: matchScore(a, b)
      })
      return { id: match.id, status: match.status, created_at: match.created_at }
    })

    /** The scope's matches; a `company_id` filter outside the scope is 403 out_of_scope (DECISIONS §14). */
    const list = method("Matches.list")(function*(scope: CompanyScope, params: MatchListParams) {
      yield* namedCompanyInScope(scope, params.company_id)
      return yield* repo.list(scope, params, yield* syncWindow("matches", params, MATCH_PAGE))
    })

    /** The answer of a move from `current` to `status`, or why it is refused; undefined: the move is to be made. */
    const decided = (current: { readonly status: MatchStatus; readonly updated_at: string }, id: number, status: MatchStatus) => {
      const move = matchMove(current.status, status)
      if (move === "invalid") return Effect.fail(new InvalidTransition({ message: `a ${current.status} match cannot become ${status}` }))
      if (move === "unchanged") return Effect.succeed({ id, status: current.status, updated_at: current.updated_at })
      return undefined
    }

    /** The move decided again and made on the match read locked (updateStatus's transaction, after a lost race). */
    const updateLocked = Effect.fnUntraced(function*(scope: CompanyScope, id: number, status: MatchStatus) {
      const locked = yield* repo.findVersioned(scope, id, true).pipe(someOrNotFound("match", id))
      const lockedAnswer = decided(locked.match, id, status)
      if (lockedAnswer !== undefined) return yield* lockedAnswer
      const m = yield* Effect.flatMap(
        repo.setStatusRecorded(id, locked.version, status, locked.match.status),
        (m) => Option.isSome(m) ? Effect.succeed(m.value) : Effect.die(new Error(`match ${id}: its locked row did not update`))
      )
      return { id, status: m.status, updated_at: m.updated_at }
    })

    /**
     * A match outside the caller's scope is 404 as if unknown (DECISIONS §14). The move is decided
     * from the stored status, so the match is read first; then one statement makes it against the
     * version read (MatchesRepo.setStatusRecorded), with its events and counters. Only when the
     * row changed in between is it read again, locked, in a transaction.
     */
    const updateStatus = method("Matches.updateStatus")(function*(scope: CompanyScope, id: number, status: MatchStatus) {
      const current = yield* repo.findVersioned(scope, id).pipe(someOrNotFound("match", id))
      const answered = decided(current.match, id, status)
      if (answered !== undefined) return yield* answered
      const written = yield* repo.setStatusRecorded(id, current.version, status, current.match.status)
      if (Option.isSome(written)) return { id, status: written.value.status, updated_at: written.value.updated_at }
      return yield* tx.run(updateLocked(scope, id, status))
    })

    return { create, list, updateStatus } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Matches, Matches.make)
  static readonly layer = Matches.layerWithoutDependencies.pipe(
    Layer.provide([MatchesRepo.layer, GuestsRepo.layer, Transaction.layer])
  )
}
