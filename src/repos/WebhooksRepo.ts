// Webhook deliveries and their attempts: the SQL over `webhook_deliveries` and `webhook_attempts`
// (EventsRepo also counts the pending ones of an expired day). Deliveries are created by the
// fan-out trigger of migration 0009 (0024: partitioned with their event) when an event commits; daemons claim them with row locks (SKIP LOCKED) and a lease, under per-client
// and per-daemon bounds, and record each attempt only while they still hold the delivery.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { CountRow, Instant, IsoTimestamp } from "./rows.js"
import { pageWithTotal, sqlEdge } from "./sqlHelpers.js"

/** NOTIFY channel of new (or redelivered) deliveries; the fan-out trigger notifies it too. */
export const WEBHOOK_CHANNEL = "webhook_deliveries"

export const DeliveryStatus = Schema.Literals(["pending", "succeeded", "failed"])
export type DeliveryStatus = typeof DeliveryStatus.Type

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)
/** A JSON object sent as its text (a jsonb parameter). */
const JsonText = Schema.fromJsonString(JsonObject)

/** A claimed delivery: the attempt it is, the event, and the client as it is now. */
const ClaimedRow = Schema.Struct({
  recorded: Schema.Literal(false),
  id: Schema.Int,
  attempt: Schema.Int,
  schedule_step: Schema.Int,
  event_id: Schema.String,
  type: Schema.String,
  permission: Schema.String,
  data: JsonObject,
  created_at: IsoTimestamp,
  client_id: Schema.Int,
  app_key: Schema.String,
  status: Schema.String,
  permissions: Schema.Array(Schema.String),
  masking: Schema.Boolean,
  webhook_url: Schema.NullOr(Schema.String),
  webhook_events: Schema.Array(Schema.String),
  webhook_enabled: Schema.Boolean,
  webhook_secret_enc: Schema.NullOr(Schema.String),
  webhook_prev_secret_enc: Schema.NullOr(Schema.String),
  webhook_prev_expires_at: Schema.NullOr(Instant)
})
export type ClaimedDelivery = typeof ClaimedRow.Type

/** What an attempt decided, recorded with it. */
const AttemptRecord = Schema.Struct({
  id: Schema.Int,
  worker: Schema.String,
  attempt: Schema.Int,
  status: DeliveryStatus,
  step: Schema.Int,
  /** Wait before the next attempt (pending only). */
  delay_ms: Schema.NullOr(Schema.Number),
  attempted_at_ms: Schema.Number,
  duration_ms: Schema.Int,
  status_code: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  response: Schema.NullOr(Schema.String),
  client_id: Schema.Int,
  /** A 410: the client's webhook is turned off with this record. */
  turn_off: Schema.Boolean
})
export type AttemptRecord = typeof AttemptRecord.Type

/** A delivery as listed; instants stay instants (the operator and the API show them differently). */
const DeliveryRow = Schema.Struct({
  id: Schema.Int,
  event_id: Schema.String,
  type: Schema.String,
  app_key: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Int,
  next_attempt_at: Schema.NullOr(Instant),
  last_status: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  created_at: Instant,
  updated_at: Instant,
  total_count: Schema.optional(Schema.Int)
})

const AttemptRow = Schema.Struct({
  delivery_id: Schema.Int,
  attempt: Schema.Int,
  attempted_at: Instant,
  duration_ms: Schema.Int,
  status_code: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  response: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(Instant),
  worker: Schema.String
})
export type DeliveryAttempt = Omit<typeof AttemptRow.Type, "delivery_id">
export type Delivery = Omit<typeof DeliveryRow.Type, "total_count"> & {
  readonly attempt_history: ReadonlyArray<DeliveryAttempt>
}

/** Which deliveries: of one client (or all), in one status, from an instant on; a page of them. */
const ListRequest = Schema.Struct({
  client_id: Schema.NullOr(Schema.Int),
  status: Schema.NullOr(DeliveryStatus),
  since: Schema.NullOr(Instant),
  limit: Schema.Int,
  offset: Schema.Int
})
export type DeliveryFilter = Omit<typeof ListRequest.Type, "limit" | "offset">

