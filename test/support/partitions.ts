// The partitions a partitioned table has now, by name (for the retention tests).
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

/** The names of `table`'s partitions (its DEFAULT one included), sorted. */
export const partitionsOf = (table: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ name: string }>`SELECT c.relname::text AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = ${table}::regclass ORDER BY 1`
    return rows.map((r) => r.name)
  })
