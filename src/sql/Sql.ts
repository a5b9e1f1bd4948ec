// The PostgreSQL client (from DATABASE_URL) and the migrator, shared by the API, the job daemon,
// the admin command line and the tests.
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type * as SqlClient from "effect/sql/SqlClient"

import { databaseTimeoutConfig, databaseUrlConfig, DEFAULT_DATABASE_TIMEOUT_SECONDS } from "../Config.js"
import { DatabaseTimeout } from "../repos/sqlHelpers.js"
import { migrate } from "./migrate.js"

export { migrate, MIGRATIONS_DIR } from "./migrate.js"

/** Where the PgClient connects, for the few connections that live outside its pool (LISTEN). */
export class DatabaseUrl extends Context.Service<DatabaseUrl, Redacted.Redacted<string>>()("Sql/DatabaseUrl") {}

/** What a database layer provides: the clients and where they connect. */
export type DatabaseServices = SqlClient.SqlClient | PgClient.PgClient | DatabaseUrl

/** How long an idle pooled connection waits before TCP keepalive probes check its peer. */
const KEEPALIVE = Duration.seconds(10)
/** The driver's own bound on opening a connection, kept below a shorter deadline. */
const MAX_CONNECT_TIMEOUT_SECONDS = 5

export interface DatabaseOptions {
  /** DATABASE_TIMEOUT_SECONDS: the deadline on each unit of database work (sqlHelpers' withDeadline). */
  readonly timeoutSeconds?: number
}

/**
 * The client over a pool of at most 10 connections, opened as needed. /metrics names the pool by
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
  return Layer.mergeAll(
    PgClient.layer({
      url,
      applicationName,
      maxConnections: 10,
      connectTimeout: Duration.min(timeout, Duration.seconds(MAX_CONNECT_TIMEOUT_SECONDS)),
      keepAlive: KEEPALIVE
    }),
    Layer.succeed(DatabaseUrl, url),
    Layer.succeed(DatabaseTimeout, timeout)
  )
}

export const PgLive = Layer.unwrap(
  Effect.map(
    Config.all([databaseUrlConfig, databaseTimeoutConfig]),
    ([url, timeoutSeconds]) => pgClientLayer(url, undefined, { timeoutSeconds })
  )
).pipe(Layer.orDie)

/** PgClient + migrations applied at layer construction. */
export const SqlLive = Layer.effectDiscard(Effect.orDie(migrate)).pipe(Layer.provideMerge(PgLive))
