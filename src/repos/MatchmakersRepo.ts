// Matchmakers: the only SQL over `matchmakers`, and the reach of work accounts over them. Rows
// are decoded by their schema at the boundary.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { pageOf } from "../../schema/Common.js"
import {
  type CertLevel,
  Matchmaker,
  MATCHMAKER_IDS_PAGE,
  MATCHMAKER_PAGE,
  type MatchmakerCreate,
  MatchmakerIdItem,
  MatchmakerIdsParams,
  MatchmakerListParams,
  type MatchmakerUpdate,
  type WorkWechatFilter,
  type WorkWechatScope
} from "../../schema/Matchmakers.js"
import { KEYWORD_FIELDS, type KeywordField } from "../domain/masking.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { SyncWindow } from "../domain/sync.js"
import { makeRecordedWrites } from "./recordedWrites.js"
import { CountRow, Timestamp } from "./rows.js"
import {
  containsPattern,
  keywordMatch,
  listPage,
  pageTail,
  SearchRequest,
  sinceFilter,
  sqlEdge,
  syncColumns,
  SyncKeyFields,
  uncountedList
} from "./sqlHelpers.js"
import { MATCHMAKER_COLUMNS } from "./statements.js"

/** A `matchmakers` row as selected by COLUMNS: the contract's record, instants as platform-time text. */
const MatchmakerRow = Schema.Struct({ ...Matchmaker.fields, created_at: Timestamp, updated_at: Timestamp })
const MatchmakerPageRow = Schema.Struct({ ...MatchmakerRow.fields, total_count: Schema.optional(Schema.Int), ...SyncKeyFields })

/** A scoped client's companies (DECISIONS §14): only their matchmakers; null: every one. */
const Companies = Schema.NullOr(Schema.Array(Schema.Int))

const ListRequest = Schema.Struct({
  ...SearchRequest(MatchmakerListParams, KEYWORD_FIELDS.matchmaker).fields,
  sync: Schema.UndefinedOr(SyncWindow),
  companies: Companies
})
const IdsRequest = Schema.Struct({
  params: Schema.toType(MatchmakerIdsParams),
  sync: Schema.UndefinedOr(SyncWindow),
  companies: Companies
})

/** The condition of a scoped read (an independent matchmaker, company_id null, is in no scope). */
const scopeFilter = (sql: SqlClient.SqlClient, companies: typeof Companies.Type) =>
  companies === null ? [] : [sql`m.company_id = ANY (${companies}::bigint[])`]

type Scope = typeof WorkWechatScope.Type

interface ReachParams {
  readonly work_wechat_id?: number | undefined
  readonly work_wechat_scope?: Scope | undefined
  readonly work_wechat_filter?: typeof WorkWechatFilter.Type | undefined
  readonly group_nos?: ReadonlyArray<string> | undefined
}

