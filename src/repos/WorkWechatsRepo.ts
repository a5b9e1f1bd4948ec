// Work WeChat accounts, their associations and logs: the only SQL over those tables.
import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { pageOf } from "../../schema/Common.js"
import type {
  AccountStatus,
  Association,
  AssociationListParams,
  TargetType,
  WorkWechat,
  WorkWechatCreate,
  WorkWechatListParams
} from "../../schema/WorkWechats.js"
import { WORK_WECHAT_PAGE } from "../../schema/WorkWechats.js"
import { AppConfig } from "../Config.js"
import { formatTimestamp } from "../domain/time.js"
import { makeOperationLogs } from "./operationLogs.js"
import { containsPattern, pageWithTotal } from "./sqlHelpers.js"


/** Which unique rule a failed write broke, if any. */
export type UniqueField = "wechat_number" | "phone" | "device_id"

const UNIQUE_CONSTRAINTS: Record<string, UniqueField> = {
  work_wechats_wechat_number_key: "wechat_number",
  work_wechats_phone_key: "phone",
  work_wechats_device_id_key: "device_id"
}

export const uniqueViolation = (error: SqlError.SqlError): UniqueField | undefined => {
  const cause = error.cause as { code?: string; constraint?: string } | undefined
  return cause?.code === "23505" && cause.constraint !== undefined ? UNIQUE_CONSTRAINTS[cause.constraint] : undefined
}

interface AccountRow extends Omit<WorkWechat, "created_at" | "updated_at"> {
  readonly created_at: Date
  readonly updated_at: Date
  readonly total_count?: number
}

const ACCOUNT_COLUMNS = `w.id::int AS id, w.admin_id::int AS admin_id, w.wechat_number, w.phone, w.device_id,
  w.wechat_nickname, w.avatar, w.qr_code, w.status, w.remark,
  (SELECT count(*)::int FROM work_wechat_associations a WHERE a.work_wechat_id = w.id) AS association_count,
  (SELECT count(*)::int FROM users u WHERE u.work_wechat_id = w.id) AS user_count,
  w.created_at, w.updated_at`

