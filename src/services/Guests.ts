// Guest use cases (SPEC §4.2 without the card endpoints): create, read, update, list and both
// batches. Every write derives the matching fields (domain/guest.ts), moves the matchmaker
// counters and records its event in the same transaction (POST and PUT of one guest: in one
// statement, issue 37).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

import { Id } from "../../schema/Common.js"
import { type ItemRefusal, reasonOf } from "../../schema/Errors.js"
import {
  type BatchOutcome,
  type BatchResult,
  GUEST_BATCH_MAX,
  GUEST_PAGE,
  GuestBatchUpdateItem,
  GuestCreate,
  type GuestListParams,
  type GuestUpdate,
  UPDATE_ONLY_FIELDS
} from "../../schema/Guests.js"
import { BatchTooLarge, InvalidInput, type Issue, NotFound, type ResourceName } from "../domain/errors.js"
import { deriveGuest, type GuestSent, type GuestState } from "../domain/guest.js"
import { issuesOfSchemaError } from "../domain/issues.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { jsonTextIssues } from "../domain/text.js"
import { GuestsRepo, type VersionedState } from "../repos/GuestsRepo.js"
import { Transaction } from "../repos/sqlHelpers.js"
import { type Change, ChangeEvents } from "./ChangeEvents.js"
import { method, pickSent, searchableFields, someOrNotFound, syncWindow } from "./common.js"

const decodeItem = <S extends Schema.Decoder<unknown>>(schema: S, item: unknown): Result.Result<S["Type"], ReadonlyArray<Issue>> => {
  // The text rules of DECISIONS §1 first: a NUL in one item fails only that item.
  const textIssues = jsonTextIssues(item)
  if (textIssues.length > 0) return Result.fail(textIssues.map((i) => (i.path === "body" ? { ...i, path: "item" } : i)))
  return Result.mapError(
    // The rejected value in the messages ("Expected number, actual \"x\""), as the contract's decoding words them.
    Schema.decodeUnknownResult(schema, { errors: "all", reportInput: true })(item),
    (error) => issuesOfSchemaError(error, "item")
  )
}

const isId = Schema.is(Id)

/** An item refused alone (DECISIONS §1): the refusal's reason as `error`, its message as `reason`, its issues. */
const failedItem = (index: number, refusal: ItemRefusal, id?: number): BatchResult => ({
  index,
  status: "failure",
  ...(id !== undefined ? { id } : {}),
  error: reasonOf(refusal),
  reason: refusal.message,
  ...(refusal._tag === "InvalidInput" && refusal.issues !== undefined ? { issues: refusal.issues } : {})
})

const invalidItem = (index: number, issues: ReadonlyArray<Issue>, id?: number): BatchResult =>
  failedItem(index, InvalidInput.of(issues, issues.map((i) => `${i.path}: ${i.message}`).join("; ")), id)

const notFoundItem = (index: number, resource: ResourceName, refId: number, id?: number): BatchResult =>
  failedItem(index, NotFound.of(resource, refId), id)

const outcome = (results: ReadonlyArray<BatchResult>): BatchOutcome => ({
  success_count: results.filter((r) => r.status === "success").length,
  failed_count: results.filter((r) => r.status === "failure").length,
  results: [...results].sort((a, b) => a.index - b.index)
})

