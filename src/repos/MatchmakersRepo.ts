// Matchmakers: the only SQL over `matchmakers`.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { pageOf } from "../../schema/Common.js"
import { type CertLevel, MATCHMAKER_IDS_PAGE, MATCHMAKER_PAGE, type Matchmaker, type MatchmakerCreate, type MatchmakerIdItem, type MatchmakerIdsParams, type MatchmakerListParams, type MatchmakerUpdate } from "../../schema/Matchmakers.js"
import { AppConfig } from "../Config.js"
import { formatTimestamp } from "../domain/time.js"
import { containsPattern, pageWithTotal } from "./sqlHelpers.js"

interface MatchmakerRow extends Omit<Matchmaker, "created_at" | "updated_at"> {
  readonly created_at: Date
  readonly updated_at: Date
  readonly total_count?: number
}

const COLUMNS = `id::int AS id, company_id::int AS company_id, store_id::int AS store_id, name, phone, wechat,
  wechat_id, country, province, city, avatar, years_exp, specialty, intro, guest_count, match_count,
  CASE WHEN match_count = 0 THEN 0 ELSE round(success_count::numeric / match_count, 4)::float8 END AS success_rate,
  credit_score, level, cert_level, status, created_at, updated_at`

type Scope = "all" | "direct" | "group"

