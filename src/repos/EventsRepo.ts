// The events feed and the outbox's retention (DECISIONS §9): reads `events` in commit-safe order,
// and tells the partition maintenance (jobs/Partitions.ts) which expired partitions of events still have
// a pending delivery (those wait). Recording events is OutboxRepo's.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { EventType } from "../../schema/Events.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { CountRow, Instant, IsoTimestamp } from "./rows.js"
import { sqlEdge } from "./sqlHelpers.js"

/** Pending deliveries counted at most up to this (a range waits as long while one is). */
export const PENDING_COUNT_LIMIT = 10_000

const FeedRow = Schema.Struct({
  event_id: Schema.String,
  type: EventType,
  data: Schema.Record(Schema.String, Schema.Unknown),
  created_at: IsoTimestamp
})
export type FeedRow = typeof FeedRow.Type

/** Where a page starts: after this event in (transaction, id) order. */
const Cursor = Schema.Struct({ tx_id: Schema.String, id: Schema.Number })
type Cursor = typeof Cursor.Type

const PageRequest = Schema.Struct({
  cursor: Schema.NullOr(Cursor),
  /** A scoped client's companies (DECISIONS §14): only events that belong to one of them; null: all. */
  companies: Schema.NullOr(Schema.Array(Schema.Int)),
  permissions: Schema.Array(Schema.String),
  types: Schema.NullOr(Schema.Array(Schema.String)),
  retention_days: Schema.Number,
  limit: Schema.Int
})

export class EventsRepo extends Context.Service<EventsRepo>()("Events/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const cursorRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ eventId: Schema.String, companies: Schema.NullOr(Schema.Array(Schema.Int)) }),
      Result: Cursor,
      execute: ({ companies, eventId }) =>
        sql`SELECT tx_id::text AS tx_id, id::float8 AS id FROM events WHERE event_id = ${eventId}
          ${companies === null ? sql`` : sql`AND company_ids && ${companies}::bigint[]`}`
    })

    // Only events whose transaction is older than every transaction still running: all of them
    // have committed (or never will), and any event not yet visible sorts after them, so a reader
    // that continues from the last one it saw never skips an event that commits later.
    const pageRows = SqlSchema.findAll({
      Request: PageRequest,
      Result: FeedRow,
      execute: (r) =>
        sql`SELECT event_id, type, data, created_at FROM events
          WHERE tx_id < pg_snapshot_xmin(pg_current_snapshot())
            AND created_at >= now() - ${r.retention_days} * interval '1 day'
            AND permission = ANY (${r.permissions}::text[])
            AND client_id IS NULL
            ${r.companies === null ? sql`` : sql`AND company_ids && ${r.companies}::bigint[]`}
            ${r.types === null ? sql`` : sql`AND type = ANY (${r.types}::text[])`}
            ${r.cursor === null ? sql`` : sql`AND (tx_id, id) > (${r.cursor.tx_id}::xid8, ${r.cursor.id}::bigint)`}
          ORDER BY tx_id, id
          LIMIT ${r.limit}`
    })

    // The deliveries that keep an expired range of partitions (jobs/Partitions.ts): pending ones
    // of events of that range (the queue's partial index, in the range's partitions only).
    const pendingRows = SqlSchema.findOne({
      Request: Schema.Struct({ from: Schema.NullOr(Instant), to: Instant }),
      Result: CountRow,
      execute: ({ from, to }) =>
        sql`SELECT count(*)::int AS n FROM (
            SELECT 1 FROM webhook_deliveries
            WHERE status = 'pending' AND event_created_at < ${to} ${from === null ? sql`` : sql`AND event_created_at >= ${from}`}
            LIMIT ${PENDING_COUNT_LIMIT}) p`
    })

    /** The position of an event in the feed's order; none for an unknown (or pruned) id, or one outside the scope. */
    const cursorOf = (scope: CompanyScope, eventId: string) => sqlEdge(cursorRow({ eventId, companies: Scopes.companyIds(scope) }))

    /** Up to `limit` events of the scope the permissions let the client read, oldest first, after the cursor. */
    const page = (scope: CompanyScope, request: Omit<typeof PageRequest.Type, "companies">) =>
      sqlEdge(pageRows({ ...request, companies: Scopes.companyIds(scope) }))

    /**
     * Pending deliveries of the events created in [fromMs, toMs) (null: from the beginning),
     * counted up to PENDING_COUNT_LIMIT: while there is one, the range's partitions are kept.
     */
    const pendingDeliveries = (fromMs: number | null, toMs: number) =>
      sqlEdge(Effect.map(pendingRows({ from: fromMs === null ? null : new Date(fromMs), to: new Date(toMs) }), (r) => r.n))

    return { cursorOf, page, pendingDeliveries } as const
  })
}) {
  static readonly layer = Layer.effect(EventsRepo, EventsRepo.make)
}
