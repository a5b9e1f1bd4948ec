// Work WeChat accounts and WeChat groups are one shape of record (SPEC §2.4, §2.5): created,
// read and locked while live, updated column by column, listed, soft-deleted, and every change
// written to the owner's operation log. These are the statements of that shape, parameterised by
// the owner's table, columns and row schemas; each repository adds what is its own (an account's
// associations, a group's members) and its unique rules.
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"
import type * as Statement from "effect/sql/Statement"

import { type PageLimits, pageOf, type PageParams } from "../../schema/Common.js"
import type { AccountStatus } from "../../schema/WorkWechats.js"
import type { DatabaseUnavailable } from "../domain/errors.js"
import type { LogEntry } from "../domain/operationLog.js"
import type { SyncWindow } from "../domain/sync.js"
import { makeOperationLogs } from "./operationLogs.js"
import { CountRow, Timestamp } from "./rows.js"
import { type ListPage, onUniqueViolation, pageTail, sqlEdge, syncColumns, uncountedList } from "./sqlHelpers.js"

type SyncPageRow = { readonly total_count?: number | undefined; readonly sync_at: string; readonly sync_id: number }
type Item<Row> = Omit<Row, keyof SyncPageRow>

/** A list's request to its statements: its filters, the fields its keyword may match, the sync window. */
export interface ListRequest<Params, Field> {
  readonly params: Params
  readonly searchable: ReadonlyArray<Field>
  readonly sync: SyncWindow | undefined
}

/** The `*.deleted` payload: `{id, deleted_at}`. */
export interface Deletion {
  readonly id: number
  readonly deleted_at: string
}

/** The statements every logged record has; `EDup` is the record's taken unique values. */
export interface LoggedRecords<Create, Row, Locked, PageRow, LogRow, Params, Field, EDup> {
  readonly insert: (input: Create) => Effect.Effect<number, EDup | DatabaseUnavailable>
  readonly findLive: (id: number) => Effect.Effect<Option.Option<Row>, DatabaseUnavailable>
  /** The live record, locked for the rest of the transaction. */
  readonly lockLive: (id: number) => Effect.Effect<Option.Option<Locked>, DatabaseUnavailable>
  /** Sets the given columns (the changed ones of an update); a taken unique value is refused. */
  readonly update: (id: number, change: Readonly<Record<string, unknown>>) => Effect.Effect<void, EDup | DatabaseUnavailable>
  /** Sets the status: no unique rule involves it, so it cannot collide. */
  readonly setStatus: (id: number, status: AccountStatus) => Effect.Effect<void, DatabaseUnavailable>
  /** Soft-deletes; the `*.deleted` payload, `{id, deleted_at}`. */
  readonly softDelete: (id: number) => Effect.Effect<Deletion, DatabaseUnavailable>
  /** `searchable`: the fields the keyword may match (DECISIONS §1: a masking client's unmasked ones). */
  readonly list: (
    params: Params,
    searchable: ReadonlyArray<Field>,
    sync: SyncWindow | undefined
  ) => Effect.Effect<ListPage<Item<PageRow>>, DatabaseUnavailable>
  /** Writes log entries for one record (operator: this interface). */
  readonly log: (id: number, entries: ReadonlyArray<LogEntry>) => Effect.Effect<void, DatabaseUnavailable>
  readonly listLogs: (id: number, p: PageParams, sync: SyncWindow | undefined) => Effect.Effect<ListPage<Item<LogRow>>, DatabaseUnavailable>
  /** The record exists, soft-deleted included: its audit trail outlives it (DECISIONS §5). */
  readonly logOwnerEverExisted: (id: number) => Effect.Effect<boolean, DatabaseUnavailable>
}

const IdRow = Schema.Struct({ id: Schema.Int })
const Change = Schema.Struct({ id: Schema.Int, change: Schema.Record(Schema.String, Schema.Unknown) })
const Deleted = Schema.Struct({ id: Schema.Int, deleted_at: Timestamp })

/**
 * The statements of one logged record's table. `columns` is the record's SELECT list over
 * `alias` (`row` decodes it; `pageRow` adds the window total and the sync key), `locked` the
 * columns an update may change with the id and status, `where` a list's condition over `alias`.
 */
export const makeLoggedRecords = <
  Create extends Readonly<Record<string, unknown>>,
  Row,
  Locked,
  PageRow extends SyncPageRow,
  LogRow extends SyncPageRow,
  Params extends PageParams,
  Field,
  EDup