export const makeMatchmakersRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // Reach of work accounts over matchmakers (DECISIONS §5): direct = an association of type
  // matchmaker; group = both members of one group. Deleted accounts and groups never count.
  const directReach = (account: number | undefined) =>
    sql`EXISTS (SELECT 1 FROM work_wechat_associations a JOIN work_wechats w ON w.id = a.work_wechat_id AND w.deleted_at IS NULL
      WHERE a.target_type = 'matchmaker' AND a.target_id = m.id ${account === undefined ? sql`` : sql`AND a.work_wechat_id = ${account}`})`
  const groupReach = (account: number | undefined) =>
    sql`EXISTS (SELECT 1 FROM work_group_matchmakers gm
      JOIN work_groups g ON g.id = gm.work_group_id AND g.deleted_at IS NULL
      JOIN work_group_work_wechats gw ON gw.work_group_id = gm.work_group_id
      JOIN work_wechats w ON w.id = gw.work_wechat_id AND w.deleted_at IS NULL
      WHERE gm.matchmaker_id = m.id ${account === undefined ? sql`` : sql`AND gw.work_wechat_id = ${account}`})`
  const reach = (scope: Scope, account: number | undefined) =>
    scope === "direct" ? directReach(account) : scope === "group" ? groupReach(account) : sql`(${directReach(account)} OR ${groupReach(account)})`
  const inGroups = (groupNos: ReadonlyArray<string>) =>
    sql`EXISTS (SELECT 1 FROM work_group_matchmakers gm JOIN work_groups g ON g.id = gm.work_group_id AND g.deleted_at IS NULL
      WHERE gm.matchmaker_id = m.id AND g.group_no IN ${sql.in(groupNos.length ? groupNos : [""])} AND g.group_no <> '')`
  const reachFilters = (p: { work_wechat_id?: number | undefined; work_wechat_scope?: Scope | undefined; work_wechat_filter?: "empty" | "has" | undefined; group_nos?: ReadonlyArray<string> | undefined }) => {
    const scope = p.work_wechat_scope ?? "all"
    return [
      ...(p.work_wechat_id !== undefined ? [reach(scope, p.work_wechat_id)] : []),
      ...(p.work_wechat_id === undefined && p.work_wechat_filter === "has" ? [reach(scope, undefined)] : []),
      ...(p.work_wechat_id === undefined && p.work_wechat_filter === "empty" ? [sql`NOT ${reach(scope, undefined)}`] : []),
      ...(p.group_nos !== undefined ? [inGroups(p.group_nos)] : [])
    ]
  }
  const { timeZone } = yield* AppConfig
  const cols = sql.literal(COLUMNS)
  const toMatchmaker = ({ total_count: _, ...row }: MatchmakerRow): Matchmaker => ({
    ...row,
    created_at: formatTimestamp(row.created_at, timeZone),
    updated_at: formatTimestamp(row.updated_at, timeZone)
  })
  const one = (rows: ReadonlyArray<MatchmakerRow>) => Option.map(Option.fromNullable(rows[0]), toMatchmaker)

  const insert = (input: MatchmakerCreate) =>
    Effect.map(sql<MatchmakerRow>`INSERT INTO matchmakers ${sql.insert({ ...input })} RETURNING ${cols}`, (rows) => toMatchmaker(rows[0]!))

  const findById = (id: number) => Effect.map(sql<MatchmakerRow>`SELECT ${cols} FROM matchmakers WHERE id = ${id}`, one)

  const update = (id: number, change: MatchmakerUpdate) =>
    Object.keys(change).length === 0
      ? Effect.flatMap(sql`UPDATE matchmakers SET updated_at = now() WHERE id = ${id}`, () => findById(id))
      : Effect.map(
        sql<MatchmakerRow>`UPDATE matchmakers SET ${sql.update({ ...change })}, updated_at = now() WHERE id = ${id} RETURNING ${cols}`,
        one
      )

  const setColumn = (id: number, change: { status: "active" | "disabled" } | { cert_level: CertLevel }) =>
    Effect.map(sql<MatchmakerRow>`UPDATE matchmakers SET ${sql.update(change)}, updated_at = now() WHERE id = ${id} RETURNING ${cols}`, one)

  const list = (p: MatchmakerListParams) =>
    Effect.gen(function*() {
      const kw = p.keyword ? containsPattern(p.keyword) : undefined
      const where = sql.and([
        ...(p.company_id !== undefined ? [sql`company_id = ${p.company_id}`] : []),
        ...(kw ? [sql`(lower(name) LIKE ${kw} OR phone LIKE ${kw} OR lower(wechat) LIKE ${kw})`] : []),
        ...(p.status ? [sql`status = ${p.status}`] : []),
        ...(p.level ? [sql`level = ${p.level}`] : []),
        ...(p.has_guests === true ? [sql`guest_count > 0`] : p.has_guests === false ? [sql`guest_count = 0`] : []),
        ...reachFilters(p)
      ])
      const { pageSize, offset } = pageOf(p, MATCHMAKER_PAGE)
      const { rows, total } = yield* pageWithTotal(
        sql<MatchmakerRow>`SELECT ${cols}, count(*) OVER ()::int AS total_count FROM matchmakers m
          WHERE ${where} ORDER BY id DESC LIMIT ${pageSize} OFFSET ${offset}`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM matchmakers m WHERE ${where}`,
        offset
      )
      return { list: rows.map(toMatchmaker), total }
    })

  /**
   * Matchmakers with a wechat_id, for an external system's sync, each with all its group numbers
   * and the accounts that reach it under the scope. One statement: the page, then set-based
   * aggregates over the page's ids.
   */
  const ids = (p: MatchmakerIdsParams) =>
    Effect.gen(function*() {
      const { pageSize, offset } = pageOf(p, MATCHMAKER_IDS_PAGE)
      const scope = p.work_wechat_scope ?? "all"
      const where = sql.and([
        sql`m.wechat_id IS NOT NULL AND m.wechat_id <> ''`,
        ...(p.company_id !== undefined ? [sql`m.company_id = ${p.company_id}`] : []),
        ...reachFilters(p)
      ])
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
      const [rows, count] = yield* Effect.all([
        sql<MatchmakerIdItem>`WITH page AS (
            SELECT m.id, m.wechat_id FROM matchmakers m WHERE ${where} ORDER BY m.id DESC LIMIT ${pageSize} OFFSET ${offset}),
          nos AS (
            SELECT gm.matchmaker_id, array_agg(DISTINCT g.group_no ORDER BY g.group_no) AS group_nos
            FROM work_group_matchmakers gm JOIN work_groups g ON g.id = gm.work_group_id AND g.deleted_at IS NULL AND g.group_no <> ''
            WHERE gm.matchmaker_id IN (SELECT id FROM page) GROUP BY gm.matchmaker_id),
          reach AS (
            SELECT r.matchmaker_id, array_agg(DISTINCT r.account::int ORDER BY r.account::int) AS accounts
            FROM (${pairs}) r GROUP BY r.matchmaker_id)
          SELECT p.id::int AS id, p.wechat_id, coalesce(nos.group_nos, '{}') AS group_nos, coalesce(reach.accounts, '{}') AS work_wechat_ids
          FROM page p LEFT JOIN nos ON nos.matchmaker_id = p.id LEFT JOIN reach ON reach.matchmaker_id = p.id
          ORDER BY p.id DESC`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM matchmakers m WHERE ${where}`
      ], { concurrency: 2 })
      return { list: rows, total: count[0]!.n }
    })

  return { insert, findById, update, setColumn, list, ids } as const
})

export class MatchmakersRepo extends Context.Tag("Matchmakers/Repo")<MatchmakersRepo, Effect.Effect.Success<typeof makeMatchmakersRepo>>() {}
export const MatchmakersRepoLive = Layer.effect(MatchmakersRepo, makeMatchmakersRepo)
