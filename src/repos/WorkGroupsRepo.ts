// WeChat groups, their members and logs: the only SQL over those tables. Rows are decoded by their
// schema at the boundary; a taken group_no is the 400 it means.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"
import * as Struct from "effect/Struct"

import { pageOf, type PageParams } from "../../schema/Common.js"
import {
  GROUP_ACCOUNT_PAGE,
  GROUP_LOG_PAGE,
  GROUP_MATCHMAKER_PAGE,
  GROUP_PAGE,
  MatchmakerMember,
  WorkGroup,
  WorkGroupCreate,
  type WorkGroupListParams,
  WorkGroupLog,
  WorkWechatMember
} from "../../schema/WorkGroups.js"
import { DuplicateGroupNo } from "../domain/errors.js"
import type { KeywordField } from "../domain/masking.js"
import { SyncWindow } from "../domain/sync.js"
import { type ListRequest, makeLoggedRecords } from "./loggedRecords.js"
import { StoredLogValues } from "./operationLogs.js"
import { CountRow, Timestamp } from "./rows.js"
import { containsPattern, keywordMatch, listPage, pageTail, sinceFilter, sqlEdge, syncColumns, SyncKeyFields } from "./sqlHelpers.js"

/** What a page row has beyond its record: the window total (by `page`) and the sync key. */
const PageKeys = { total_count: Schema.optional(Schema.Int), ...SyncKeyFields }

export const MemberKind = Schema.Literals(["matchmaker", "work_wechat"])
export type MemberKind = typeof MemberKind.Type

/** A non-empty group_no belongs to one live group: a write that takes another's is the client's 400. */
const DUPLICATES = {
  work_groups_group_no_key: () => new DuplicateGroupNo({ message: "group_no is already used by another group" })
}

const MEMBER_TABLE = { matchmaker: "work_group_matchmakers", work_wechat: "work_group_work_wechats" } as const
const MEMBER_COLUMN = { matchmaker: "matchmaker_id", work_wechat: "work_wechat_id" } as const

const GROUP_COLUMNS = `g.id::int AS id, g.name, g.group_no, g.qr_code, g.status, g.remark,
  (SELECT count(*)::int FROM work_group_matchmakers x WHERE x.work_group_id = g.id) AS matchmaker_count,
  (SELECT count(*)::int FROM work_group_work_wechats y WHERE y.work_group_id = g.id) AS work_wechat_count,
  g.created_at, g.updated_at`

/** A group as selected by GROUP_COLUMNS: the contract's record, instants as platform-time text. */
const GroupRow = Schema.Struct({ ...WorkGroup.fields, created_at: Timestamp, updated_at: Timestamp })
const GroupPageRow = Schema.Struct({ ...GroupRow.fields, ...PageKeys })
/** The columns an update may change, with the id and status, of a locked live group. */
const LockedGroup = WorkGroup.mapFields(Struct.pick(["id", "status", "name", "group_no", "qr_code", "remark"]))

const MatchmakerMemberPageRow = Schema.Struct({ ...MatchmakerMember.fields, joined_at: Timestamp, ...PageKeys })
const AccountMemberPageRow = Schema.Struct({ ...WorkWechatMember.fields, joined_at: Timestamp, ...PageKeys })
const LogPageRow = Schema.Struct({ ...WorkGroupLog.fields, ...StoredLogValues, created_at: Timestamp, ...PageKeys })

const IdRow = Schema.Struct({ id: Schema.Int })
const Ids = Schema.Array(Schema.Int)
const MemberCountRequest = Schema.Struct({ groupId: Schema.Int, sync: Schema.UndefinedOr(SyncWindow) })
const MemberPageRequest = Schema.Struct({
  ...MemberCountRequest.fields,
  offset: Schema.Int,
  pageSize: Schema.Int,
  window: Schema.Boolean
})

