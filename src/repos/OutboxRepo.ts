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

import { Permission } from "../../schema/Common.js"
import { EventType } from "../../schema/Events.js"
import { Instant } from "./rows.js"
import { insertRows, sqlEdge } from "./sqlHelpers.js"

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

    const insert = SqlSchema.findOne({
      Request: Schema.Struct({ type: EventType, permission: Permission, data: EventData }),
      Result: Schema.Struct({ event_id: Schema.String }),
      execute: ({ data, permission, type }) =>
        sql`INSERT INTO events (event_id, type, permission, data)
          VALUES (${newEventId()}, ${type}, ${permission}, ${data}::jsonb)
          RETURNING event_id`
    })

    const insertMany = SqlSchema.void({
      Request: Schema.Struct({ type: EventType, permission: Permission, items: Schema.Array(EventData) }),
      execute: ({ items, permission, type }) =>
        sql`INSERT INTO events ${sql.insert(insertRows(items.map((data) => ({ event_id: newEventId(), type, permission, data }))))}`
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
      record: (type: EventType, permission: Permission, data: Record<string, unknown>) =>
        sqlEdge(Effect.map(insert({ type, permission, data }), (row) => row.event_id)),
      /** Records several events of one type in one statement; call it inside the transaction. */
      recordMany: (type: EventType, permission: Permission, items: ReadonlyArray<Record<string, unknown>>) =>
        items.length === 0 ? Effect.void : sqlEdge(insertMany({ type, permission, items })),
      /** Events after this id, in id order. */
      after: (id: number, limit: number) => sqlEdge(after({ id, limit }))
    } as const
  })
}) {
  static readonly layer = Layer.effect(OutboxRepo, OutboxRepo.make)
}
