// The PostgreSQL client (from DATABASE_URL) and the migrator, shared by the API, the job daemon,
// the admin command line and the tests.
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import pg from "pg"

import {
  databaseDirectUrlConfig,
  databaseIdleInTransactionConfig,
  type DatabasePooler,
  databasePoolerConfig,
  databaseTimeoutConfig,
  databaseUrlConfig,
  DEFAULT_DATABASE_TIMEOUT_SECONDS,
  DEFAULT_IDLE_IN_TRANSACTION_SECONDS
} from "../Config.js"
import { DatabaseTimeout } from "../repos/sqlHelpers.js"
import { migrate, MIGRATION_LOCK_KEY } from "./migrate.js"

export { migrate, MIGRATIONS_DIR } from "./migrate.js"

/**
 * Where the sessions that need a server session of their own connect (LISTEN): straight to
 * PostgreSQL (DATABASE_DIRECT_URL), never through a transaction pooler.
 */
export class DatabaseUrl extends Context.Service<DatabaseUrl, Redacted.Redacted<string>>()("Sql/DatabaseUrl") {}

/**
 * The settings sent in the startup packet of each session opened straight to PostgreSQL (LISTEN,
 * the migrator, and the pool when no pooler stands between): `idle_in_transaction_session_timeout`
 * in milliseconds, none when 0.
 */
export const sessionSettings = (idleInTransactionSeconds: number): Readonly<Record<string, string>> =>
  idleInTransactionSeconds > 0
    ? { idle_in_transaction_session_timeout: String(Math.round(idleInTransactionSeconds * 1000)) }
    : {}

/** What a database layer provides: the clients and where they connect. */
export type DatabaseServices = SqlClient.SqlClient | PgClient.PgClient | DatabaseUrl

/** How long an idle pooled connection waits before TCP keepalive probes check its peer. */
const KEEPALIVE = Duration.seconds(10)
/** The driver's own bound on opening a connection, kept below a shorter deadline. */
const MAX_CONNECT_TIMEOUT_SECONDS = 5

export interface DatabaseOptions {
  /** DATABASE_TIMEOUT_SECONDS: the deadline on each unit of database work (sqlHelpers' withDeadline). */
  readonly timeoutSeconds?: number
  /** DATABASE_DIRECT_URL: where LISTEN and the migrator connect; the pool's own URL when not given. */
  readonly directUrl?: Redacted.Redacted<string>
  /** DATABASE_POOLER: what stands between the pool and PostgreSQL (none by default). */
  readonly pooler?: DatabasePooler
  /** DATABASE_IDLE_IN_TRANSACTION_SECONDS (0: no limit). */
  readonly idleInTransactionSeconds?: number
}

/**
 * The client over a pool of at most 10 connections, opened as needed. Behind PgBouncer's
 * transaction pooling (`pooler`) each statement outside a transaction may run on another server
 * connection, so the pool prepares no statement (`pgbouncer`; `pgbouncer-prepared` leaves that to
 * PgBouncer's own support) and sends no startup setting, which PgBouncer would refuse: the
 * migrator sets `idle_in_transaction_session_timeout` as the role's default in the database instead. /metrics names the pool by
 * `PgClient.config.applicationName` and reads its limit from `config.maxConnections`. Nothing waits
 * on the database unbounded: a connection is opened within min(5 s, the deadline), an idle one
 * whose peer is gone is found by TCP keepalive, and database work runs under the deadline
 * (DatabaseTimeout, provided here).
 */
export const pgClientLayer = (
  url: Redacted.Redacted<string>,
  applicationName = "matchmaking-open-api",
  options: DatabaseOptions = {}
) => {
  const timeout = Duration.seconds(options.timeoutSeconds ?? DEFAULT_DATABASE_TIMEOUT_SECONDS)
  const pooler = options.pooler ?? "none"
  return Layer.mergeAll(
    PgClient.layer({
      url,
      applicationName,
      maxConnections: 10,
      connectTimeout: Duration.min(timeout, Duration.seconds(MAX_CONNECT_TIMEOUT_SECONDS)),
      keepAlive: KEEPALIVE,
      prepare: pooler !== "pgbouncer",
      startupParameters: pooler === "none"
        ? sessionSettings(options.idleInTransactionSeconds ?? DEFAULT_IDLE_IN_TRANSACTION_SECONDS)
        : {}
    }),
    Layer.succeed(DatabaseUrl, options.directUrl ?? url),
    Layer.succeed(DatabaseTimeout, timeout)
  )
}

