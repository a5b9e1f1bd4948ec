// The events outbox: an event is inserted by the same transaction as the change that caused it,
// so it exists exactly when the change committed; a trigger (migration 0009) fans it out to the
// subscribed clients' webhook deliveries in that same transaction.
import { randomBytes } from "node:crypto"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { EventType } from "../../schema/Events.js"
import { Permission } from "../../schema/Permissions.js"
import { Instant } from "./rows.js"
import { sqlEdge } from "./sqlHelpers.js"
import { EVENTS_INSERT_SQL } from "./statements.js"

/** The event types of DECISIONS §9 are part of the contract (the events feed lists them). */
export { EventType }

/** An event's payload: a JSON object, stored as sent (jsonb). */
const EventData = Schema.fromJsonString(Schema.Record(Schema.String, Schema.Unknown))

/** An `events` row. Payloads are free-form per event type; the instant is kept for ordering and delivery. */
const OutboxEventRow = Schema.Struct({
  id: Schema.Int,
  event_id: Schema.String,
  type: EventType,
  /** A client receives an event only when it holds this permission. */
  permission: Permission,
  data: Schema.Unknown,
  created_at: Instant
})
export type OutboxEvent = typeof OutboxEventRow.Type

/** A new event id: evt_ and 24 hex digits. */
export const newEventId = (): string => "evt_" + randomBytes(12).toString("hex")

export class OutboxRepo extends Context.Service<OutboxRepo>()("Events/Outbox", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // Each event sorts in the feed by (tx_id, id), tx_id being its transaction's xid, taken at
    // that transaction's first write: a transaction that took its xid first (at an Idempotency-Key
    // claim, say) may still change a record after a younger one committed a change of the same
    // record, and its event would then sort first although it shows the later state. So an event's
    // tx_id is raised to the latest tx_id among the record's events of younger transactions (only
    // those can sort after it: the range tx_id > own xid of the feed's index, a few rows). With the
    // record's row locked by the change (the repositories lock it before the event's read), those
    // are committed, and the record's last event in the feed is the one that committed last.
    // Raising never shows an event early: it is listed once every xid up to its tx_id has ended.
    // The statement is EVENTS_INSERT_SQL (src/repos/statements.ts), shared with the benchmark floors.
    const insertMany = SqlSchema.void({
      Request: Schema.Struct({
        type: EventType,
        permission: Permission,
        items: Schema.Array(Schema.Struct({ event_id: Schema.String, data: EventData }))
      }),
      execute: ({ items, permission, type }) =>
        sql.unsafe(EVENTS_INSERT_SQL, [type, permission, items.map((i) => i.event_id), items.map((i) => i.data)])
    })

    const after = SqlSchema.findAll({
      Request: Schema.Struct({ id: Schema.Int, limit: Schema.Int }),
      Result: OutboxEventRow,
      execute: ({ id, limit }) =>
        sql`SELECT id::int AS id, event_id, type, permission, data, created_at FROM events
          WHERE id > ${id} ORDER BY id LIMIT ${limit}`
    })

    return {
      /** Records an event and returns its event_id; call it inside the transaction of the change. */
      record: (type: EventType, permission: Permission, data: Record<string, unknown>) => {
        const eventId = newEventId()
        return sqlEdge(Effect.as(insertMany({ type, permission, items: [{ event_id: eventId, data }] }), eventId))
      },
      /** Records several events of one type in one statement; call it inside the transaction. */
      recordMany: (type: EventType, permission: Permission, items: ReadonlyArray<Record<string, unknown>>) =>
        items.length === 0
          ? Effect.void
          : sqlEdge(insertMany({ type, permission, items: items.map((data) => ({ event_id: newEventId(), data })) })),
      /** Events after this id, in id order. */
      after: (id: number, limit: number) => sqlEdge(after({ id, limit }))
    } as const
  })
}) {
  static readonly layer = Layer.effect(OutboxRepo, OutboxRepo.make)
}