>(
  sql: SqlClient.SqlClient,
  o: {
    readonly table: "work_wechats" | "work_groups"
    readonly alias: string
    readonly columns: string
    readonly create: Schema.Codec<Create, Create>
    readonly row: Schema.Codec<Row, unknown>
    readonly pageRow: Schema.Codec<PageRow, unknown>
    readonly locked: { readonly row: Schema.Codec<Locked, unknown>; readonly columns: string }
    /** More columns a soft delete sets (a group's group_no steps aside). */
    readonly deleteSets?: string
    /** The unique rules, by constraint: a write that breaks one is the client's 400. */
    readonly duplicates: Readonly<Record<string, () => EDup>>
    readonly list: {
      readonly limits: PageLimits
      readonly where: (request: ListRequest<Params, Field>) => Statement.Fragment
    }
    readonly logs: {
      readonly table: "work_wechat_logs" | "work_group_logs"
      readonly owner: "work_wechat_id" | "work_group_id"
      readonly limits: PageLimits
      readonly pageRow: Schema.Codec<LogRow, unknown>
    }
  }
): LoggedRecords<Create, Row, Locked, PageRow, LogRow, Params, Field, EDup> => {
  const table = sql(o.table)
  const alias = sql.literal(o.alias)
  const cols = sql.literal(o.columns)
  const at = `${o.alias}.updated_at`
  const id = `${o.alias}.id`

  const insert = SqlSchema.findOne({
    Request: o.create,
    Result: IdRow,
    execute: (input) => sql`INSERT INTO ${table} ${sql.insert({ ...input })} RETURNING id::int AS id`
  })

  const findLive = SqlSchema.findOneOption({
    Request: Schema.Int,
    Result: o.row,
    execute: (id) => sql`SELECT ${cols} FROM ${table} ${alias} WHERE ${alias}.id = ${id} AND ${alias}.deleted_at IS NULL`
  })

  const lockLive = SqlSchema.findOneOption({
    Request: Schema.Int,
    Result: o.locked.row,
    execute: (id) => sql`SELECT ${sql.literal(o.locked.columns)} FROM ${table} WHERE id = ${id} AND deleted_at IS NULL FOR UPDATE`
  })

  const update = SqlSchema.void({
    Request: Change,
    execute: ({ change, id }) => sql`UPDATE ${table} SET ${sql.update({ ...change })}, updated_at = now() WHERE id = ${id}`
  })

  const softDelete = SqlSchema.findOne({
    Request: Schema.Int,
    Result: Deleted,
    execute: (id) =>
      sql`UPDATE ${table} SET deleted_at = now(), updated_at = now()${
        o.deleteSets === undefined ? sql`` : sql.literal(`, ${o.deleteSets}`)
      } WHERE id = ${id}
          RETURNING id::int AS id, deleted_at`
  })

  // A list's statements are built per request (its condition is the owner's); their rows are
  // decoded by schemas compiled once.
  const decodePage = Schema.decodeUnknownEffect(Schema.Array(o.pageRow))
  const decodeCount = Schema.decodeUnknownEffect(Schema.Array(CountRow))
  const page = (request: ListRequest<Params, Field> & { readonly window: boolean }) => {
    const { offset, pageSize } = pageOf(request.params, o.list.limits)
    return Effect.flatMap(
      sql`SELECT ${cols}, ${syncColumns(sql, at, id)}${
        request.window ? sql`, count(*) OVER ()::int AS total_count` : sql``
      } FROM ${table} ${alias} ${
        pageTail(sql, { sync: request.sync, where: o.list.where(request), at, id, offsetOrder: `${id} DESC`, pageSize, offset })
      }`,
      decodePage
    )
  }
  const count = (request: ListRequest<Params, Field>) =>
    Effect.flatMap(sql`SELECT count(*)::int AS n FROM ${table} ${alias} WHERE ${o.list.where(request)}`, decodeCount)

  const logs = makeOperationLogs(sql, o.logs)
  const duplicates = onUniqueViolation(o.duplicates)

  return {
    insert: (input) => sqlEdge(duplicates(Effect.map(insert(input), (r) => r.id))),
    findLive: (id) => sqlEdge(findLive(id)),
    lockLive: (id) => sqlEdge(lockLive(id)),
    update: (id, change) => sqlEdge(duplicates(update({ id, change }))),
    setStatus: (id, status) => sqlEdge(update({ id, change: { status } })),
    softDelete: (id) => sqlEdge(softDelete(id)),
    list: (params, searchable, sync) => uncountedList({ page, count }, { params, searchable, sync }, pageOf(params, o.list.limits).offset),
    log: logs.write,
    listLogs: logs.page,
    logOwnerEverExisted: logs.ownerEverExisted
  }
}
