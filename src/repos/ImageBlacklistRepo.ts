// Image blacklist: the only SQL over `image_blacklist`. Each call is one statement, whatever
// the number of md5 values.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import { pageOf } from "../../schema/Common.js"
import { BLACKLIST_PAGE, type BlacklistListParams, type BlacklistRecord, type BlacklistSource } from "../../schema/ImageBlacklist.js"
import { AppConfig } from "../Config.js"
import { formatIso } from "../domain/time.js"
import { pageWithTotal } from "./sqlHelpers.js"

export interface BlacklistItem {
  readonly md5: string
  readonly source: BlacklistSource
  readonly reason: string
}

export const makeImageBlacklistRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const { timeZone } = yield* AppConfig

  const list = (p: BlacklistListParams) =>
    Effect.gen(function*() {
      const { pageSize, offset } = pageOf(p, BLACKLIST_PAGE)
      const where = sql.and([
        ...(p.status ? [sql`status = ${p.status}`] : []),
        ...(p.source ? [sql`source = ${p.source}`] : [])
      ])
      const { rows, total } = yield* pageWithTotal(
        sql<Omit<BlacklistRecord, "created_at"> & { created_at: Date; total_count: number }>`
          SELECT id::int AS id, md5, source, status, hit_count, created_at, count(*) OVER ()::int AS total_count
          FROM image_blacklist WHERE ${where} ORDER BY id DESC LIMIT ${pageSize} OFFSET ${offset}`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM image_blacklist WHERE ${where}`,
        offset
      )
      return { list: rows.map(({ total_count: _, ...r }): BlacklistRecord => ({ ...r, created_at: formatIso(r.created_at, timeZone) })), total }
    })

  /**
   * Adds new md5s and re-activates disabled ones (first occurrence in the list wins); returns
   * which md5s were inserted and which restored. Existing active ones are left alone.
   */
  const add = (items: ReadonlyArray<BlacklistItem>) =>
    items.length === 0
      ? Effect.succeed({ added: new Set<string>(), restored: new Set<string>() })
      : Effect.map(
        sql<{ md5: string; inserted: boolean }>`WITH input AS (
            SELECT * FROM unnest(${items.map((i) => i.md5)}::text[], ${items.map((i) => i.source)}::text[], ${items.map((i) => i.reason)}::text[])
              WITH ORDINALITY AS t(md5, source, reason, ord)),
          first AS (SELECT DISTINCT ON (md5) md5, source, reason FROM input ORDER BY md5, ord)
          INSERT INTO image_blacklist (md5, source, reject_reason)
          SELECT md5, source, reason FROM first
          ON CONFLICT (md5) DO UPDATE SET status = 'active', updated_at = now()
            WHERE image_blacklist.status = 'disabled'
          RETURNING md5, (xmax = 0) AS inserted`,
        (rows) => ({
          added: new Set(rows.filter((r) => r.inserted).map((r) => r.md5)),
          restored: new Set(rows.filter((r) => !r.inserted).map((r) => r.md5))
        })
      )

  /** The md5s among these that hit an active record; each hit counts once per call. */
  const hit = (md5s: ReadonlyArray<string>) =>
    md5s.length === 0
      ? Effect.succeed(new Set<string>())
      : Effect.map(
        sql<{ md5: string }>`UPDATE image_blacklist SET hit_count = hit_count + 1
          WHERE md5 = ANY(${[...new Set(md5s)]}::text[]) AND status = 'active' RETURNING md5`,
        (rows) => new Set(rows.map((r) => r.md5))
      )

  const remove = (id: number) =>
    Effect.map(sql<{ id: number }>`DELETE FROM image_blacklist WHERE id = ${id} RETURNING id::int AS id`, (r) => r.length > 0)

  const setStatus = (id: number, status: "active" | "disabled") =>
    Effect.map(
      sql<Omit<BlacklistRecord, "created_at"> & { created_at: Date }>`UPDATE image_blacklist SET status = ${status}, updated_at = now()
        WHERE id = ${id} RETURNING id::int AS id, md5, source, status, hit_count, created_at`,
      (r) => r[0] === undefined ? undefined : { ...r[0], created_at: formatIso(r[0].created_at, timeZone) }
    )

  return { list, add, hit, remove, setStatus } as const
})

export class ImageBlacklistRepo extends Context.Tag("ImageBlacklist/Repo")<ImageBlacklistRepo, Effect.Effect.Success<typeof makeImageBlacklistRepo>>() {}
export const ImageBlacklistRepoLive = Layer.effect(ImageBlacklistRepo, makeImageBlacklistRepo)
