// Partitions of the tables kept by retention (issue 38, src/domain/partitions.ts decides which):
// the only DDL the service runs outside migrations. Reads a parent's partitions and their bounds
// from the catalog, creates one (moving out of the DEFAULT partition the rows that belong to it),
// detaches and drops one. Every operation runs inside the caller's transaction, which first takes
// the policy's advisory lock (tryLock), so two daemons never run DDL on the same tables at once,
// and bounds its lock waits (lockTimeout), so DDL queued behind a long query does not queue the
// service's own statements behind it for long.
//
// DDL takes no parameters: identifiers are quoted here (quoteIdent) and bounds are literals made
// from numbers (boundLiteral), never text from outside.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"
import type * as Statement from "effect/sql/Statement"

import type { ExistingPartition } from "../domain/partitions.js"
import { sqlEdge } from "./sqlHelpers.js"

/** An identifier quoted for PostgreSQL (a double quote doubled). */
export const quoteIdent = (name: string): string => `"${name.replaceAll("\"", "\"\"")}"`

/** The partition key's type: an instant, or epoch milliseconds in an integer column. */
export type PartitionKeyType = "timestamptz" | "epoch_ms"

/** A bound as an SQL literal of the key's type (from a number only). */
export const boundLiteral = (type: PartitionKeyType, ms: number): string => {
  if (!Number.isFinite(ms)) throw new Error(`partition bound ${ms} is not a finite number`)
  return type === "timestamptz" ? `'${new Date(ms).toISOString()}'` : String(Math.trunc(ms))
}

/** A partitioned table as the catalog holds it. */
export interface PartitionedTable {
  readonly schema: string
  readonly table: string
  /** The key column (a single-column range key). */
  readonly column: string
  readonly keyType: PartitionKeyType
  readonly partitions: ReadonlyArray<ExistingPartition>
  /** The smallest key in the DEFAULT partition, epoch milliseconds; null when it is empty or there is none. */
  readonly oldestDefaultMs: number | null
  /** The DEFAULT partition is unlogged (request_nonces, migration 0025): so is every partition created. */
  readonly unlogged: boolean
}

/** Advisory lock class of partition maintenance (the second key is the policy name's hash). */
export const PARTITIONS_LOCK_CLASS = 7_270_092

const ParentRow = Schema.Struct({
  schema: Schema.String,
  column: Schema.NullOr(Schema.String),
  key_type: Schema.NullOr(Schema.String),
  strategy: Schema.NullOr(Schema.String),
  key_columns: Schema.NullOr(Schema.Int)
})

const PartitionRow = Schema.Struct({
  name: Schema.String,
  is_default: Schema.Boolean,
  from_ms: Schema.NullOr(Schema.Number),
  to_ms: Schema.NullOr(Schema.Number)
})

const keyTypeOf = (type: string): PartitionKeyType | undefined =>
  type === "timestamp with time zone" ? "timestamptz" : type === "bigint" || type === "integer" ? "epoch_ms" : undefined

