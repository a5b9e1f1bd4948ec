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

export const makeMatchmakersRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
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
        ...(p.has_guests === true ? [sql`guest_count > 0`] : p.has_guests === false ? [sql`guest_count = 0`] : [])
      ])
      const { pageSize, offset } = pageOf(p, MATCHMAKER_PAGE)
      const { rows, total } = yield* pageWithTotal(
        sql<MatchmakerRow>`SELECT ${cols}, count(*) OVER ()::int AS total_count FROM matchmakers
          WHERE ${where} ORDER BY id DESC LIMIT ${pageSize} OFFSET ${offset}`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM matchmakers WHERE ${where}`,
        offset
      )
      return { list: rows.map(toMatchmaker), total }
    })

  /** Matchmakers with a wechat_id, for an external system's sync. */
  const ids = (p: MatchmakerIdsParams) =>
    Effect.gen(function*() {
      const where = sql.and([
        sql`wechat_id IS NOT NULL AND wechat_id <> ''`,
        ...(p.company_id !== undefined ? [sql`company_id = ${p.company_id}`] : [])
      ])
      const { pageSize, offset } = pageOf(p, MATCHMAKER_IDS_PAGE)
      const { rows, total } = yield* pageWithTotal(
        sql<{ id: number; wechat_id: string; total_count: number }>`
          SELECT id::int AS id, wechat_id, count(*) OVER ()::int AS total_count FROM matchmakers
          WHERE ${where} ORDER BY id DESC LIMIT ${pageSize} OFFSET ${offset}`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM matchmakers WHERE ${where}`,
        offset
      )
      const list: Array<MatchmakerIdItem> = rows.map((r) => ({ id: r.id, wechat_id: r.wechat_id, group_nos: [], work_wechat_ids: [] }))
      return { list, total }
    })

  return { insert, findById, update, setColumn, list, ids } as const
})

export class MatchmakersRepo extends Context.Tag("Matchmakers/Repo")<MatchmakersRepo, Effect.Effect.Success<typeof makeMatchmakersRepo>>() {}
export const MatchmakersRepoLive = Layer.effect(MatchmakersRepo, makeMatchmakersRepo)