const Held = Schema.Struct({ id: Schema.Int, worker: Schema.String, attempt: Schema.Int })

export class WebhooksRepo extends Context.Service<WebhooksRepo>()("Webhooks/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // The turn is the function webhook_cycle of migration 0009: record, then claim, in one round
    // trip, with the advisory lock and the exact per-client count inside. The claimed rows carry
    // their event and client as the claim saw them (a join out here would read them under the
    // statement's older snapshot, which may predate a delivery the claim took).
    const cycleRows = SqlSchema.findAll({
      Request: Schema.Struct({
        records: Schema.Array(AttemptRecord),
        worker: Schema.String,
        free: Schema.Int,
        perClient: Schema.Int,
        leaseMs: Schema.Number
      }),
      Result: Schema.Union([Schema.Struct({ recorded: Schema.Literal(true), id: Schema.Int }), ClaimedRow]),
      execute: ({ free, leaseMs, perClient, records, worker }) =>
        sql`SELECT recorded, id::int AS id, attempt, schedule_step, event_id, type, permission, data, created_at,
            client_id::int AS client_id, app_key, status, permissions, masking, webhook_url, webhook_events, webhook_enabled,
            webhook_secret_enc, webhook_prev_secret_enc, webhook_prev_expires_at
          FROM webhook_cycle(${JSON.stringify(records)}::jsonb, ${worker}, ${free}, ${perClient}, ${leaseMs})`
    })

    const releaseRow = SqlSchema.void({
      Request: Held,
      execute: ({ attempt, id, worker }) =>
        sql`UPDATE webhook_deliveries SET locked_by = NULL, lease_until = NULL, next_attempt_at = now(), updated_at = now()
          WHERE id = ${id} AND locked_by = ${worker} AND attempt_count = ${attempt} AND status = 'pending'`
    })

    const nextDueRow = SqlSchema.findOneOption({
      Request: Schema.Void,
      Result: Schema.Struct({ ms: Schema.NullOr(Schema.Number) }),
      execute: () =>
        // Every pending delivery not leased now, due already or not: a retry that came due after
        // the turn's claim (a busy machine) is due now (ms ≤ 0), not left for the poll. A leased
        // one is its holder's: the holder's record of it wakes the loop.
        sql`SELECT (extract(epoch FROM min(n.next_attempt_at) - now()) * 1000)::float8 AS ms
          FROM clients c CROSS JOIN LATERAL (
            SELECT next_attempt_at FROM webhook_deliveries d
            WHERE d.client_id = c.id AND d.status = 'pending' AND (d.locked_by IS NULL OR d.lease_until <= now())
            ORDER BY d.next_attempt_at LIMIT 1) n`
    })

    const where = (r: DeliveryFilter) =>
      sql.and([
        ...(r.client_id !== null ? [sql`d.client_id = ${r.client_id}`] : []),
        ...(r.status !== null ? [sql`d.status = ${r.status}`] : []),
        ...(r.since !== null ? [sql`d.created_at >= ${r.since}`] : [])
      ])

    const listRows = SqlSchema.findAll({
      Request: ListRequest,
      Result: DeliveryRow,
      execute: (r) =>
        sql`SELECT d.id::int AS id, e.event_id, e.type, c.app_key, d.status, d.attempt_count AS attempts, d.next_attempt_at,
            d.last_status, d.last_error, d.created_at, d.updated_at, (count(*) OVER ())::int AS total_count
          FROM webhook_deliveries d JOIN events e ON e.id = d.event_id AND e.created_at = d.event_created_at JOIN clients c ON c.id = d.client_id
          WHERE ${where(r)}
          ORDER BY d.id DESC LIMIT ${r.limit} OFFSET ${r.offset}`
    })

    const countRows = SqlSchema.findAll({
      Request: ListRequest,
      Result: CountRow,
      execute: (r) => sql`SELECT count(*)::int AS n FROM webhook_deliveries d WHERE ${where(r)}`
    })

    const oneRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, client_id: Schema.Int }),
      Result: DeliveryRow,
      execute: ({ client_id, id }) =>
        sql`SELECT d.id::int AS id, e.event_id, e.type, c.app_key, d.status, d.attempt_count AS attempts, d.next_attempt_at,
            d.last_status, d.last_error, d.created_at, d.updated_at
          FROM webhook_deliveries d JOIN events e ON e.id = d.event_id AND e.created_at = d.event_created_at JOIN clients c ON c.id = d.client_id
          WHERE d.id = ${id} AND d.client_id = ${client_id}`
    })

    const attemptRows = SqlSchema.findAll({
      Request: Schema.Array(Schema.Int),
      Result: AttemptRow,
      execute: (ids) =>
        sql`SELECT delivery_id::int AS delivery_id, attempt, attempted_at, duration_ms, status_code, error, response,
            next_attempt_at, worker FROM webhook_attempts WHERE delivery_id IN ${sql.in(ids)} ORDER BY delivery_id, attempt`
    })

    // A delivery being attempted right now is left to its attempt (its record would undo the change).
    const redeliverRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, client_id: Schema.NullOr(Schema.Int) }),
      Result: Schema.Struct({ id: Schema.Int, in_flight: Schema.Boolean }),
      execute: ({ client_id, id }) =>
        sql`WITH target AS (
            SELECT id, locked_by IS NOT NULL AND lease_until > now() AS in_flight FROM webhook_deliveries
            WHERE id = ${id} ${client_id === null ? sql`` : sql`AND client_id = ${client_id}`}
          ), updated AS (
            UPDATE webhook_deliveries d SET status = 'pending', schedule_step = 0, next_attempt_at = now(), updated_at = now()
            FROM target WHERE d.id = target.id AND NOT target.in_flight
            RETURNING d.id
          )
          SELECT id::int AS id, in_flight FROM target`
    })

    const redeliverSinceRows = SqlSchema.findAll({
      Request: Schema.Struct({ client_id: Schema.Int, since: Instant, status: DeliveryStatus }),
      Result: Schema.Struct({ id: Schema.Int }),
      execute: ({ client_id, since, status }) =>
        sql`UPDATE webhook_deliveries d SET status = 'pending', schedule_step = 0, next_attempt_at = now(), updated_at = now()
          WHERE d.client_id = ${client_id} AND d.status = ${status} AND d.created_at >= ${since}
            AND NOT (d.locked_by IS NOT NULL AND d.lease_until > now())
          RETURNING d.id::int AS id`
    })

    // The test event and its one delivery, in one statement: the fan-out skips an event that
    // names its client (migration 0015), and the feed never lists it.
    const testRow = SqlSchema.findOne({
      Request: Schema.Struct({ client_id: Schema.Int, event_id: Schema.String, type: Schema.String, data: JsonText }),
      Result: Schema.Struct({ id: Schema.Int }),
      execute: ({ client_id, data, event_id, type }) =>
        sql`WITH e AS (
            INSERT INTO events (event_id, type, permission, data, client_id)
            VALUES (${event_id}, ${type}, '', ${data}::jsonb, ${client_id}) RETURNING id, created_at
          )
          INSERT INTO webhook_deliveries (event_id, event_created_at, client_id, next_attempt_at)
          SELECT e.id, e.created_at, ${client_id}, now() FROM e
          RETURNING id::int AS id`
    })

    const notifyRow = SqlSchema.void({
      Request: Schema.Void,
      // pg_notify in the statement (NOTIFY takes no parameters), with a payload: a listener may
      // drop notifications without one.
      execute: () => sql`SELECT pg_notify(${WEBHOOK_CHANNEL}, 'due')`
    })

    /**
     * One turn of a daemon: records the finished attempts (each only while its worker still holds
     * it), then claims up to `free` due deliveries for the worker (at most `perClient` in flight
     * per client across every daemon) and commits both; each claim is a new attempt number.
     */
    const cycle = (records: ReadonlyArray<AttemptRecord>, worker: string, free: number, perClient: number, leaseMs: number) =>
      sqlEdge(Effect.map(cycleRows({ records, worker, free, perClient, leaseMs }), (rows) => {
        const recorded = new Set<number>()
        const claimed: Array<ClaimedDelivery> = []
        for (const row of rows) {
          if (row.recorded) recorded.add(row.id)
          else claimed.push(row)
        }
        return { recorded, claimed }
      }))

    /** Gives a claimed delivery back, due at once (the daemon stops mid-attempt). */
    const release = (id: number, worker: string, attempt: number) => sqlEdge(releaseRow({ id, worker, attempt }))

    /** Milliseconds until the next pending delivery comes due (none when nothing waits). */
    const nextDueInMs = sqlEdge(Effect.map(nextDueRow(undefined), Option.flatMap((r) => Option.fromNullishOr(r.ms))))

    const withAttempts = Effect.fnUntraced(function*(rows: ReadonlyArray<typeof DeliveryRow.Type>) {
      const attempts = rows.length === 0 ? [] : yield* attemptRows(rows.map((r) => r.id))
      const byDelivery = new Map<number, Array<DeliveryAttempt>>()
      for (const { delivery_id, ...a } of attempts) {
        const list = byDelivery.get(delivery_id) ?? []
        list.push(a)
        byDelivery.set(delivery_id, list)
      }
      return rows.map(({ total_count: _total, ...r }): Delivery => ({ ...r, attempt_history: byDelivery.get(r.id) ?? [] }))
    })

    /** A page of deliveries, newest first, each with every attempt, and how many match. */
    const list = Effect.fnUntraced(function*(filter: DeliveryFilter, page: { readonly limit: number; readonly offset: number }) {
      const request = { ...filter, ...page }
      const { rows, total } = yield* pageWithTotal(listRows(request), countRows(request), page.offset)
      return { deliveries: yield* withAttempts(rows), total }
    }, (effect) => sqlEdge(effect))

    /** One delivery of this client, with every attempt; none for an unknown id or another client's. */
    const findOwn = Effect.fnUntraced(function*(clientId: number, id: number) {
      const row = yield* oneRow({ id, client_id: clientId })
      if (Option.isNone(row)) return Option.none<Delivery>()
      return Option.some((yield* withAttempts([row.value]))[0]!)
    }, (effect) => sqlEdge(effect))

    /**
     * Makes a delivery due now with a fresh schedule (only the given client's, when one is given);
     * none for an unknown id. One being attempted right now is left as it is (in_flight).
     */
    const redeliver = Effect.fnUntraced(function*(id: number, clientId: number | null = null) {
      const row = yield* redeliverRow({ id, client_id: clientId })
      if (Option.isSome(row) && !row.value.in_flight) yield* notifyRow(undefined)
      return row
    }, (effect) => sqlEdge(effect))

    /** Makes every delivery of the client in that status since that instant due now; their ids. */
    const redeliverSince = Effect.fnUntraced(function*(clientId: number, since: Date, status: DeliveryStatus = "failed") {
      const rows = yield* redeliverSinceRows({ client_id: clientId, since, status })
      if (rows.length > 0) yield* notifyRow(undefined)
      return rows.map((r) => r.id)
    }, (effect) => sqlEdge(effect))

    /** Records an event for this client alone with its delivery, due now; the delivery's id. */
    const addressed = Effect.fnUntraced(function*(
      clientId: number,
      event: { readonly event_id: string; readonly type: string; readonly data: Record<string, unknown> }
    ) {
      const row = yield* testRow({ client_id: clientId, event_id: event.event_id, type: event.type, data: event.data })
      yield* notifyRow(undefined)
      return row.id
    }, (effect) => sqlEdge(effect))

    return { cycle, release, nextDueInMs, list, findOwn, redeliver, redeliverSince, addressed } as const
  })
}) {
  static readonly layer = Layer.effect(WebhooksRepo, WebhooksRepo.make)
}