export class Guests extends Context.Service<Guests>()("Guests/Service", {
  make: Effect.gen(function*() {
    const repo = yield* GuestsRepo
    const events = yield* ChangeEvents
    const tx = yield* Transaction

    /**
     * 403 out_of_scope for a company_id outside the scope (DECISIONS §14); 404 for a company_id or
     * matchmaker_id that does not exist, or a matchmaker outside the scope (as if unknown; the
     * company's first). The two reads do not depend on each other: they are sent together, each on
     * a connection of its own.
     */
    const checkRefs = Effect.fnUntraced(function*(
      scope: CompanyScope,
      sent: { company_id?: number | undefined; matchmaker_id?: number | null | undefined }
    ) {
      if (sent.company_id !== undefined) {
        const refused = Scopes.checkNamed(scope, sent.company_id)
        if (refused !== undefined) return yield* Effect.fail(refused)
      }
      const [companies, matchmakers] = yield* Effect.all([
        sent.company_id !== undefined ? repo.existingIds(scope, "companies", [sent.company_id]) : Effect.succeed(undefined),
        sent.matchmaker_id != null ? repo.existingIds(scope, "matchmakers", [sent.matchmaker_id]) : Effect.succeed(undefined)
      ], { concurrency: 2 })
      if (sent.company_id !== undefined && !companies?.has(sent.company_id)) {
        return yield* Effect.fail(NotFound.of("company", sent.company_id))
      }
      if (sent.matchmaker_id != null && !matchmakers?.has(sent.matchmaker_id)) {
        return yield* Effect.fail(NotFound.of("matchmaker", sent.matchmaker_id))
      }
    })

    /** Moves the matchmakers' guest_count, with a matchmaker.updated event for each one moved. */
    const moveCounters = (deltas: Map<number, number>) =>
      Effect.andThen(
        repo.adjustGuestCounts(deltas),
        events.updated("matchmaker.updated", [...deltas].filter(([, d]) => d !== 0).map(([id]) => id).sort((a, b) => a - b), [
          "guest_count"
        ])
      )

    /** Counter moves for one write: -1 for the old matchmaker, +1 for the new one. */
    const counterDelta = (deltas: Map<number, number>, before: GuestState | undefined, after: GuestState) => {
      if (before?.matchmaker_id === after.matchmaker_id) return
      if (before?.matchmaker_id != null) deltas.set(before.matchmaker_id, (deltas.get(before.matchmaker_id) ?? 0) - 1)
      if (after.matchmaker_id != null) deltas.set(after.matchmaker_id, (deltas.get(after.matchmaker_id) ?? 0) + 1)
    }

    /**
     * Creates a guest as POST /guests does (derived fields, counters, guest.created); runs in the
     * caller's transaction. References must have been checked.
     */
    const insertNew = Effect.fnUntraced(function*(input: GuestCreate, extra: { readonly image_hash?: string } = {}) {
      const state = deriveGuest(input as GuestSent, undefined)
      const g = yield* repo.insert(state, extra)
      const deltas = new Map<number, number>()
      counterDelta(deltas, undefined, state)
      yield* events.records("guest.created", [g.id])
      yield* moveCounters(deltas)
      return g
    })

    const create = method("Guests.create")(function*(scope: CompanyScope, input: GuestCreate) {
      yield* checkRefs(scope, input)
      // One statement (GuestsRepo.create): the guest, its event, the matchmaker's counter and its
      // event. The references were read first: companies and matchmakers are never deleted, so
      // what the check found still holds when the statement runs.
      const guest = yield* repo.create(deriveGuest(input as GuestSent, undefined))
      return {
        id: guest.id,
        name: guest.name,
        gender: guest.gender,
        age: guest.age,
        requirement: guest.requirement,
        requirement_tags: guest.requirement_tags,
        status: guest.status,
        created_at: guest.created_at
      }
    })

    const get = method("Guests.get")(function*(scope: CompanyScope, id: number) {
      return yield* repo.findById(scope, id).pipe(someOrNotFound("guest", id))
    })

    /** `masking`: the caller's; its keyword matches only what it sees unmasked (DECISIONS §1). */
    const list = method("Guests.list")(function*(scope: CompanyScope, params: GuestListParams, masking: boolean) {
      const searchable = yield* searchableFields("guest", masking, params)
      return yield* repo.list(scope, params, searchable, yield* syncWindow("guests", params, GUEST_PAGE))
    })

    /** The matchmakers' guest_count moves of one write, none zero. */
    const movesOf = (before: GuestState, after: GuestState): Array<readonly [number, number]> => {
      const deltas = new Map<number, number>()
      counterDelta(deltas, before, after)
      return [...deltas].filter(([, d]) => d !== 0)
    }

    /** PUT /guests/{id} when its row changed after it was read: the same write under the row's lock. */
    const updateLocked = Effect.fnUntraced(function*(
      scope: CompanyScope,
      id: number,
      change: GuestUpdate,
      changed: ReadonlyArray<string>
    ) {
      // The row changed after it was read: under its lock now (a guest moved out of the scope meanwhile is unknown too).
      const locked = yield* repo.findVersioned(scope, id, true)
      if (Option.isNone(locked)) return yield* Effect.fail(NotFound.of("guest", id))
      const again = deriveGuest(change as GuestSent, locked.value.state)
      return yield* Effect.flatMap(
        repo.updateRecorded(id, locked.value.version, again, changed, movesOf(locked.value.state, again)),
        (g) => Option.isSome(g) ? Effect.succeed(g.value) : Effect.die(new Error(`guest ${id}: its locked row did not update`))
      )
    })

    /**
     * PUT /guests/{id} (issue 37: one statement where it can): the guest's new fields derive from
     * its stored ones (domain/guest.ts), so the write reads the row first. The read and the
     * references' checks are sent together (none depends on another), then one statement stores
     * the state derived from that read, against the version read (GuestsRepo.updateRecorded), with
     * its events and the matchmakers' counters. Only when the row changed in between (a concurrent
     * write of the same guest) is it read again, locked, in a transaction, and the same statement
     * made against it.
     */
    const update = method("Guests.update")(function*(scope: CompanyScope, id: number, change: GuestUpdate) {
      const changed = Object.keys(change)
      const [read, refs] = yield* Effect.all([Effect.exit(repo.findVersioned(scope, id)), Effect.exit(checkRefs(scope, change))], {
        concurrency: 2
      })
      // The answers in the order the checks were made one after the other: a scoped caller learns
      // first that a guest outside its scope is unknown (DECISIONS §14, whatever the change
      // names); an unscoped one, first what is wrong with the references.
      const guestOf = (r: Option.Option<VersionedState>) =>
        Option.isSome(r) ? Effect.succeed(r.value) : Effect.fail(NotFound.of("guest", id))
      const current = yield* (Scopes.isScoped(scope)
        ? Effect.flatMap(Effect.flatMap(read, guestOf), (c) => Effect.as(refs, c))
        : Effect.flatMap(Effect.andThen(refs, read), guestOf))
      const next = deriveGuest(change as GuestSent, current.state)
      const written = yield* repo.updateRecorded(id, current.version, next, changed, movesOf(current.state, next))
      const guest = Option.isSome(written) ? written.value : yield* tx.run(updateLocked(scope, id, change, changed))
      return { id: guest.id, ...pickSent(guest, change), updated_at: guest.updated_at }
    })

    const checkBatchSize = (items: ReadonlyArray<unknown>) =>
      items.length > GUEST_BATCH_MAX
        ? Effect.fail(BatchTooLarge.of(GUEST_BATCH_MAX, items.length, "guests"))
        : Effect.void

    /** batchCreate's writes, in one transaction: each accepted guest's success goes into `results`. */
    const insertAccepted = Effect.fnUntraced(function*(
      accepted: ReadonlyArray<{ index: number; state: GuestState }>,
      results: Array<BatchResult>
    ) {
      const deltas = new Map<number, number>()
      const created: Array<number> = []
      for (const { index, state } of accepted) {
        const g = yield* repo.insert(state)
        counterDelta(deltas, undefined, state)
        created.push(g.id)
        results.push({ index, status: "success", id: g.id })
      }
      yield* events.records("guest.created", created)
      yield* moveCounters(deltas)
    })

    const batchCreate = method("Guests.batchCreate")(function*(scope: CompanyScope, items: ReadonlyArray<unknown>) {
      yield* checkBatchSize(items)
      const results: Array<BatchResult> = []
      const valid: Array<{ index: number; input: GuestCreate }> = []
      items.forEach((item, index) => {
        const decoded = decodeItem(GuestCreate, item)
        if (Result.isFailure(decoded)) results.push(invalidItem(index, decoded.failure))
        else valid.push({ index, input: decoded.success })
      })
      const companies = yield* repo.existingIds(scope, "companies", valid.map((v) => v.input.company_id))
      const matchmakers = yield* repo.existingIds(
        scope,
        "matchmakers",
        valid.flatMap((v) => (v.input.matchmaker_id != null ? [v.input.matchmaker_id] : []))
      )
      const accepted: Array<{ index: number; state: GuestState }> = []
      for (const { index, input } of valid) {
        const outOfScope = Scopes.checkNamed(scope, input.company_id, `items[${index}].company_id`)
        if (outOfScope !== undefined) results.push(failedItem(index, outOfScope))
        else if (!companies.has(input.company_id)) results.push(notFoundItem(index, "company", input.company_id))
        else if (input.matchmaker_id != null && !matchmakers.has(input.matchmaker_id)) {
          results.push(notFoundItem(index, "matchmaker", input.matchmaker_id))
        } else accepted.push({ index, state: deriveGuest(input as GuestSent, undefined) })
      }
      yield* tx.run(insertAccepted(accepted, results))
      return outcome(results)
    })

    /** batchUpdate's writes, in one transaction under the guests' locks: each item's outcome goes into `results`. */
    const updateValid = Effect.fnUntraced(function*(
      scope: CompanyScope,
      valid: ReadonlyArray<{ index: number; input: GuestBatchUpdateItem }>,
      companies: ReadonlySet<number>,
      matchmakers: ReadonlySet<number>,
      results: Array<BatchResult>
    ) {
      const states = yield* repo.lockStates(valid.map((v) => v.input.id))
      const deltas = new Map<number, number>()
      const changes: Array<Change> = []
      for (const { index, input } of valid) {
        const { id, ...change } = input
        const current = states.get(id)
        const outOfScope = change.company_id === undefined
          ? undefined
          : Scopes.checkNamed(scope, change.company_id, `items[${index}].company_id`)
        // A guest outside the scope is unknown (DECISIONS §14).
        if (current === undefined || !Scopes.includes(scope, current.company_id)) {
          results.push(notFoundItem(index, "guest", id, id))
        } else if (outOfScope !== undefined) results.push(failedItem(index, outOfScope, id))
        else if (change.company_id !== undefined && !companies.has(change.company_id)) {
          results.push(notFoundItem(index, "company", change.company_id, id))
        } else if (change.matchmaker_id != null && !matchmakers.has(change.matchmaker_id)) {
          results.push(notFoundItem(index, "matchmaker", change.matchmaker_id, id))
        } else {
          const next = deriveGuest(change as GuestSent, current, { allowStatus: true })
          yield* repo.update(id, next)
          counterDelta(deltas, current, next)
          // A later item of the same batch for the same guest starts from this one.
          states.set(id, next)
          changes.push({ id, extra: { changed_fields: Object.keys(change) } })
          results.push({ index, status: "success", id })
        }
      }
      // Each item's event shows the guest as the whole batch left it (the record is read at the end).
      yield* events.record("guest.updated", changes)
      yield* moveCounters(deltas)
    })

    const batchUpdate = method("Guests.batchUpdate")(function*(scope: CompanyScope, items: ReadonlyArray<unknown>) {
      yield* checkBatchSize(items)
      const results: Array<BatchResult> = []
      const valid: Array<{ index: number; input: GuestBatchUpdateItem }> = []
      items.forEach((item, index) => {
        // A failed item names its guest only when it sent a valid id (not 1.5, not past the id range).
        const itemId = typeof item === "object" && item !== null && "id" in item && isId(item.id) ? item.id : undefined
        const unsupported = typeof item === "object" && item !== null
          ? UPDATE_ONLY_FIELDS.filter((f) => Object.hasOwn(item, f))
          : []
        if (unsupported.length > 0) {
          results.push(
            invalidItem(
              index,
              unsupported.map((f) => ({ path: f, message: "not supported by batch update; use PUT /guests/{id}" })),
              itemId
            )
          )
          return
        }
        const decoded = decodeItem(GuestBatchUpdateItem, item)
        if (Result.isFailure(decoded)) results.push(invalidItem(index, decoded.failure, itemId))
        else valid.push({ index, input: decoded.success })
      })
      const companies = yield* repo.existingIds(
        scope,
        "companies",
        valid.flatMap((v) => (v.input.company_id !== undefined ? [v.input.company_id] : []))
      )
      const matchmakers = yield* repo.existingIds(
        scope,
        "matchmakers",
        valid.flatMap((v) => (v.input.matchmaker_id != null ? [v.input.matchmaker_id] : []))
      )
      yield* tx.run(updateValid(scope, valid, companies, matchmakers, results))
      return outcome(results)
    })

    return { create, insertNew, get, list, update, batchCreate, batchUpdate } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Guests, Guests.make)
  static readonly layer = Guests.layerWithoutDependencies.pipe(Layer.provide([GuestsRepo.layer, ChangeEvents.layer, Transaction.layer]))
}
