// The PostgreSQL client (from DATABASE_URL) and the migrator, shared by the API, the job daemon,
// the admin command line and the tests.
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"
import type * as SqlClient from "effect/sql/SqlClient"

import { databaseUrlConfig } from "../Config.js"
import { migrate } from "./migrate.js"

export { migrate, MIGRATIONS_DIR } from "./migrate.js"

/** Where the PgClient connects, for the few connections that live outside its pool (LISTEN). */
export class DatabaseUrl extends Context.Service<DatabaseUrl, Redacted.Redacted<string>>()("Sql/DatabaseUrl") {}

/** What a database layer provides: the clients and where they connect. */
export type DatabaseServices = SqlClient.SqlClient | PgClient.PgClient | DatabaseUrl

/**
 * The client over a pool of at most 10 connections, opened as needed. /metrics names the pool by
 * `PgClient.config.applicationName` and reads its limit from `config.maxConnections`.
 */
export const pgClientLayer = (url: Redacted.Redacted<string>, applicationName = "matchmaking-open-api") =>
  Layer.merge(PgClient.layer({ url, applicationName, maxConnections: 10 }), Layer.succeed(DatabaseUrl, url))

export const PgLive = Layer.unwrap(
  Effect.map(databaseUrlConfig, (url) => pgClientLayer(url))
).pipe(Layer.orDie)

/** PgClient + migrations applied at layer construction. */
export const SqlLive = Layer.effectDiscard(Effect.orDie(migrate)).pipe(Layer.provideMerge(PgLive))
