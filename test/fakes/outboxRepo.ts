// An in-memory OutboxRepo over the fake database: events with ascending ids and unique
// `evt_` + 24 hex event ids, payloads stored as JSON (what jsonb keeps: no undefined, no
// functions), read back in id order after a given id. Inside a fake transaction an event
// disappears with a rollback, as in PostgreSQL. The fan-out to webhook deliveries (a trigger) is
// not faked. Checked against the real one by test/contracts/outboxRepo.contract.ts.
import { randomBytes } from "node:crypto"

import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import type { EventType, OutboxEvent } from "../../src/repos/OutboxRepo.js"
import { OutboxRepo } from "../../src/repos/OutboxRepo.js"
import { type FakeDatabase, FakeDb, type FakeEvent, nextId, now } from "./db.js"

/** Appends an event to the fake table (also for a fake repository whose real one records its events itself); its event_id. */
export const addFakeEvent = (
  db: FakeDatabase,
  type: EventType,
  permission: string,
  data: Record<string, unknown>
) =>
  Effect.map(now, (nowMs) => {
    const event: FakeEvent = {
      id: nextId(db, "events"),
      event_id: "evt_" + randomBytes(12).toString("hex"),
      type,
      permission,
      data: JSON.parse(JSON.stringify(data)),
      created_at: nowMs
    }
    db.tables.events.push(event)
    return event.event_id
  })

export const makeFakeOutboxRepo = Effect.gen(function*() {
  const db = yield* FakeDb
  const insert = (type: EventType, permission: string, data: Record<string, unknown>) => addFakeEvent(db, type, permission, data)
  return OutboxRepo.of({
    record: insert,
    recordMany: (type, permission, items) => Effect.forEach(items, (data) => insert(type, permission, data), { discard: true }),
    after: (id, limit) =>
      Effect.sync(() =>
        db.tables.events
          .filter((e) => e.id > id)
          .sort((a, b) => a.id - b.id)
          .slice(0, limit)
          .map((e) => ({ ...structuredClone(e), created_at: new Date(e.created_at) }) as OutboxEvent)
      )
  })
})

export const FakeOutboxRepo: Layer.Layer<OutboxRepo, never, FakeDb> = Layer.effect(OutboxRepo, makeFakeOutboxRepo)

/** The events recorded so far, oldest first (for assertions). */
export const recordedEvents = Effect.map(FakeDb, (db) => db.tables.events.map((e) => structuredClone(e)))
