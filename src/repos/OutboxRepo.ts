// The events outbox: an event is inserted by the same transaction as the change that caused it,
// so it exists exactly when the change committed. The webhook dispatcher reads it in id order.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import type { Permission } from "../../schema/Common.js"

export type EventType =
  | "guest.card_created"
  | "guest.created"
  | "guest.updated"
  | "match.created"
  | "match.status_changed"
  | "follow_up.task_completed"
  | "membership.expired"

export interface OutboxEvent {
  readonly id: number
  readonly event_id: string
  readonly type: EventType
  /** A client receives an event only when it holds this permission. */
  readonly permission: Permission
  readonly data: unknown
  readonly created_at: Date
}

export const makeOutboxRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** Records an event; call it inside the transaction of the change. */
  const record = (type: EventType, permission: Permission, data: Record<string, unknown>) =>
    Effect.map(
      sql<{ event_id: string }>`INSERT INTO events (event_id, type, permission, data)
        VALUES (${"evt_" + randomBytes(12).toString("hex")}, ${type}, ${permission}, ${JSON.stringify(data)}::jsonb)
        RETURNING event_id`,
      (rows) => rows[0]!.event_id
    )

  /** Records several events of one type in one statement; call it inside the transaction. */
  const recordMany = (type: EventType, permission: Permission, items: ReadonlyArray<Record<string, unknown>>) =>
    items.length === 0
      ? Effect.void
      : Effect.asVoid(sql`INSERT INTO events ${sql.insert(items.map((data) => ({
        event_id: "evt_" + randomBytes(12).toString("hex"),
        type,
        permission,
        data: JSON.stringify(data)
      })))}`)

  const after = (id: number, limit: number) =>
    sql<OutboxEvent>`SELECT id::int AS id, event_id, type, permission, data, created_at FROM events
      WHERE id > ${id} ORDER BY id LIMIT ${limit}`

  return { record, recordMany, after } as const
})

export class OutboxRepo extends Context.Tag("Events/Outbox")<OutboxRepo, Effect.Effect.Success<typeof makeOutboxRepo>>() {}
export const OutboxRepoLive = Layer.effect(OutboxRepo, makeOutboxRepo)