export class MatchmakersRepo extends Context.Service<MatchmakersRepo>()("Matchmakers/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(MATCHMAKER_COLUMNS)

    // Reach of work accounts over matchmakers (DECISIONS §5): direct = an association of type
    // matchmaker; group = both members of one group. Deleted accounts and groups never count.
    const directReach = (account: number | undefined) =>
      sql`EXISTS (SELECT 1 FROM work_wechat_associations a JOIN work_wechats w ON w.id = a.work_wechat_id AND w.deleted_at IS NULL
        WHERE a.target_type = 'matchmaker' AND a.target_id = m.id ${
        account === undefined ? sql`` : sql`AND a.work_wechat_id = ${account}`
      })`
    const groupReach = (account: number | undefined) =>
      sql`EXISTS (SELECT 1 FROM work_group_matchmakers gm
        JOIN work_groups g ON g.id = gm.work_group_id AND g.deleted_at IS NULL
        JOIN work_group_work_wechats gw ON gw.work_group_id = gm.work_group_id
        JOIN work_wechats w ON w.id = gw.work_wechat_id AND w.deleted_at IS NULL
        WHERE gm.matchmaker_id = m.id ${account === undefined ? sql`` : sql`AND gw.work_wechat_id = ${account}`})`
    const reach = (scope: Scope, account: number | undefined) =>
      scope === "direct"
        ? directReach(account)
        : scope === "group"
        ? groupReach(account)
        : sql`(${directReach(account)} OR ${groupReach(account)})`
    const inGroups = (groupNos: ReadonlyArray<string>) =>
      sql`EXISTS (SELECT 1 FROM work_group_matchmakers gm JOIN work_groups g ON g.id = gm.work_group_id AND g.deleted_at IS NULL
        WHERE gm.matchmaker_id = m.id AND g.group_no IN ${sql.in(groupNos.length ? groupNos : [""])} AND g.group_no <> '')`
    const reachFilters = (p: ReachParams) => {
      const scope = p.work_wechat_scope ?? "all"
      return [
        ...(p.work_wechat_id !== undefined ? [reach(scope, p.work_wechat_id)] : []),
        ...(p.work_wechat_id === undefined && p.work_wechat_filter === "has" ? [reach(scope, undefined)] : []),
        ...(p.work_wechat_id === undefined && p.work_wechat_filter === "empty" ? [sql`NOT ${reach(scope, undefined)}`] : []),
        ...(p.group_nos !== undefined ? [inGroups(p.group_nos)] : [])
      ]
    }

    const keywordColumns = { name: sql`lower(name)`, phone: sql`phone`, wechat: sql`lower(wechat)` }
    const listWhere = ({ companies, params: p, searchable, sync }: typeof ListRequest.Type) => {
      const kw = p.keyword ? containsPattern(p.keyword) : undefined
      return sql.and([
        ...(p.company_id !== undefined ? [sql`company_id = ${p.company_id}`] : []),
        ...scopeFilter(sql, companies),
        ...(kw ? [keywordMatch(sql, keywordColumns, searchable, kw)] : []),
        ...(p.status ? [sql`status = ${p.status}`] : []),
        ...(p.level ? [sql`level = ${p.level}`] : []),
        ...(p.has_guests === true ? [sql`guest_count > 0`] : p.has_guests === false ? [sql`guest_count = 0`] : []),
        ...reachFilters(p),
        ...sinceFilter(sql, sync, "m.updated_at")
      ])
    }

    const idsWhere = ({ companies, params: p, sync }: typeof IdsRequest.Type) =>
      sql.and([
        sql`m.wechat_id IS NOT NULL AND m.wechat_id <> ''`,
        ...scopeFilter(sql, companies),
        ...(p.company_id !== undefined ? [sql`m.company_id = ${p.company_id}`] : []),
        ...reachFilters(p),
        ...sinceFilter(sql, sync, "m.updated_at")
      ])
    const syncKey = syncColumns(sql, "m.updated_at", "m.id")

    // A write and its event in one statement (recordedWrites): one round trip, no transaction.
    const writes = makeRecordedWrites(sql, {
      table: "matchmakers",
      columns: MATCHMAKER_COLUMNS,
      row: MatchmakerRow,
      created: "matchmaker.created",
      updated: "matchmaker.updated",
      times: ["created_at", "updated_at"]
    })

    const findById = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, companies: Companies }),
      Result: MatchmakerRow,
      execute: ({ companies, id }) =>
        sql`SELECT ${cols} FROM matchmakers m WHERE ${sql.and([sql`m.id = ${id}`, ...scopeFilter(sql, companies)])}`
    })

    const page = SqlSchema.findAll({
      Request: Schema.Struct({ ...ListRequest.fields, window: Schema.Boolean }),
      Result: MatchmakerPageRow,
      execute: ({ window, ...request }) => {
        const { offset, pageSize } = pageOf(request.params, MATCHMAKER_PAGE)
        return sql`SELECT ${cols}, ${syncKey}${window ? sql`, count(*) OVER ()::int AS total_count` : sql``} FROM matchmakers m ${
          pageTail(sql, {
            sync: request.sync,
            where: listWhere(request),
            at: "m.updated_at",
            id: "m.id",
            offsetOrder: "m.id DESC",
            pageSize,
            offset
          })
        }`
      }
    })
    const count = SqlSchema.findAll({
      Request: ListRequest,
      Result: CountRow,
      execute: (request) => sql`SELECT count(*)::int AS n FROM matchmakers m WHERE ${listWhere(request)}`
    })

    /**
     * Matchmakers with a wechat_id, for an external system's sync, each with all its group numbers
     * and the accounts that reach it under the scope. One statement: the page, then set-based
     * aggregates over the page's ids.
     */
    const idsPage = SqlSchema.findAll({
      Request: IdsRequest,
      Result: Schema.Struct({ ...MatchmakerIdItem.fields, ...SyncKeyFields }),
      execute: (request) => {
        const p = request.params
        const { pageSize, offset } = pageOf(p, MATCHMAKER_IDS_PAGE)
        const order = request.sync === undefined ? sql`p.id DESC` : sql`p.updated_at, p.id`
        const scope = p.work_wechat_scope ?? "all"
        const directPairs = sql`SELECT a.target_id AS matchmaker_id, a.work_wechat_id AS account
          FROM work_wechat_associations a JOIN work_wechats w ON w.id = a.work_wechat_id AND w.deleted_at IS NULL
          WHERE a.target_type = 'matchmaker' AND a.target_id IN (SELECT id FROM page)`
        const groupPairs = sql`SELECT gm.matchmaker_id, gw.work_wechat_id AS account
          FROM work_group_matchmakers gm
          JOIN work_groups g ON g.id = gm.work_group_id AND g.deleted_at IS NULL
          JOIN work_group_work_wechats gw ON gw.work_group_id = gm.work_group_id
          JOIN work_wechats w ON w.id = gw.work_wechat_id AND w.deleted_at IS NULL
          WHERE gm.matchmaker_id IN (SELECT id FROM page)`
        const pairs = scope === "direct" ? directPairs : scope === "group" ? groupPairs : sql`${directPairs} UNION ${groupPairs}`
        return sql`WITH page AS (
            SELECT m.id, m.wechat_id, m.updated_at, ${syncKey} FROM matchmakers m ${
          pageTail(sql, {
            sync: request.sync,
            where: idsWhere(request),
            at: "m.updated_at",
            id: "m.id",
            offsetOrder: "m.id DESC",
            pageSize,
            offset
          })
        }),
          nos AS (
            SELECT gm.matchmaker_id, array_agg(DISTINCT g.group_no ORDER BY g.group_no) AS group_nos
            FROM work_group_matchmakers gm JOIN work_groups g ON g.id = gm.work_group_id AND g.deleted_at IS NULL AND g.group_no <> ''
            WHERE gm.matchmaker_id IN (SELECT id FROM page) GROUP BY gm.matchmaker_id),
          reach AS (
            SELECT r.matchmaker_id, array_agg(DISTINCT r.account::int ORDER BY r.account::int) AS accounts
            FROM (${pairs}) r GROUP BY r.matchmaker_id)
          SELECT p.id::int AS id, p.wechat_id, coalesce(nos.group_nos, '{}') AS group_nos, coalesce(reach.accounts, '{}') AS work_wechat_ids,
            p.sync_at, p.sync_id
          FROM page p LEFT JOIN nos ON nos.matchmaker_id = p.id LEFT JOIN reach ON reach.matchmaker_id = p.id
          ORDER BY ${order}`
      }
    })
    const idsCount = SqlSchema.findOne({
      Request: IdsRequest,
      Result: CountRow,
      execute: (request) => sql`SELECT count(*)::int AS n FROM matchmakers m WHERE ${idsWhere(request)}`
    })

    return {
      /** Inserts a matchmaker and records its `matchmaker.created` event, in one statement. */
      insert: (input: MatchmakerCreate) => sqlEdge(writes.insert(input)),
      /** The matchmaker, if it is one of the scope's companies' (outside it: none, as if unknown). */
      findById: (scope: CompanyScope, id: number) => sqlEdge(findById({ id, companies: Scopes.companyIds(scope) })),
      /** Changes a matchmaker and records its `matchmaker.updated` event, in one statement; none for an unknown id. */
      update: (id: number, change: MatchmakerUpdate) => sqlEdge(writes.update(id, change)),
      setColumn: (id: number, change: { status: "active" | "disabled" } | { cert_level: CertLevel }) => sqlEdge(writes.update(id, change)),
      /** `searchable`: the fields the keyword may match (DECISIONS §1: a masking client's unmasked ones). */
      list: (
        scope: CompanyScope,
        params: MatchmakerListParams,
        searchable: ReadonlyArray<KeywordField<"matchmaker">>,
        sync: SyncWindow | undefined
      ) => {
        const request = { params, searchable, sync, companies: Scopes.companyIds(scope) }
        return uncountedList({ page: page, count: count }, request, pageOf(params, MATCHMAKER_PAGE).offset)
      },
      /** The scope's matchmakers with a wechat_id, and their exact count. */
      ids: (scope: CompanyScope, params: MatchmakerIdsParams, sync: SyncWindow | undefined) => {
        const request = { params, sync, companies: Scopes.companyIds(scope) }
        return sqlEdge(listPage({
          sync,
          counter: Effect.map(idsCount(request), (row) => row.n),
          page: () => idsPage(request),
          count: Effect.succeed([]),
          offset: pageOf(params, MATCHMAKER_IDS_PAGE).offset
        }))
      }
    } as const
  })
}) {
  static readonly layer = Layer.effect(MatchmakersRepo, MatchmakersRepo.make)
}
