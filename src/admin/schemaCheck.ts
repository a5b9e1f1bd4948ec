// The admin command line runs against a database the API, the daemon or `npm run migrate` has
// migrated; it never migrates itself. Before a command runs, it checks that every migration of
// this checkout is applied, so that an old schema is one clear line, not a failed statement.
import * as fs from "node:fs"

import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"

import { MIGRATIONS_DIR } from "../sql/Sql.js"
import { AdminSetupError } from "./cli.js"

/** The newest migration of this checkout (`NNNN_name.sql`), by number. */
const newestMigration = (): number =>
  Math.max(
    0,
    ...fs.readdirSync(MIGRATIONS_DIR).flatMap((file) => {
      const m = /^(\d+)_.+\.sql$/.exec(file)
      return m === null ? [] : [Number(m[1])]
    })
  )

/** Fails (AdminSetupError) unless the database has every migration of this checkout. */
export const checkSchemaCurrent = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const newest = newestMigration()
  const applied = yield* Effect.gen(function*() {
    // A name that does not exist cannot appear in a statement at all: looked up first.
    const [table] = yield* sql<{ found: boolean }>`SELECT to_regclass('effect_sql_migrations') IS NOT NULL AS found`
    if (table?.found !== true) return null
    const [row] = yield* sql<{ id: number }>`SELECT coalesce(max(migration_id), 0)::int AS id FROM effect_sql_migrations`
    return row?.id ?? 0
  }).pipe(Effect.mapError((e) => new AdminSetupError({ message: `cannot read the database's schema version: ${e.message}` })))
  if (applied === null || applied < newest) {
    return yield* new AdminSetupError({
      message: `the database schema is not current (${
        applied === null ? "never migrated" : `at migration ${applied}`
      }, this checkout has ${newest}): run npm run migrate`
    })
  }
})

export const SchemaCheckLive = Layer.effectDiscard(checkSchemaCurrent)