export class WorkGroupsRepo extends Context.Service<WorkGroupsRepo>()("WorkGroups/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const memberCounts = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Schema.Struct({ matchmakers: Schema.Int, accounts: Schema.Int }),
      execute: (id) =>
        sql`SELECT
          (SELECT count(*)::int FROM work_group_matchmakers WHERE work_group_id = ${id}) AS matchmakers,
          (SELECT count(*)::int FROM work_group_work_wechats WHERE work_group_id = ${id}) AS accounts`
    })

    const records = makeLoggedRecords(sql, {
      table: "work_groups",
      alias: "g",
      columns: GROUP_COLUMNS,
      create: Schema.toType(WorkGroupCreate),
      row: GroupRow,
      pageRow: GroupPageRow,
      locked: { row: LockedGroup, columns: "id::int AS id, status, name, group_no, qr_code, remark" },
      // A suffix on group_no keeps the deleted row's number out of the way.
      deleteSets: "group_no = CASE WHEN group_no = '' THEN '' ELSE group_no || '#deleted-' || id END",
      duplicates: DUPLICATES,
      list: { limits: GROUP_PAGE, where: (request: ListRequest<WorkGroupListParams, KeywordField<"work_group">>) => where(request) },
      logs: { table: "work_group_logs", owner: "work_group_id", limits: GROUP_LOG_PAGE, pageRow: LogPageRow }
    })

    const keywordColumns = { name: sql`lower(g.name)`, group_no: sql`lower(g.group_no)`, remark: sql`lower(g.remark)` }
    const where = ({ params: p, searchable, sync }: ListRequest<WorkGroupListParams, KeywordField<"work_group">>) => {
      const kw = p.keyword?.trim() ? containsPattern(p.keyword.trim()) : undefined
      return sql.and([
        sql`g.deleted_at IS NULL`,
        ...sinceFilter(sql, sync, "g.updated_at"),
        ...(kw
          ? [
            // Every keyword field in one text, for the trigram index; then the fields this caller may search.
            sql`(lower(g.name) || ' ' || lower(g.group_no) || ' ' || lower(coalesce(g.remark, ''))) LIKE ${kw}`,
            keywordMatch(sql, keywordColumns, searchable, kw)
          ]
          : []),
        ...(p.status ? [sql`g.status = ${p.status}`] : []),
        ...(p.has_matchmaker === undefined
          ? []
          : [
            sql`${sql.literal(p.has_matchmaker ? "" : "NOT")} EXISTS (SELECT 1 FROM work_group_matchmakers x WHERE x.work_group_id = g.id)`
          ]),
        ...(p.has_work_wechat === undefined
          ? []
          : [
            sql`${
              sql.literal(p.has_work_wechat ? "" : "NOT")
            } EXISTS (SELECT 1 FROM work_group_work_wechats y WHERE y.work_group_id = g.id)`
          ]),
        ...(p.matchmaker_id !== undefined
          ? [sql`EXISTS (SELECT 1 FROM work_group_matchmakers x WHERE x.work_group_id = g.id AND x.matchmaker_id = ${p.matchmaker_id})`]
          : []),
        ...(p.work_wechat_id !== undefined
          ? [sql`EXISTS (SELECT 1 FROM work_group_work_wechats y WHERE y.work_group_id = g.id AND y.work_wechat_id = ${p.work_wechat_id})`]
          : [])
      ])
    }
    const insertMembers = SqlSchema.findAll({
      Request: Schema.Struct({ groupId: Schema.Int, kind: MemberKind, ids: Ids, remark: Schema.NullOr(Schema.String) }),
      Result: Schema.Struct({ member: Schema.Int }),
      execute: ({ groupId, ids, kind, remark }) =>
        sql`INSERT INTO ${sql(MEMBER_TABLE[kind])} (work_group_id, ${sql(MEMBER_COLUMN[kind])}, remark)
          SELECT ${groupId}, t, ${remark} FROM unnest(${[...ids]}::bigint[]) AS t
          ON CONFLICT (work_group_id, ${sql(MEMBER_COLUMN[kind])}) DO NOTHING
          RETURNING ${sql(MEMBER_COLUMN[kind])}::int AS member`
    })

    const deleteMember = SqlSchema.findOneOption({
      Request: Schema.Struct({ groupId: Schema.Int, kind: MemberKind, id: Schema.Int }),
      Result: IdRow,
      execute: ({ groupId, id, kind }) =>
        sql`DELETE FROM ${sql(MEMBER_TABLE[kind])} WHERE work_group_id = ${groupId} AND ${sql(MEMBER_COLUMN[kind])} = ${id}
          RETURNING id::int AS id`
    })

    const matchmakerPage = SqlSchema.findAll({
      Request: MemberPageRequest,
      Result: MatchmakerMemberPageRow,
      execute: ({ groupId, offset, pageSize, sync, window }) =>
        sql`SELECT x.id::int AS id, x.work_group_id::int AS work_group_id, x.matchmaker_id::int AS matchmaker_id,
            m.name AS matchmaker_name, m.wechat AS matchmaker_wechat, m.wechat_id AS matchmaker_wechat_id,
            x.remark, x.joined_at, ${syncColumns(sql, "x.joined_at", "x.id")}${window ? sql`, count(*) OVER ()::int AS total_count` : sql``}
          FROM work_group_matchmakers x JOIN matchmakers m ON m.id = x.matchmaker_id ${
          pageTail(sql, {
            sync,
            where: sql.and([sql`x.work_group_id = ${groupId}`, ...sinceFilter(sql, sync, "x.joined_at")]),
            at: "x.joined_at",
            id: "x.id",
            offsetOrder: "x.id DESC",
            pageSize,
            offset
          })
        }`
    })
    const matchmakerCount = SqlSchema.findAll({
      Request: MemberCountRequest,
      Result: CountRow,
      execute: ({ groupId, sync }) =>
        sql`SELECT count(*)::int AS n FROM work_group_matchmakers x
          WHERE ${sql.and([sql`x.work_group_id = ${groupId}`, ...sinceFilter(sql, sync, "x.joined_at")])}`
    })

    const accountPage = SqlSchema.findAll({
      Request: MemberPageRequest,
      Result: AccountMemberPageRow,
      execute: ({ groupId, offset, pageSize, sync, window }) =>
        sql`SELECT y.id::int AS id, y.work_group_id::int AS work_group_id, y.work_wechat_id::int AS work_wechat_id,
            w.wechat_number, w.wechat_nickname, w.phone, y.remark, y.joined_at,
            ${syncColumns(sql, "y.joined_at", "y.id")}${window ? sql`, count(*) OVER ()::int AS total_count` : sql``}
          FROM work_group_work_wechats y JOIN work_wechats w ON w.id = y.work_wechat_id ${
          pageTail(sql, {
            sync,
            where: sql.and([sql`y.work_group_id = ${groupId}`, ...sinceFilter(sql, sync, "y.joined_at")]),
            at: "y.joined_at",
            id: "y.id",
            offsetOrder: "y.id DESC",
            pageSize,
            offset
          })
        }`
    })
    const accountCount = SqlSchema.findAll({
      Request: MemberCountRequest,
      Result: CountRow,
      execute: ({ groupId, sync }) =>
        sql`SELECT count(*)::int AS n FROM work_group_work_wechats y
          WHERE ${sql.and([sql`y.work_group_id = ${groupId}`, ...sinceFilter(sql, sync, "y.joined_at")])}`
    })

    const selectExisting = SqlSchema.findAll({
      Request: Schema.Struct({ kind: MemberKind, ids: Ids }),
      Result: IdRow,
      execute: ({ ids, kind }) =>
        kind === "matchmaker"
          ? sql`SELECT id::int AS id FROM matchmakers WHERE id IN ${sql.in(ids)}`
          : sql`SELECT id::int AS id FROM work_wechats WHERE id IN ${sql.in(ids)} AND deleted_at IS NULL`
    })

    return {
      ...records,
      memberCounts: (id: number) => sqlEdge(memberCounts(id)),
      /** Adds members that are not members yet; returns the member ids added. */
      addMembers: (groupId: number, kind: MemberKind, ids: ReadonlyArray<number>, remark: string | null) =>
        ids.length === 0
          ? Effect.succeed<Array<number>>([])
          : sqlEdge(Effect.map(insertMembers({ groupId, kind, ids, remark }), (rows) => rows.map((r) => r.member))),
      removeMember: (groupId: number, kind: MemberKind, id: number) =>
        sqlEdge(Effect.map(deleteMember({ groupId, kind, id }), Option.isSome)),
      matchmakerMembers: (groupId: number, p: PageParams, sync: SyncWindow | undefined) => {
        const { offset, pageSize } = pageOf(p, GROUP_MATCHMAKER_PAGE)
        return sqlEdge(listPage({
          sync,
          counter: undefined,
          page: (window) => matchmakerPage({ groupId, offset, pageSize, sync, window }),
          count: matchmakerCount({ groupId, sync }),
          offset
        }))
      },
      accountMembers: (groupId: number, p: PageParams, sync: SyncWindow | undefined) => {
        const { offset, pageSize } = pageOf(p, GROUP_ACCOUNT_PAGE)
        return sqlEdge(listPage({
          sync,
          counter: undefined,
          page: (window) => accountPage({ groupId, offset, pageSize, sync, window }),
          count: accountCount({ groupId, sync }),
          offset
        }))
      },
      /** Of these ids, those that exist (matchmakers) or are live (accounts). */
      existingMembers: (kind: MemberKind, ids: ReadonlyArray<number>) =>
        ids.length === 0
          ? Effect.succeed(new Set<number>())
          : sqlEdge(Effect.map(selectExisting({ kind, ids }), (rows) => new Set(rows.map((r) => r.id))))
    } as const
  })
}) {
  static readonly layer = Layer.effect(WorkGroupsRepo, WorkGroupsRepo.make)
}
