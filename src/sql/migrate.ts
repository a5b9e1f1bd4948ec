// The migrator: forward-only `.sql` files applied in order under a session advisory lock. Kept apart
// from Sql.ts (which re-exports it) so that tooling can migrate over a plain client.
import * as path from "node:path"

import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"

import { projectRoot } from "../root.js"
import { splitSqlStatements } from "./splitSql.js"

// From the project root, so that the compiled build (dist/src/sql) finds them too.
export const MIGRATIONS_DIR = path.join(projectRoot(), "migrations")

/**
 * Forward-only `.sql` files named `NNNN_name.sql`, applied in order. The native driver runs one
 * statement per message, so each file runs as its statements, one after the other (inside the
 * migrator's transaction).
 */
const sqlFileLoader: Migrator.Loader<FileSystem.FileSystem> = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const files = yield* fs.readDirectory(MIGRATIONS_DIR)
  const migrations: Array<Migrator.ResolvedMigration> = []
  for (const file of files) {
    const m = /^(\d+)_(.+)\.sql$/.exec(file)
    if (m === null) continue
    const statements = splitSqlStatements(yield* fs.readFileString(path.join(MIGRATIONS_DIR, file)))
    migrations.push([
      Number(m[1]),
      m[2]!,
      Effect.succeed(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => Effect.forEach(statements, (statement) => sql.unsafe(statement).unprepared, { discard: true })
        )
      )
    ])
  }
  return migrations.sort(([a], [b]) => a - b)
}).pipe(
  Effect.mapError((cause) => new Migrator.MigrationError({ kind: "ImportError", message: "cannot read migrations", cause }))
)

/** The advisory lock key the migrations (and the settings applied with them) serialise on. */
export const MIGRATION_LOCK_KEY = 727_001_1

/** The migrations `loader` gives, applied under the session advisory lock held on a reserved connection. */
const migrateLocked = Effect.fnUntraced(function*(sql: SqlClient.SqlClient, loader: Migrator.Loader<FileSystem.FileSystem>) {
  const conn = yield* sql.reserve
  yield* conn.execute("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY], undefined)
  const applied = yield* Effect.ensuring(
    Migrator.make({})({ loader }),
    Effect.orDie(conn.execute("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY], undefined))
  )
  // The migrations this run applied, as "0001_name" (empty when the database was current).
  return applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`)
})

/**
 * Applies pending migrations, up to and including number `through` (all of them by default: a
 * test may stop earlier to write rows as an older schema held them). The migrator creates its
 * table outside its own lock, so two processes starting on a new database are serialised by a
 * session advisory lock held on a reserved connection for the whole run: the client must connect
 * straight to PostgreSQL (Sql.ts' migrateDirect), never through a transaction pooler, which would
 * run the lock and its release on server connections of its choosing.
 */
export const migrateThrough = Effect.fnUntraced(function*(through: number) {
  const sql = yield* SqlClient.SqlClient
  const loader = Effect.map(sqlFileLoader, (migrations) => migrations.filter(([id]) => id <= through))
  return yield* Effect.scoped(migrateLocked(sql, loader))
}, (effect) => effect.pipe(Effect.provide(NodeFileSystem.layer), Effect.withSpan("Sql.migrate")))

/** Applies every pending migration. */
export const migrate = migrateThrough(Number.POSITIVE_INFINITY)
