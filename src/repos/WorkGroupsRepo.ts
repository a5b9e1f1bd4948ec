// WeChat groups, their members and logs: the only SQL over those tables.
import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { pageOf } from "../../schema/Common.js"
import {
  GROUP_ACCOUNT_PAGE,
  GROUP_LOG_PAGE,
  GROUP_MATCHMAKER_PAGE,
  GROUP_PAGE,
  type MatchmakerMember,
  type WorkGroup,
  type WorkGroupListParams,
  type WorkWechatMember
} from "../../schema/WorkGroups.js"
import type { PageParams } from "../../schema/Common.js"
import type { AccountStatus } from "../../schema/WorkWechats.js"
import { AppConfig } from "../Config.js"
import { formatTimestamp } from "../domain/time.js"
import { containsPattern, pageWithTotal } from "./sqlHelpers.js"
import { makeOperationLogs } from "./operationLogs.js"

export type MemberKind = "matchmaker" | "work_wechat"

export const isDuplicateGroupNo = (error: SqlError.SqlError): boolean => {
  const cause = error.cause as { code?: string; constraint?: string } | undefined
  return cause?.code === "23505" && cause.constraint === "work_groups_group_no_key"
}

const MEMBER_TABLE = { matchmaker: "work_group_matchmakers", work_wechat: "work_group_work_wechats" } as const
const MEMBER_COLUMN = { matchmaker: "matchmaker_id", work_wechat: "work_wechat_id" } as const

const GROUP_COLUMNS = `g.id::int AS id, g.name, g.group_no, g.qr_code, g.status, g.remark,
  (SELECT count(*)::int FROM work_group_matchmakers x WHERE x.work_group_id = g.id) AS matchmaker_count,
  (SELECT count(*)::int FROM work_group_work_wechats y WHERE y.work_group_id = g.id) AS work_wechat_count,
  g.created_at, g.updated_at`

interface GroupRow extends Omit<WorkGroup, "created_at" | "updated_at"> {
  readonly created_at: Date
  readonly updated_at: Date
  readonly total_count?: number
}

