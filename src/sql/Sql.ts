// The PostgreSQL client (from DATABASE_URL) and the migrator, shared by the API, the job daemon,
// the admin command line and the tests.
import * as path from "node:path"

import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Redacted from "effect/Redacted"

import { measuredPgClientLayer } from "../observability/pgPool.js"
import { projectRoot } from "../root.js"

// From the project root, so that the compiled build (dist/src/sql) finds them too.
export const MIGRATIONS_DIR = path.join(projectRoot(), "migrations")

/** Where the PgClient connects, for the few connections that live outside its pool (LISTEN). */
export class DatabaseUrl extends Context.Tag("Sql/DatabaseUrl")<DatabaseUrl, Redacted.Redacted<string>>() {}

/** What a database layer provides: the clients and where they connect. */
export type DatabaseServices = SqlClient.SqlClient | PgClient.PgClient | DatabaseUrl

// Built over a pool of our own making so that /metrics can show its connections in use and waiting.
export const pgClientLayer = (url: Redacted.Redacted<string>, applicationName = "matchmaking-open-api") =>
  Layer.merge(measuredPgClientLayer({ url, applicationName, maxConnections: 10 }), Layer.succeed(DatabaseUrl, url))

export const PgLive = Layer.unwrapEffect(
  Effect.map(Config.redacted("DATABASE_URL"), (url) => pgClientLayer(url))
).pipe(Layer.orDie)

/** Forward-only `.sql` files named `NNNN_name.sql`, applied in order. */
const sqlFileLoader: Migrator.Loader<FileSystem.FileSystem | Path.Path> = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const files = yield* fs.readDirectory(MIGRATIONS_DIR)
  const migrations: Array<Migrator.ResolvedMigration> = []
  for (const file of files) {
    const m = /^(\d+)_(.+)\.sql$/.exec(file)
    if (m === null) continue
    const text = yield* fs.readFileString(path.join(MIGRATIONS_DIR, file))
    migrations.push([
      Number(m[1]),
      m[2]!,
      Effect.succeed(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text)))
    ])
  }
  return migrations.sort(([a], [b]) => a - b)
}).pipe(
  Effect.mapError((cause) => new Migrator.MigrationError({ reason: "import-error", message: "cannot read migrations", cause }))
)

const MIGRATION_LOCK_KEY = 727_001_1

/**
 * Applies pending migrations. The migrator creates its table outside its own lock, so two
 * processes starting on a new database are serialised by a session advisory lock held on a
 * reserved connection for the whole run.
 */
export const migrate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* Effect.scoped(
    Effect.gen(function*() {
      const conn = yield* sql.reserve
      yield* conn.execute("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY], undefined)
      const applied = yield* Effect.ensuring(
        Migrator.make({})({ loader: sqlFileLoader }),
        Effect.orDie(conn.execute("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY], undefined))
      )
      // The migrations this run applied, as "0001_name" (empty when the database was current).
      return applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`)
    })
  )
}).pipe(Effect.provide(NodeContext.layer), Effect.withSpan("Sql.migrate"))

/** PgClient + migrations applied at layer construction. */
export const SqlLive = Layer.effectDiscard(Effect.orDie(migrate)).pipe(Layer.provideMerge(PgLive))