export class PartitionsRepo extends Context.Service<PartitionsRepo>()("Partitions/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // The table's schema, and when it is range-partitioned on one column, that column and its type.
    const parentRow = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ParentRow,
      execute: (table) =>
        sql`SELECT n.nspname AS schema, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS key_type,
            p.partstrat::text AS strategy, p.partnatts::int AS key_columns
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          LEFT JOIN pg_partitioned_table p ON p.partrelid = c.oid
          LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = p.partattrs[0]
          WHERE c.oid = to_regclass(${table})`
    })

    // Each partition's bounds as the catalog prints them (`FOR VALUES FROM ('…') TO ('…')`, or
    // `DEFAULT`), turned into epoch milliseconds by PostgreSQL itself (the printed instant carries
    // its offset); MINVALUE and MAXVALUE are null.
    const partitionRows = SqlSchema.findAll({
      Request: Schema.Struct({ table: Schema.String, instant: Schema.Boolean }),
      Result: PartitionRow,
      execute: ({ instant, table }) =>
        sql`WITH parts AS (
            SELECT c.relname::text AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
            FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = to_regclass(${table})
          ), split AS (
            SELECT name, bound = 'DEFAULT' AS is_default,
              regexp_match(bound, '^FOR VALUES FROM \\((.*)\\) TO \\((.*)\\)$') AS m FROM parts
          )
          SELECT name, is_default,
            ${boundMs(instant, sql`m[1]`)} AS from_ms,
            ${boundMs(instant, sql`m[2]`)} AS to_ms
          FROM split ORDER BY name`
    })

    function boundMs(instant: boolean, text: Statement.Fragment): Statement.Fragment {
      return instant
        ? sql`CASE WHEN ${text} IS NULL OR ${text} IN ('MINVALUE', 'MAXVALUE') THEN NULL
            ELSE (extract(epoch FROM btrim(${text}, '''')::timestamptz) * 1000)::float8 END`
        : sql`CASE WHEN ${text} IS NULL OR ${text} IN ('MINVALUE', 'MAXVALUE') THEN NULL
            ELSE btrim(${text}, '''')::float8 END`
    }

    const lockRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ mine: Schema.Boolean }),
      execute: (name) => sql`SELECT pg_try_advisory_xact_lock(${PARTITIONS_LOCK_CLASS}, hashtext(${name})) AS mine`
    })

    const ddl = (text: string) => sql.unsafe(text).unprepared

    /**
     * The table's partitions with their bounds; none when the table does not exist or is not
     * partitioned by range on one column of an instant or integer type.
     */
    const list = Effect.fnUntraced(function*(table: string) {
      const parent = yield* parentRow(table)
      if (Option.isNone(parent)) return Option.none<PartitionedTable>()
      const { column, key_columns, key_type, schema, strategy } = parent.value
      const keyType = key_type === null ? undefined : keyTypeOf(key_type)
      if (strategy !== "r" || key_columns !== 1 || column === null || keyType === undefined) return Option.none<PartitionedTable>()
      const rows = yield* partitionRows({ table, instant: keyType === "timestamptz" })
      const partitions = rows.map((r): ExistingPartition => ({
        name: r.name,
        isDefault: r.is_default,
        fromMs: r.from_ms,
        toMs: r.to_ms
      }))
      const fallback = partitions.find((p) => p.isDefault)
      let oldestDefaultMs: number | null = null
      let unlogged = false
      if (fallback !== undefined) {
        const key = quoteIdent(column)
        const min = keyType === "timestamptz" ? `(extract(epoch FROM min(${key})) * 1000)::float8` : `min(${key})::float8`
        const source = `${quoteIdent(schema)}.${quoteIdent(fallback.name)}`
        const rows = yield* sql.unsafe<{ readonly ms: number | null; readonly unlogged: boolean }>(
          `SELECT ${min} AS ms, (SELECT relpersistence = 'u' FROM pg_class WHERE oid = '${source}'::regclass) AS unlogged FROM ${source}`
        ).unprepared
        oldestDefaultMs = rows[0]?.ms ?? null
        unlogged = rows[0]?.unlogged === true
      }
      return Option.some<PartitionedTable>({ schema, table, column, keyType, partitions, oldestDefaultMs, unlogged })
    }, (effect) => sqlEdge(effect))

    /**
     * Takes the policy's advisory lock for the rest of the transaction; false when another
     * session (another daemon) holds it. Call first in the transaction.
     */
    const tryLock = (policyName: string) => sqlEdge(Effect.map(lockRow(policyName), (r) => r.mine))

    /** Bounds every lock wait of the rest of the transaction. */
    const lockTimeout = (ms: number) => sqlEdge(ddl(`SET LOCAL lock_timeout = ${Math.max(1, Math.trunc(ms))}`))

    /**
     * Creates the partition [fromMs, toMs) of the table: as a table of its own (LIKE the parent),
     * filled with the rows of that range the DEFAULT partition holds (those are moved), then
     * attached (ATTACH takes a SHARE UPDATE EXCLUSIVE lock on the parent, so inserts and reads go
     * on; CREATE … PARTITION OF would take an ACCESS EXCLUSIVE one). Returns how many rows moved.
     */
    const create = Effect.fnUntraced(function*(
      parent: PartitionedTable,
      partition: { readonly name: string; readonly fromMs: number; readonly toMs: number }
    ) {
      const schema = quoteIdent(parent.schema)
      const table = `${schema}.${quoteIdent(parent.table)}`
      const target = `${schema}.${quoteIdent(partition.name)}`
      const column = quoteIdent(parent.column)
      const from = boundLiteral(parent.keyType, partition.fromMs)
      const to = boundLiteral(parent.keyType, partition.toMs)
      yield* ddl(
        `CREATE ${
          parent.unlogged ? "UNLOGGED " : ""
        }TABLE ${target} (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)`
      )
      let moved = 0
      const fallback = parent.partitions.find((p) => p.isDefault)
      if (fallback !== undefined) {
        const source = `${schema}.${quoteIdent(fallback.name)}`
        // Held until commit: no row of the range can land in the DEFAULT partition between the
        // move and the attach (which would then fail). Inserts of other ranges go on.
        yield* ddl(`LOCK TABLE ${source} IN ACCESS EXCLUSIVE MODE`)
        const rows = yield* sql.unsafe<{ readonly n: number }>(
          `WITH moved AS (DELETE FROM ${source} WHERE ${column} >= ${from} AND ${column} < ${to} RETURNING *),
              copied AS (INSERT INTO ${target} SELECT * FROM moved RETURNING 1)
            SELECT count(*)::int AS n FROM copied`
        ).unprepared
        moved = rows[0]?.n ?? 0
      }
      // The check lets ATTACH skip scanning the new partition; it is dropped once attached.
      const check = quoteIdent(`${partition.name}_bounds`)
      yield* ddl(
        `ALTER TABLE ${target} ADD CONSTRAINT ${check} CHECK (${column} IS NOT NULL AND ${column} >= ${from} AND ${column} < ${to})`
      )
      yield* ddl(`ALTER TABLE ${table} ATTACH PARTITION ${target} FOR VALUES FROM (${from}) TO (${to})`)
      yield* ddl(`ALTER TABLE ${target} DROP CONSTRAINT ${check}`)
      return moved
    }, (effect) => sqlEdge(effect))

    /**
     * Locks the tables (ACCESS EXCLUSIVE, until the transaction ends) in the order given, which is
     * the order their writers lock them in (an event before its deliveries, a delivery before its
     * attempts): the locks that DETACH takes table by table would otherwise meet a writer holding
     * the next table in a deadlock. What was read under the locks stays true until commit.
     */
    const lockTables = (parents: ReadonlyArray<Pick<PartitionedTable, "schema" | "table">>) =>
      parents.length === 0
        ? Effect.void
        : sqlEdge(
          ddl(`LOCK TABLE ${parents.map((p) => `${quoteIdent(p.schema)}.${quoteIdent(p.table)}`).join(", ")} IN ACCESS EXCLUSIVE MODE`)
        )

    /** Detaches the partition from the table and drops it, with every row it holds. */
    const drop = Effect.fnUntraced(function*(parent: Pick<PartitionedTable, "schema" | "table">, name: string) {
      const schema = quoteIdent(parent.schema)
      const target = `${schema}.${quoteIdent(name)}`
      yield* ddl(`ALTER TABLE ${schema}.${quoteIdent(parent.table)} DETACH PARTITION ${target}`)
      yield* ddl(`DROP TABLE ${target}`)
    }, (effect) => sqlEdge(effect))

    /**
     * Deletes the rows of the table's DEFAULT partition whose key is below `beforeMs` (rows that a
     * partition past the retention would hold: inserted while no daemon ran, too old to be given a
     * partition); how many. Only for tables whose rows nothing else refers to.
     */
    const pruneDefault = Effect.fnUntraced(function*(parent: PartitionedTable, beforeMs: number) {
      const fallback = parent.partitions.find((p) => p.isDefault)
      if (fallback === undefined || parent.oldestDefaultMs === null || parent.oldestDefaultMs >= beforeMs) return 0
      const source = `${quoteIdent(parent.schema)}.${quoteIdent(fallback.name)}`
      const rows = yield* sql.unsafe<{ readonly n: number }>(
        `WITH gone AS (DELETE FROM ${source} WHERE ${quoteIdent(parent.column)} < ${boundLiteral(parent.keyType, beforeMs)} RETURNING 1)
          SELECT count(*)::int AS n FROM gone`
      ).unprepared
      return rows[0]?.n ?? 0
    }, (effect) => sqlEdge(effect))

    return { list, tryLock, lockTimeout, create, lockTables, drop, pruneDefault } as const
  })
}) {
  static readonly layer = Layer.effect(PartitionsRepo, PartitionsRepo.make)
}