export const makeWorkGroupsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const { timeZone } = yield* AppConfig
  const cols = sql.literal(GROUP_COLUMNS)
  const ts = (d: Date) => formatTimestamp(d, timeZone)
  const toGroup = ({ total_count: _, ...r }: GroupRow): WorkGroup => ({ ...r, created_at: ts(r.created_at), updated_at: ts(r.updated_at) })

  const insert = (input: Record<string, unknown>) =>
    Effect.map(sql<{ id: number }>`INSERT INTO work_groups ${sql.insert(input)} RETURNING id::int AS id`, (r) => r[0]!.id)

  const findLive = (id: number) =>
    Effect.map(sql<GroupRow>`SELECT ${cols} FROM work_groups g WHERE g.id = ${id} AND g.deleted_at IS NULL`,
      (r) => Option.map(Option.fromNullable(r[0]), toGroup))

  const lockLive = (id: number) =>
    Effect.map(
      sql<{ id: number; status: AccountStatus; name: string; group_no: string; qr_code: string | null; remark: string | null }>`
        SELECT id::int AS id, status, name, group_no, qr_code, remark FROM work_groups
        WHERE id = ${id} AND deleted_at IS NULL FOR UPDATE`,
      (r) => Option.fromNullable(r[0])
    )

  const update = (id: number, change: Record<string, unknown>) =>
    sql`UPDATE work_groups SET ${sql.update(change)}, updated_at = now() WHERE id = ${id}`

  /** Soft delete; a suffix on group_no keeps the deleted row's number out of the way. */
  const softDelete = (id: number) =>
    sql`UPDATE work_groups SET deleted_at = now(), updated_at = now(),
      group_no = CASE WHEN group_no = '' THEN '' ELSE group_no || '#deleted-' || id END WHERE id = ${id}`

  const memberCounts = (id: number) =>
    Effect.map(
      sql<{ matchmakers: number; accounts: number }>`SELECT
        (SELECT count(*)::int FROM work_group_matchmakers WHERE work_group_id = ${id}) AS matchmakers,
        (SELECT count(*)::int FROM work_group_work_wechats WHERE work_group_id = ${id}) AS accounts`,
      (r) => r[0]!
    )

  const list = (p: WorkGroupListParams) =>
    Effect.gen(function*() {
      const { pageSize, offset } = pageOf(p, GROUP_PAGE)
      const kw = p.keyword?.trim() ? containsPattern(p.keyword.trim()) : undefined
      const where = sql.and([
        sql`g.deleted_at IS NULL`,
        ...(kw
          ? [sql`(lower(g.name) || ' ' || lower(g.group_no) || ' ' || lower(coalesce(g.remark, ''))) LIKE ${kw}`,
            sql`(lower(g.name) LIKE ${kw} OR lower(g.group_no) LIKE ${kw} OR lower(g.remark) LIKE ${kw})`]
          : []),
        ...(p.status ? [sql`g.status = ${p.status}`] : []),
        ...(p.has_matchmaker === undefined ? [] : [sql`${sql.literal(p.has_matchmaker ? "" : "NOT")} EXISTS (SELECT 1 FROM work_group_matchmakers x WHERE x.work_group_id = g.id)`]),
        ...(p.has_work_wechat === undefined ? [] : [sql`${sql.literal(p.has_work_wechat ? "" : "NOT")} EXISTS (SELECT 1 FROM work_group_work_wechats y WHERE y.work_group_id = g.id)`]),
        ...(p.matchmaker_id !== undefined ? [sql`EXISTS (SELECT 1 FROM work_group_matchmakers x WHERE x.work_group_id = g.id AND x.matchmaker_id = ${p.matchmaker_id})`] : []),
        ...(p.work_wechat_id !== undefined ? [sql`EXISTS (SELECT 1 FROM work_group_work_wechats y WHERE y.work_group_id = g.id AND y.work_wechat_id = ${p.work_wechat_id})`] : [])
      ])
      const { rows, total } = yield* pageWithTotal(
        sql<GroupRow>`SELECT ${cols}, count(*) OVER ()::int AS total_count FROM work_groups g WHERE ${where}
          ORDER BY g.id DESC LIMIT ${pageSize} OFFSET ${offset}`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM work_groups g WHERE ${where}`,
        offset
      )
      return { list: rows.map(toGroup), total }
    })

  /** Adds members that are not members yet; returns the member ids added. */
  const addMembers = (groupId: number, kind: MemberKind, ids: ReadonlyArray<number>, remark: string | null) =>
    ids.length === 0
      ? Effect.succeed([] as Array<number>)
      : Effect.map(
        sql<{ member: number }>`INSERT INTO ${sql(MEMBER_TABLE[kind])} (work_group_id, ${sql(MEMBER_COLUMN[kind])}, remark)
          SELECT ${groupId}, t, ${remark} FROM unnest(${[...ids]}::bigint[]) AS t
          ON CONFLICT (work_group_id, ${sql(MEMBER_COLUMN[kind])}) DO NOTHING
          RETURNING ${sql(MEMBER_COLUMN[kind])}::int AS member`,
        (r) => r.map((x) => x.member)
      )

  const removeMember = (groupId: number, kind: MemberKind, id: number) =>
    Effect.map(
      sql<{ id: number }>`DELETE FROM ${sql(MEMBER_TABLE[kind])} WHERE work_group_id = ${groupId} AND ${sql(MEMBER_COLUMN[kind])} = ${id}
        RETURNING id::int AS id`,
      (r) => r.length > 0
    )

  const page = <Row extends { total_count: number; joined_at: Date }>(
    rows: Effect.Effect<ReadonlyArray<Row>, SqlError.SqlError>,
    count: Effect.Effect<ReadonlyArray<{ n: number }>, SqlError.SqlError>,
    offset: number
  ) =>
    Effect.map(pageWithTotal(rows, count, offset), ({ rows, total }) => ({
      list: rows.map(({ total_count: _, ...r }) => ({ ...r, joined_at: ts(r.joined_at) })),
      total
    }))

  const matchmakerMembers = (groupId: number, p: PageParams) => {
    const { pageSize, offset } = pageOf(p, GROUP_MATCHMAKER_PAGE)
    return Effect.map(
      page(
        sql<Omit<MatchmakerMember, "joined_at"> & { joined_at: Date; total_count: number }>`
          SELECT x.id::int AS id, x.work_group_id::int AS work_group_id, x.matchmaker_id::int AS matchmaker_id,
            m.name AS matchmaker_name, m.wechat AS matchmaker_wechat, m.wechat_id AS matchmaker_wechat_id,
            x.remark, x.joined_at, count(*) OVER ()::int AS total_count
          FROM work_group_matchmakers x JOIN matchmakers m ON m.id = x.matchmaker_id
          WHERE x.work_group_id = ${groupId} ORDER BY x.id DESC LIMIT ${pageSize} OFFSET ${offset}`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM work_group_matchmakers WHERE work_group_id = ${groupId}`,
        offset
      ),
      (r) => r as { list: Array<MatchmakerMember>; total: number }
    )
  }

  const accountMembers = (groupId: number, p: PageParams) => {
    const { pageSize, offset } = pageOf(p, GROUP_ACCOUNT_PAGE)
    return Effect.map(
      page(
        sql<Omit<WorkWechatMember, "joined_at"> & { joined_at: Date; total_count: number }>`
          SELECT y.id::int AS id, y.work_group_id::int AS work_group_id, y.work_wechat_id::int AS work_wechat_id,
            w.wechat_number, w.wechat_nickname, w.phone, y.remark, y.joined_at, count(*) OVER ()::int AS total_count
          FROM work_group_work_wechats y JOIN work_wechats w ON w.id = y.work_wechat_id
          WHERE y.work_group_id = ${groupId} ORDER BY y.id DESC LIMIT ${pageSize} OFFSET ${offset}`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM work_group_work_wechats WHERE work_group_id = ${groupId}`,
        offset
      ),
      (r) => r as { list: Array<WorkWechatMember>; total: number }
    )
  }

  const logs = makeOperationLogs(sql, "work_group_logs", "work_group_id", GROUP_LOG_PAGE, timeZone)
  const log = logs.write
  const listLogs = logs.page
  const logOwnerEverExisted = logs.ownerEverExisted

  /** Of these ids, those that exist (matchmakers) or are live (accounts). */
  const existingMembers = (kind: MemberKind, ids: ReadonlyArray<number>) =>
    ids.length === 0
      ? Effect.succeed(new Set<number>())
      : Effect.map(
        kind === "matchmaker"
          ? sql<{ id: number }>`SELECT id::int AS id FROM matchmakers WHERE id IN ${sql.in(ids)}`
          : sql<{ id: number }>`SELECT id::int AS id FROM work_wechats WHERE id IN ${sql.in(ids)} AND deleted_at IS NULL`,
        (r) => new Set(r.map((x) => x.id))
      )

  return {
    insert, findLive, lockLive, update, softDelete, memberCounts, list, addMembers, removeMember, matchmakerMembers,
    accountMembers, log, listLogs, logOwnerEverExisted, existingMembers
  } as const
})

export class WorkGroupsRepo extends Context.Tag("WorkGroups/Repo")<WorkGroupsRepo, Effect.Effect.Success<typeof makeWorkGroupsRepo>>() {}
export const WorkGroupsRepoLive = Layer.effect(WorkGroupsRepo, makeWorkGroupsRepo)
