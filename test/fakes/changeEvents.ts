// ChangeEvents over the fake outbox, for service tests without PostgreSQL: each event carries the
// record's id (and, for `*.updated`, `changed_fields`; for `match.status_changed`,
// `previous_status`) in place of the record and its kept keys, which only the real repositories read (the record as the read endpoint shows it is proved end to end, over
// PostgreSQL, by test/events.test.ts and test/mirror.test.ts). Type, permission, order and
// count are the real service's: the same catalogue map picks the permission.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { type CatalogueEventType, EVENT_READ_PERMISSION, resourceOfEventType } from "../../src/domain/eventTypes.js"
import { OutboxRepo } from "../../src/repos/OutboxRepo.js"
import { ChangeEvents } from "../../src/services/ChangeEvents.js"

export const FakeChangeEvents: Layer.Layer<ChangeEvents, never, OutboxRepo> = Layer.effect(
  ChangeEvents,
  Effect.gen(function*() {
    const outbox = yield* OutboxRepo
    const recordAny = (type: CatalogueEventType, items: ReadonlyArray<Record<string, unknown>>) =>
      outbox.recordMany(type, EVENT_READ_PERMISSION[resourceOfEventType(type)], items)
    const payloads: ChangeEvents["Service"]["payloads"] = (type, items) => recordAny(type, items as ReadonlyArray<Record<string, unknown>>)
    const record: ChangeEvents["Service"]["record"] = (type, changes) => recordAny(type, changes.map((c) => ({ id: c.id, ...c.extra })))
    return ChangeEvents.of({
      record,
      records: (type, ids) => record(type, ids.map((id) => ({ id }))),
      updated: (type, ids, changedFields) => record(type, [...ids].map((id) => ({ id, extra: { changed_fields: changedFields } }))),
      matchStatusChanged: (id, previousStatus) => recordAny("match.status_changed", [{ id, previous_status: previousStatus }]),
      payloads
    })
  })
)
