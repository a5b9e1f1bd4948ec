// Exact totals of the large lists from the counters of migration 0012 (`row_counts`), and their
// compaction. A total is the sum of one key's delta rows, so it is exact in any snapshot; folding
// the rows of each key into one keeps that sum a read of a few rows.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { CountRow } from "./rows.js"
import { sqlEdge } from "./sqlHelpers.js"

/** What a list counts by: the whole table (dim ""), or one stored column equal to one value. */
export interface CounterKey {
  readonly dim: string
  readonly val: string
}

/**
 * The counter answering a list's filter: none given (the whole table) or exactly one, on a counted
 * column; undefined when the filter needs a real count. A filter is given unless undefined (an
 * empty string filters too: the caller passes undefined for what its WHERE clause ignores).
 */
export const counterKeyOf = (
  filters: Readonly<Record<string, string | number | undefined>>,
  counted: ReadonlyArray<string>
): CounterKey | undefined => {
  const given = Object.entries(filters).filter(([, v]) => v !== undefined)
  if (given.length === 0) return { dim: "", val: "" }
  if (given.length > 1) return undefined
  const [dim, val] = given[0]!
  return counted.includes(dim) ? { dim, val: String(val) } : undefined
}

/**
 * For the repositories of counted tables: the total of `tbl`'s list under these filters from its
 * counters (one statement), or undefined when the filters need a real count.
 */
export const makeCounterTotal = (sql: SqlClient.SqlClient, tbl: string, counted: ReadonlyArray<string>) => {
  const total = SqlSchema.findOne({
    Request: Schema.Struct({ dim: Schema.String, val: Schema.String }),
    Result: CountRow,
    execute: ({ dim, val }) =>
      sql`SELECT coalesce(sum(n), 0)::int AS n FROM row_counts WHERE tbl = ${tbl} AND dim = ${dim} AND val = ${val}`
  })
  return (filters: Readonly<Record<string, string | number | undefined>>) => {
    const key = counterKeyOf(filters, counted)
    return key === undefined ? undefined : Effect.map(total(key), (row) => row.n)
  }
}

const COMPACT_LOCK = 727_002_1

export class RowCountsRepo extends Context.Service<RowCountsRepo>()("RowCounts/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // One statement: the rows of every key with more than one are deleted and their sum inserted
    // (a zero sum leaves no row). A reader sees the rows before or after, never both. Compactions
    // take turns on a transaction advisory lock, so two daemons never lock the same rows in
    // different orders; deltas appended meanwhile are outside the statement's snapshot and stay.
    // The lock is not what keeps the sums exact: a fold whose snapshot predates another's commit
    // (it took the lock just after) finds the rows that one deleted gone when it comes to delete
    // them (READ COMMITTED rechecks a row changed since the snapshot), so it neither returns nor
    // re-adds them, and it cannot see the row that one inserted. Each delta is summed once.
    const fold = SqlSchema.findOne({
      Request: Schema.Void,
      Result: CountRow,
      execute: () =>
        sql`WITH turn AS (SELECT pg_try_advisory_xact_lock(${COMPACT_LOCK}) AS mine),
          keys AS (SELECT tbl, dim, val FROM row_counts WHERE (SELECT mine FROM turn)
            GROUP BY tbl, dim, val HAVING count(*) > 1),
          gone AS (DELETE FROM row_counts r USING keys k
            WHERE r.tbl = k.tbl AND r.dim = k.dim AND r.val = k.val RETURNING r.tbl, r.dim, r.val, r.n),
          kept AS (INSERT INTO row_counts (tbl, dim, val, n)
            SELECT tbl, dim, val, sum(n) FROM gone GROUP BY tbl, dim, val HAVING sum(n) <> 0 RETURNING 1)
          SELECT (SELECT count(*) FROM keys)::int AS n`
    })

    return {
      /** Folds the delta rows of each counter into one; returns how many counters it folded. */
      compact: sqlEdge(Effect.map(fold(undefined), (row) => row.n))
    } as const
  })
}) {
  static readonly layer = Layer.effect(RowCountsRepo, RowCountsRepo.make)
}
