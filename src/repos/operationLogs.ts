// Operation logs of work accounts and groups share one shape (SPEC §2.4, §2.5): writing entries
// (operator: this interface) and reading a page of them, newest first, for one owner row. Each
// owner's repository passes its log record's row schema; rows are decoded by it at the boundary.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { type PageLimits, pageOf, type PageParams } from "../../schema/Common.js"
import { LogAction, LogValue } from "../../schema/WorkWechats.js"
import type { LogEntry } from "../domain/operationLog.js"
import { SyncWindow } from "../domain/sync.js"
import { CountRow } from "./rows.js"
import { insertRows, listPage, pageTail, sinceFilter, sqlEdge, syncColumns } from "./sqlHelpers.js"

type SyncPageRow = { readonly total_count?: number | undefined; readonly sync_at: string; readonly sync_id: number }

/** Operations made through this interface log operator 0, "Open API" (SPEC §2.4). */
export const OPERATOR = { id: 0, name: "Open API" } as const

const OWNER_TABLE = { work_wechat_logs: "work_wechats", work_group_logs: "work_groups" } as const

const nullableText = Schema.optional(Schema.NullOr(Schema.String))

/**
 * The value columns of a log row as stored (json since migration 0018: a status or an id as a
 * JSON string, an update's changed fields as an object); each owner's page row takes them in
 * place of the contract's wire text.
 */
export const StoredLogValues = { from_value: Schema.NullOr(LogValue), to_value: Schema.NullOr(LogValue) }

/** One entry to write, as the domain describes it (absent details are stored as NULL). */
const Entry = Schema.Struct({
  action: LogAction,
  target_type: nullableText,
  target_id: Schema.optional(Schema.NullOr(Schema.Int)),
  from_value: Schema.optional(StoredLogValues.from_value),
  to_value: Schema.optional(StoredLogValues.to_value),
  remark: nullableText
})

/**
 * A value for a json column: its JSON text, which PostgreSQL's `json` keeps as written (the
 * object's keys in the order the change named them; `jsonb` would reorder them).
 */
const jsonText = (value: typeof LogValue.Type | null | undefined): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value)

const PageRequest = Schema.Struct({
  ownerId: Schema.Int,
  offset: Schema.Int,
  pageSize: Schema.Int,
  sync: Schema.UndefinedOr(SyncWindow)
})
const CountRequest = Schema.Struct({ ownerId: Schema.Int, sync: Schema.UndefinedOr(SyncWindow) })

/**
 * The log helpers of one owner table. `pageRow` is the row schema of a page: the contract's log
 * record with `created_at` as platform-time text, the owner's `total_count` (optional: by `page`
 * only) and the sync key (SyncKeyFields); the SELECT gives exactly those columns.
 */
export const makeOperationLogs = <A extends SyncPageRow, I, R>(
  sql: SqlClient.SqlClient,
  options: {
    readonly table: "work_wechat_logs" | "work_group_logs"
    readonly owner: "work_wechat_id" | "work_group_id"
    readonly limits: PageLimits
    readonly pageRow: Schema.Codec<A, I, R>
  }
) => {
  const { limits, owner, pageRow, table } = options

  const insert = SqlSchema.void({
    Request: Schema.Struct({ ownerId: Schema.Int, entries: Schema.Array(Entry) }),
    execute: ({ entries, ownerId }) =>
      sql`INSERT INTO ${sql(table)} ${
        sql.insert(insertRows(entries.map((e) => ({
          [owner]: ownerId,
          action: e.action,
          target_type: e.target_type ?? null,
          target_id: e.target_id ?? null,
          from_value: jsonText(e.from_value),
          to_value: jsonText(e.to_value),
          operator_id: OPERATOR.id,
          operator_name: OPERATOR.name,
          remark: e.remark ?? null
        }))))
      }`
  })

  /** Writes log entries for one owner (operator: this interface); none is no statement. */
  const write = (ownerId: number, entries: ReadonlyArray<LogEntry>) =>
    entries.length === 0 ? Effect.void : sqlEdge(insert({ ownerId, entries }))

  const counter = sql`(SELECT coalesce(sum(n), 0) FROM row_counts WHERE tbl = ${table} AND dim = ${owner} AND val = `
  // The total is the owner's counter (migration 0014: the logs count their rows per owner),
  // read in the page's statement and so in its snapshot; a page past the end counts the rows. In
  // sync order (entries never change: created_at is their updated_at) the total is counted apart.
  const pageRows = SqlSchema.findAll({
    Request: Schema.Struct({ ...PageRequest.fields, window: Schema.Boolean }),
    Result: pageRow,
    execute: ({ offset, ownerId, pageSize, sync, window }) =>
      sql`SELECT id::int AS id, ${sql(owner)}::int AS ${sql(owner)}, action, target_type, target_id::int AS target_id,
          from_value, to_value, operator_id::int AS operator_id, operator_name, remark, created_at,
          ${syncColumns(sql, `${table}.created_at`, `${table}.id`)}
          ${window ? sql`, ${counter}${ownerId}::text)::int AS total_count` : sql``}
        FROM ${sql(table)} ${
        pageTail(sql, {
          sync,
          where: sql.and([sql`${sql(owner)} = ${ownerId}`, ...sinceFilter(sql, sync, `${table}.created_at`)]),
          at: `${table}.created_at`,
          id: `${table}.id`,
          offsetOrder: `${table}.id DESC`,
          pageSize,
          offset
        })
      }`
  })
  const countRows = SqlSchema.findAll({
    Request: CountRequest,
    Result: CountRow,
    execute: ({ ownerId, sync }) =>
      sync?.since === undefined
        ? sql`SELECT ${counter}${ownerId}::text)::int AS n`
        : sql`SELECT count(*)::int AS n FROM ${sql(table)}
          WHERE ${sql.and([sql`${sql(owner)} = ${ownerId}`, ...sinceFilter(sql, sync, `${table}.created_at`)])}`
  })

  /** A page of one owner's entries: newest first, or in sync order (DECISIONS §12). */
  const page = (ownerId: number, p: PageParams, sync: SyncWindow | undefined) => {
    const { offset, pageSize } = pageOf(p, limits)
    return sqlEdge(listPage({
      sync,
      counter: undefined,
      page: (window) => pageRows({ ownerId, offset, pageSize, sync, window }),
      count: countRows({ ownerId, sync }),
      offset
    }))
  }

  const everExisted = SqlSchema.findOne({
    Request: Schema.Int,
    Result: Schema.Struct({ found: Schema.Boolean }),
    execute: (ownerId) => sql`SELECT EXISTS (SELECT 1 FROM ${sql(OWNER_TABLE[table])} WHERE id = ${ownerId}) AS found`
  })

  /** The owner row exists, soft-deleted included: its audit trail outlives it (DECISIONS §5). */
  const ownerEverExisted = (ownerId: number) => sqlEdge(Effect.map(everExisted(ownerId), (r) => r.found))

  return { write, page, ownerEverExisted } as const
}
