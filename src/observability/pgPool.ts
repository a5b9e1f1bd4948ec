// The database pool as /metrics shows it. The native driver keeps its pool to itself, so the pool is
// seen from both ends: its name (the connections' application_name, the `pool` label) and limit from
// the client's own settings, and its connections from the server, which knows each session's state
// (pg_stat_activity of this database and application name; the scrape's own session left out).
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"

import { poolConnectionsIdle, poolConnectionsInUse, poolConnectionsMax, poolWaiting, update } from "./metrics.js"

/** The pool size PgClient takes when none is given. */
const DEFAULT_MAX_CONNECTIONS = 10

interface Sessions {
  readonly in_use: number
  readonly idle: number
  readonly waiting: number
}

/**
 * Sets the pool gauges of this process's client. Fails when the database does not answer; the
 * caller keeps the last values then.
 */
export const refreshPoolGauges = Effect.gen(function*() {
  const sql = yield* PgClient.PgClient
  const name = sql.config.applicationName ?? "@effect/sql-pg"
  const max = "maxConnections" in sql.config && typeof sql.config.maxConnections === "number"
    ? sql.config.maxConnections
    : DEFAULT_MAX_CONNECTIONS
  const rows = yield* sql<Sessions>`
    SELECT count(*) FILTER (WHERE state IS DISTINCT FROM 'idle')::int AS in_use,
           count(*) FILTER (WHERE state = 'idle')::int AS idle,
           count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS waiting
      FROM pg_stat_activity
     WHERE datname = current_database() AND application_name = ${name} AND pid <> pg_backend_pid()`
  const sessions = rows[0] ?? { in_use: 0, idle: 0, waiting: 0 }
  const labels = { pool: name }
  yield* update(poolConnectionsMax, labels, max)
  // The scrape's own connection is in use while it asks.
  yield* update(poolConnectionsInUse, labels, sessions.in_use + 1)
  yield* update(poolConnectionsIdle, labels, sessions.idle)
  yield* update(poolWaiting, labels, sessions.waiting)
})