export const makeWorkWechatsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const { timeZone } = yield* AppConfig
  const cols = sql.literal(ACCOUNT_COLUMNS)
  const ts = (d: Date) => formatTimestamp(d, timeZone)
  const toAccount = ({ total_count: _, ...r }: AccountRow): WorkWechat => ({ ...r, created_at: ts(r.created_at), updated_at: ts(r.updated_at) })

  const insert = (input: WorkWechatCreate) =>
    Effect.map(sql<{ id: number }>`INSERT INTO work_wechats ${sql.insert({ ...input })} RETURNING id::int AS id`, (r) => r[0]!.id)

  const findLive = (id: number) =>
    Effect.map(sql<AccountRow>`SELECT ${cols} FROM work_wechats w WHERE w.id = ${id} AND w.deleted_at IS NULL`,
      (r) => Option.map(Option.fromNullable(r[0]), toAccount))

  /** The live account, locked for the rest of the transaction. */
  const lockLive = (id: number) =>
    Effect.map(
      sql<{ id: number; status: AccountStatus; admin_id: number | null } & Record<string, unknown>>`
        SELECT id::int AS id, status, admin_id::int AS admin_id, wechat_number, phone, device_id, wechat_nickname, avatar, qr_code, remark
        FROM work_wechats WHERE id = ${id} AND deleted_at IS NULL FOR UPDATE`,
      (r) => Option.fromNullable(r[0])
    )

  const update = (id: number, change: Record<string, unknown>) =>
    sql`UPDATE work_wechats SET ${sql.update(change)}, updated_at = now() WHERE id = ${id}`

  const touch = (id: number) => sql`UPDATE work_wechats SET updated_at = now() WHERE id = ${id}`

  const softDelete = (id: number) => sql`UPDATE work_wechats SET deleted_at = now(), updated_at = now() WHERE id = ${id}`

  const attachments = (id: number) =>
    Effect.map(
      sql<{ associations: number; users: number }>`SELECT
        (SELECT count(*)::int FROM work_wechat_associations WHERE work_wechat_id = ${id}) AS associations,
        (SELECT count(*)::int FROM users WHERE work_wechat_id = ${id}) AS users`,
      (r) => r[0]!
    )

  const list = (p: WorkWechatListParams) =>
    Effect.gen(function*() {
      const { pageSize, offset } = pageOf(p, WORK_WECHAT_PAGE)
      const kw = p.keyword?.trim() ? containsPattern(p.keyword.trim()) : undefined
      const where = sql.and([
        sql`w.deleted_at IS NULL`,
        ...(kw
          ? [sql`(lower(w.wechat_number) || ' ' || w.phone || ' ' || lower(coalesce(w.device_id, '')) || ' ' || lower(coalesce(w.wechat_nickname, ''))) LIKE ${kw}`,
            sql`(lower(w.wechat_number) LIKE ${kw} OR w.phone LIKE ${kw} OR lower(w.device_id) LIKE ${kw} OR lower(w.wechat_nickname) LIKE ${kw})`]
          : []),
        ...(p.status ? [sql`w.status = ${p.status}`] : [])
      ])
      const { rows, total } = yield* pageWithTotal(
        sql<AccountRow>`SELECT ${cols}, count(*) OVER ()::int AS total_count FROM work_wechats w WHERE ${where}
          ORDER BY w.id DESC LIMIT ${pageSize} OFFSET ${offset}`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM work_wechats w WHERE ${where}`,
        offset
      )
      return { list: rows.map(toAccount), total }
    })

  /**
   * Of these target ids, which exist and which exist but are of the wrong kind: `company` needs
   * a company of type normal, `franchisee` one of type franchisee.
   */
  const checkTargets = (type: TargetType, ids: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      if (ids.length === 0) return { missing: [] as Array<number>, wrongKind: [] as Array<number> }
      const rows = type === "matchmaker"
        ? yield* sql<{ id: number; kind: string }>`SELECT id::int AS id, 'matchmaker' AS kind FROM matchmakers WHERE id IN ${sql.in(ids)}`
        : yield* sql<{ id: number; kind: string }>`SELECT id::int AS id, company_type AS kind FROM companies WHERE id IN ${sql.in(ids)}`
      const kinds = new Map(rows.map((r) => [r.id, r.kind]))
      const want = type === "company" ? "normal" : type
      return {
        missing: ids.filter((id) => !kinds.has(id)),
        wrongKind: ids.filter((id) => kinds.has(id) && kinds.get(id) !== want)
      }
    })

  /** Inserts the associations that do not exist yet; returns the target ids inserted. */
  const associate = (accountId: number, type: TargetType, ids: ReadonlyArray<number>, remark: string | null) =>
    ids.length === 0
      ? Effect.succeed([] as Array<number>)
      : Effect.map(
        sql<{ target_id: number }>`INSERT INTO work_wechat_associations (work_wechat_id, target_type, target_id, remark)
          SELECT ${accountId}, ${type}, t, ${remark} FROM unnest(${[...ids]}::bigint[]) AS t
          ON CONFLICT (work_wechat_id, target_type, target_id) DO NOTHING
          RETURNING target_id::int AS target_id`,
        (r) => r.map((x) => x.target_id)
      )

  const disassociate = (accountId: number, type: TargetType, targetId: number) =>
    Effect.map(
      sql<{ id: number }>`DELETE FROM work_wechat_associations
        WHERE work_wechat_id = ${accountId} AND target_type = ${type} AND target_id = ${targetId} RETURNING id::int AS id`,
      (r) => r.length > 0
    )

  /** Target ids of this type associated with the account (all, or among `ids`). */
  const associatedTargets = (accountId: number, type: TargetType, ids?: ReadonlyArray<number>) =>
    Effect.map(
      sql<{ target_id: number }>`SELECT target_id::int AS target_id FROM work_wechat_associations
        WHERE work_wechat_id = ${accountId} AND target_type = ${type}
        ${ids === undefined ? sql`` : sql`AND target_id IN ${sql.in(ids.length ? ids : [0])}`}
        ORDER BY target_id`,
      (r) => r.map((x) => x.target_id)
    )

  /** Moves associations from one account to another; returns the target ids moved. */
  const move = (from: number, to: number, type: TargetType, ids: ReadonlyArray<number>) =>
    ids.length === 0
      ? Effect.succeed([] as Array<number>)
      : Effect.map(
        sql<{ target_id: number }>`UPDATE work_wechat_associations a SET work_wechat_id = ${to}
          WHERE a.work_wechat_id = ${from} AND a.target_type = ${type} AND a.target_id IN ${sql.in(ids)}
            AND NOT EXISTS (SELECT 1 FROM work_wechat_associations d
                            WHERE d.work_wechat_id = ${to} AND d.target_type = ${type} AND d.target_id = a.target_id)
          RETURNING a.target_id::int AS target_id`,
        (r) => r.map((x) => x.target_id)
      )

  const listAssociations = (accountId: number, p: AssociationListParams) =>
    Effect.gen(function*() {
      const { pageSize, offset } = pageOf(p, WORK_WECHAT_PAGE)
      const where = sql.and([
        sql`a.work_wechat_id = ${accountId}`,
        ...(p.target_type ? [sql`a.target_type = ${p.target_type}`] : [])
      ])
      const { rows, total } = yield* pageWithTotal(
        sql<Omit<Association, "created_at"> & { created_at: Date; total_count: number }>`
          SELECT a.id::int AS id, a.work_wechat_id::int AS work_wechat_id, a.target_type, a.target_id::int AS target_id,
            CASE WHEN a.target_type = 'matchmaker' THEN m.name ELSE c.name END AS target_name,
            a.remark, a.created_at, count(*) OVER ()::int AS total_count
          FROM work_wechat_associations a
          LEFT JOIN matchmakers m ON a.target_type = 'matchmaker' AND m.id = a.target_id
          LEFT JOIN companies c ON a.target_type <> 'matchmaker' AND c.id = a.target_id
          WHERE ${where} ORDER BY a.id DESC LIMIT ${pageSize} OFFSET ${offset}`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM work_wechat_associations a WHERE ${where}`,
        offset
      )
      return { list: rows.map(({ total_count: _, ...r }) => ({ ...r, created_at: ts(r.created_at) })), total }
    })

  const logs = makeOperationLogs(sql, "work_wechat_logs", "work_wechat_id", WORK_WECHAT_PAGE, timeZone)
  /** Writes log entries for one account (operator: this interface). */
  const log = logs.write
  const listLogs = logs.page
  const logOwnerEverExisted = logs.ownerEverExisted

  /** Of these account ids, the live ones. */
  const liveIds = (ids: ReadonlyArray<number>) =>
    ids.length === 0
      ? Effect.succeed(new Set<number>())
      : Effect.map(sql<{ id: number }>`SELECT id::int AS id FROM work_wechats WHERE id IN ${sql.in(ids)} AND deleted_at IS NULL`,
        (r) => new Set(r.map((x) => x.id)))

  return {
    insert, findLive, lockLive, update, touch, softDelete, attachments, list, checkTargets, associate, disassociate,
    associatedTargets, move, listAssociations, log, listLogs, logOwnerEverExisted, liveIds
  } as const
})

export class WorkWechatsRepo extends Context.Tag("WorkWechats/Repo")<WorkWechatsRepo, Effect.Effect.Success<typeof makeWorkWechatsRepo>>() {}
export const WorkWechatsRepoLive = Layer.effect(WorkWechatsRepo, makeWorkWechatsRepo)

