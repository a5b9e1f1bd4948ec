// Migrations: two processes starting on a new database at once must not collide; a migration file
// runs as its statements, cut where a `;` ends one.
import { randomBytes } from "node:crypto"

import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import { inject } from "vitest"

import { migrateDatabase } from "../src/sql/migrateUrl.js"
import { splitSqlStatements } from "../src/sql/splitSql.js"
import { pgClientLayer } from "../src/sql/Sql.js"
import { withDatabase } from "../src/sql/urls.js"

it.live("two concurrent migration runs on an empty database apply each migration once", () =>
  Effect.gen(function*() {
    const adminUrl = inject("databaseAdminUrl")
    const name = `mm_migrate_${randomBytes(4).toString("hex")}`
    const admin = Context.get(yield* Layer.build(pgClientLayer(Redacted.make(adminUrl), "test-admin")), SqlClient.SqlClient)
    yield* Effect.acquireRelease(
      admin.unsafe(`CREATE DATABASE "${name}" ENCODING 'UTF8' TEMPLATE template0`),
      () => Effect.ignore(admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))
    )
    const url = withDatabase(adminUrl, name)
    const runs = yield* Effect.promise(() => Promise.all([migrateDatabase(url), migrateDatabase(url), migrateDatabase(url)]))
    // One run applied everything; the others found the database current.
    const applied = runs.flat()
    expect(new Set(applied).size).toBe(applied.length)
    expect(runs.filter((r) => r.length > 0)).toHaveLength(1)
    expect(applied[0]).toBe("0001_foundation")
    const db = Context.get(yield* Layer.build(pgClientLayer(Redacted.make(url), "test")), SqlClient.SqlClient)
    const rows = yield* db<{ migration_id: number }>`SELECT migration_id FROM effect_sql_migrations ORDER BY migration_id`
    expect(rows.map((r) => r.migration_id)).toEqual([...new Set(rows.map((r) => r.migration_id))])
    expect(rows.length).toBeGreaterThan(0)
  }), { timeout: 60_000 })

it("a script is cut at the semicolons outside quotes, dollar-quoted bodies and comments", () => {
  const script = `-- a comment; not a statement
CREATE TABLE t (a text DEFAULT 'x;y', "b;c" int);
CREATE FUNCTION f() RETURNS text LANGUAGE plpgsql AS $body$ BEGIN RETURN 'a;b'; END $body$;
/* block; /* nested; */ still a comment; */ SELECT E'it\\'s; fine', $$;$$;
;
-- only a comment at the end;
`
  expect(splitSqlStatements(script)).toEqual([
    "-- a comment; not a statement\nCREATE TABLE t (a text DEFAULT 'x;y', \"b;c\" int)",
    "CREATE FUNCTION f() RETURNS text LANGUAGE plpgsql AS $body$ BEGIN RETURN 'a;b'; END $body$",
    "/* block; /* nested; */ still a comment; */ SELECT E'it\\'s; fine', $$;$$"
  ])
})