/** The database settings from the configuration (DATABASE_*). */
export const databaseSettings = Config.all({
  url: databaseUrlConfig,
  directUrl: databaseDirectUrlConfig,
  pooler: databasePoolerConfig,
  timeoutSeconds: databaseTimeoutConfig,
  idleInTransactionSeconds: databaseIdleInTransactionConfig
})

export const PgLive = Layer.unwrap(
  Effect.map(databaseSettings, (settings) => pgClientLayer(settings.url, undefined, settings))
).pipe(Layer.orDie)

/**
 * PgClient + migrations applied at layer construction, over a connection of their own straight to
 * PostgreSQL (migrateDirect), closed once they are done.
 */
export const SqlLive = Layer.unwrap(
  Effect.map(databaseSettings, (settings) =>
    Layer.effectDiscard(Effect.orDie(migrateDirect(settings))).pipe(
      Layer.provideMerge(pgClientLayer(settings.url, undefined, settings))
    ))
).pipe(Layer.orDie)

/**
 * The migrations (the migrator's advisory lock is a session's: it must not go through a transaction
 * pooler) over one connection to `directUrl`; behind a pooler, then the role's default
 * `idle_in_transaction_session_timeout` in this database, which the pooler's server connections
 * take when they open (PgBouncer refuses it in a client's startup packet).
 */
export const migrateDirect = Effect.fnUntraced(function*(settings: {
  readonly directUrl: Redacted.Redacted<string>
  readonly pooler: DatabasePooler
  readonly idleInTransactionSeconds: number
}) {
  const applied = yield* migrate
  if (settings.pooler !== "none") yield* setRoleIdleInTransaction(settings.idleInTransactionSeconds)
  return applied
}, (effect, settings) =>
  effect.pipe(
    Effect.provide(
      PgClient.layer({
        url: settings.directUrl,
        applicationName: "matchmaking-open-api:migrate",
        // The lock's reserved connection and the migrator's transaction.
        maxConnections: 2,
        connectTimeout: Duration.seconds(MAX_CONNECT_TIMEOUT_SECONDS),
        keepAlive: KEEPALIVE,
        startupParameters: sessionSettings(settings.idleInTransactionSeconds)
      }).pipe(Layer.fresh)
    )
  ))

/**
 * `ALTER ROLE CURRENT_USER IN DATABASE <this one> SET idle_in_transaction_session_timeout` (a role
 * may set its own defaults), unless it holds that value already: new sessions of the service's
 * role in this database start with it, whichever way they come. Processes starting together take
 * turns on the migrations' lock (as a transaction lock), so that none meets another's update of
 * the same row; a role that may not do it is warned about, and the process goes on.
 */
const setRoleIdleInTransaction = Effect.fnUntraced(function*(seconds: number) {
  const sql = yield* SqlClient.SqlClient
  const value = `${Math.round(seconds * 1000)}ms`
  yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`
  const rows = yield* sql<{ readonly current: string | null; readonly db: string }>`
      SELECT (SELECT s FROM pg_db_role_setting r, unnest(r.setconfig) s
               WHERE r.setrole = (SELECT oid FROM pg_roles WHERE rolname = current_user)
                 AND r.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
                 AND s LIKE 'idle_in_transaction_session_timeout=%') AS current,
             current_database() AS db`
  const row = rows[0]
  if (row === undefined || row.current === `idle_in_transaction_session_timeout=${value}`) return
  yield* sql.unsafe(
    `ALTER ROLE CURRENT_USER IN DATABASE ${pg.escapeIdentifier(row.db)} SET idle_in_transaction_session_timeout = '${value}'`
  ).unprepared
}, (effect) =>
  effect.pipe(
    (self) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(self)),
    Effect.catch((error) =>
      Effect.logWarning(
        "could not set idle_in_transaction_session_timeout as the role's default in this database; set it with ALTER ROLE … IN DATABASE … SET (docs/operator.md, Behind PgBouncer)",
        error
      )
    )
  ))
