// The event catalogue's recorder (DECISIONS §12): every change visible through a read endpoint
// records one event whose `data` is the record as that endpoint shows it, read by the same
// repository statement inside the transaction of the change (so the event exists exactly when the
// change committed, and shows what it committed), with the keys its type carried before (a
// payload only grows: domain/eventPayloads.ts) beside it. Masking is per client, when the event is
// listed or delivered (the feed's response mask, the webhook payload), never here.
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { AppConfig } from "../Config.js"
import { keptFields, type KeptType } from "../domain/eventPayloads.js"
import { type CatalogueEventType, EVENT_READ_PERMISSION, type EventResource, resourceOfEventType } from "../domain/eventTypes.js"
import * as Scopes from "../domain/scope.js"
import { ActivitiesRepo } from "../repos/ActivitiesRepo.js"
import { CompaniesRepo } from "../repos/CompaniesRepo.js"
import { FollowUpsRepo, taskRecord } from "../repos/FollowUpsRepo.js"
import { GuestsRepo } from "../repos/GuestsRepo.js"
import { MatchesRepo } from "../repos/MatchesRepo.js"
import { MatchmakersRepo } from "../repos/MatchmakersRepo.js"
import { MembershipsRepo } from "../repos/MembershipsRepo.js"
import { OutboxRepo } from "../repos/OutboxRepo.js"
import { WorkGroupsRepo } from "../repos/WorkGroupsRepo.js"
import { WorkWechatsRepo } from "../repos/WorkWechatsRepo.js"

/** One event to record: the record's id and what the payload adds to it (`changed_fields`). */
export interface Change {
  readonly id: number
  readonly extra?: Readonly<Record<string, unknown>>
}

/** A deleted record's payload (DECISIONS §12). */
export interface Deletion {
  readonly id: number
  readonly deleted_at: string
}

type Data = Record<string, unknown>

/**
 * The types recorded from the record alone: `match.status_changed` also carries the status the
 * match left, which only its caller knows (see `matchStatusChanged`).
 */
export type RecordedType = Exclude<CatalogueEventType, "match.status_changed">

export class ChangeEvents extends Context.Service<ChangeEvents>()("Events/Changes", {
  make: Effect.gen(function*() {
    const outbox = yield* OutboxRepo
    const guests = yield* GuestsRepo
    const matchmakers = yield* MatchmakersRepo
    const companies = yield* CompaniesRepo
    const accounts = yield* WorkWechatsRepo
    const groups = yield* WorkGroupsRepo
    const activities = yield* ActivitiesRepo
    const followUps = yield* FollowUpsRepo
    const matches = yield* MatchesRepo
    const memberships = yield* MembershipsRepo
    const leaseMs = (yield* AppConfig).followUpLeaseSeconds * 1000

    // Each resource's record by id, as its read endpoint (GET /x/{id}, or its list item) shows it.
    const readers: { readonly [R in EventResource]: (id: number) => Effect.Effect<Option.Option<unknown>, unknown> } = {
      // Events record every company's changes: read unscoped (the feed filters by events.company_ids).
      guest: (id) => guests.findById(Scopes.all, id),
      matchmaker: (id) => matchmakers.findById(Scopes.all, id),
      company: (id) => companies.findById(Scopes.all, id),
      work_wechat: accounts.findLive,
      work_group: groups.findLive,
      activity: (id) => activities.findById(Scopes.all, id),
      follow_up_task: (id) =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (nowMs) => Effect.map(followUps.detail(Scopes.all, id, nowMs - leaseMs), Option.map(taskRecord))
        ),
      match: (id) => matches.findById(Scopes.all, id),
      membership: (id) => memberships.findById(Scopes.all, id)
    }

    const read = (resource: EventResource, id: number) =>
      Effect.flatMap(
        readers[resource](id) as Effect.Effect<Option.Option<unknown>>,
        Option.match({
          // Called after a write of the same transaction: a record that is not there is a bug.
          onNone: () => Effect.die(new Error(`event of ${resource} ${id}: the record is not readable`)),
          onSome: (record) => Effect.succeed(record as Data)
        })
      )

    const recordAny = Effect.fnUntraced(function*(type: CatalogueEventType, changes: ReadonlyArray<Change>) {
      const resource = resourceOfEventType(type)
      const items: Array<Data> = []
      for (const change of changes) {
        const shown = yield* read(resource, change.id)
        items.push({ ...shown, ...keptFields(type, shown), ...change.extra })
      }
      yield* outbox.recordMany(type, EVENT_READ_PERMISSION[resource], items)
    })

    /**
     * Records one `type` event per change, each carrying the record read now (in the caller's
     * transaction), the keys its type kept beside the record, and its extra fields. Call it inside
     * the transaction of the change.
     */
    const record = (type: RecordedType, changes: ReadonlyArray<Change>) => recordAny(type, changes)

    /** `record` for a list of ids with no extra fields. */
    const records = (type: RecordedType, ids: ReadonlyArray<number>) => record(type, ids.map((id) => ({ id })))

    /** A `*.updated` event per id, each with the same `changed_fields`. */
    const updated = (type: RecordedType, ids: Iterable<number>, changedFields: ReadonlyArray<string>) =>
      record(type, [...ids].map((id) => ({ id, extra: { changed_fields: changedFields } })))

    /**
     * `match.status_changed`: the match as it is now and `previous_status`, the status it left,
     * which the caller read (locked) in the transaction of the change: the record cannot give it back.
     */
    const matchStatusChanged = (id: number, previousStatus: string) =>
      recordAny("match.status_changed", [{ id, extra: { previous_status: previousStatus } }])

    /**
     * Events whose payload the caller already holds (a registration, the record of `*.deleted`);
     * not for a type with kept keys, which `record` adds.
     */
    const payloads = (type: Exclude<RecordedType, KeptType>, items: ReadonlyArray<Data | Deletion>) =>
      outbox.recordMany(type, EVENT_READ_PERMISSION[resourceOfEventType(type)], items as ReadonlyArray<Data>)

    return { record, records, updated, matchStatusChanged, payloads } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(ChangeEvents, ChangeEvents.make)
  static readonly layer = ChangeEvents.layerWithoutDependencies.pipe(
    Layer.provide([
      OutboxRepo.layer,
      GuestsRepo.layer,
      MatchmakersRepo.layer,
      CompaniesRepo.layer,
      WorkWechatsRepo.layer,
      WorkGroupsRepo.layer,
      ActivitiesRepo.layer,
      FollowUpsRepo.layer,
      MatchesRepo.layer,
      MembershipsRepo.layer
    ])
  )
}
