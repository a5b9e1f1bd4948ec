// Operation logs of work accounts and groups share one shape (SPEC §2.4, §2.5): writing entries
// (operator: this interface) and reading a page of them, newest first, for one owner row.
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type PageLimits, type PageParams, pageOf } from "../../schema/Common.js"
import type { LogEntry } from "../domain/operationLog.js"
import { formatTimestamp } from "../domain/time.js"
import { pageWithTotal } from "./sqlHelpers.js"

/** Operations made through this interface log operator 0, "Open API" (SPEC §2.4). */
export const OPERATOR = { id: 0, name: "Open API" } as const

export interface OperationLogRow {
  readonly id: number
  readonly action: LogEntry["action"]
  readonly target_type: string | null
  readonly target_id: number | null
  readonly from_value: string | null
  readonly to_value: string | null
  readonly operator_id: number
  readonly operator_name: string
  readonly remark: string | null
  readonly created_at: string
}

const OWNER_TABLE = { work_wechat_logs: "work_wechats", work_group_logs: "work_groups" } as const

export const makeOperationLogs = <Owner extends "work_wechat_id" | "work_group_id">(
  sql: SqlClient.SqlClient,
  table: "work_wechat_logs" | "work_group_logs",
  owner: Owner,
  limits: PageLimits,
  timeZone: string
) => {
  const write = (ownerId: number, entries: ReadonlyArray<LogEntry>) =>
    entries.length === 0
      ? Effect.void
      : Effect.asVoid(sql`INSERT INTO ${sql(table)} ${sql.insert(entries.map((e) => ({
        [owner]: ownerId,
        action: e.action,
        target_type: e.target_type ?? null,
        target_id: e.target_id ?? null,
        from_value: e.from_value ?? null,
        to_value: e.to_value ?? null,
        operator_id: OPERATOR.id,
        operator_name: OPERATOR.name,
        remark: e.remark ?? null
      })))}`)

  const page = (ownerId: number, p: PageParams) =>
    Effect.gen(function*() {
      const { pageSize, offset } = pageOf(p, limits)
      const { rows, total } = yield* pageWithTotal(
        sql<Omit<OperationLogRow, "created_at"> & { created_at: Date; total_count: number }>`
          SELECT id::int AS id, ${sql(owner)}::int AS ${sql(owner)}, action, target_type, target_id::int AS target_id,
            from_value, to_value, operator_id::int AS operator_id, operator_name, remark, created_at,
            count(*) OVER ()::int AS total_count
          FROM ${sql(table)} WHERE ${sql(owner)} = ${ownerId} ORDER BY id DESC LIMIT ${pageSize} OFFSET ${offset}`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)} WHERE ${sql(owner)} = ${ownerId}`,
        offset
      )
      const list = rows.map(({ total_count: _, ...r }) => ({ ...r, created_at: formatTimestamp(r.created_at, timeZone) }))
      return { list: list as Array<OperationLogRow & Record<Owner, number>>, total }
    })

  /** The owner row exists, soft-deleted included: its audit trail outlives it (DECISIONS §5). */
  const ownerEverExisted = (ownerId: number) =>
    Effect.map(
      sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM ${sql(OWNER_TABLE[table])} WHERE id = ${ownerId}) AS found`,
      (rows) => rows[0]?.found === true
    )

  return { write, page, ownerEverExisted } as const
}
