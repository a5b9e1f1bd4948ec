// Image blacklist: the only SQL over `image_blacklist`. Each call is one statement, whatever
// the number of md5 values; rows are decoded by their schema at the boundary.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { pageOf } from "../../schema/Common.js"
import { BLACKLIST_PAGE, BlacklistListParams, BlacklistRecord, BlacklistSource } from "../../schema/ImageBlacklist.js"
import { makeCounterTotal } from "./RowCountsRepo.js"
import { CountRow, IsoTimestamp } from "./rows.js"
import { pageAndTotal, sqlEdge } from "./sqlHelpers.js"

/** One md5 to add, checked and normalised by the service. */
export const BlacklistItem = Schema.Struct({ md5: Schema.String, source: BlacklistSource, reason: Schema.String })
export type BlacklistItem = typeof BlacklistItem.Type

/** A record as selected by COLUMNS: the contract's record, created_at in ISO form (SPEC §2.7). */
const RecordRow = Schema.Struct({ ...BlacklistRecord.fields, created_at: IsoTimestamp })
const RecordPageRow = Schema.Struct({ ...RecordRow.fields, total_count: Schema.optional(Schema.Int) })

const COLUMNS = "id::int AS id, md5, source, status, hit_count, created_at"

export class ImageBlacklistRepo extends Context.Service<ImageBlacklistRepo>()("ImageBlacklist/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(COLUMNS)

    const where = (p: BlacklistListParams) =>
      sql.and([
        ...(p.status ? [sql`status = ${p.status}`] : []),
        ...(p.source ? [sql`source = ${p.source}`] : [])
      ])
    const page = SqlSchema.findAll({
      Request: Schema.Struct({ p: Schema.toType(BlacklistListParams), window: Schema.Boolean }),
      Result: RecordPageRow,
      execute: ({ p, window }) => {
        const { offset, pageSize } = pageOf(p, BLACKLIST_PAGE)
        return sql`SELECT ${cols}${window ? sql`, count(*) OVER ()::int AS total_count` : sql``}
          FROM image_blacklist WHERE ${where(p)} ORDER BY id DESC LIMIT ${pageSize} OFFSET ${offset}`
      }
    })
    const counterTotal = makeCounterTotal(sql, "image_blacklist", ["status", "source"])
    const count = SqlSchema.findAll({
      Request: Schema.toType(BlacklistListParams),
      Result: CountRow,
      execute: (p) => sql`SELECT count(*)::int AS n FROM image_blacklist WHERE ${where(p)}`
    })

    const upsert = SqlSchema.findAll({
      Request: Schema.Array(BlacklistItem),
      Result: Schema.Struct({ md5: Schema.String, inserted: Schema.Boolean }),
      execute: (items) =>
        sql`WITH input AS (
            SELECT * FROM unnest(${items.map((i) => i.md5)}::text[], ${items.map((i) => i.source)}::text[], ${
          items.map((i) => i.reason)
        }::text[])
              WITH ORDINALITY AS t(md5, source, reason, ord)),
          first AS (SELECT DISTINCT ON (md5) md5, source, reason FROM input ORDER BY md5, ord)
          INSERT INTO image_blacklist (md5, source, reject_reason)
          SELECT md5, source, reason FROM first
          ON CONFLICT (md5) DO UPDATE SET status = 'active', updated_at = now()
            WHERE image_blacklist.status = 'disabled'
          RETURNING md5, (xmax = 0) AS inserted`
    })

    const countHits = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ md5: Schema.String }),
      execute: (md5s) =>
        sql`UPDATE image_blacklist SET hit_count = hit_count + 1
          WHERE md5 = ANY(${[...new Set(md5s)]}::text[]) AND status = 'active' RETURNING md5`
    })

    const deleteRecord = SqlSchema.findOneOption({
      Request: Schema.Int,
      Result: Schema.Struct({ id: Schema.Int }),
      execute: (id) => sql`DELETE FROM image_blacklist WHERE id = ${id} RETURNING id::int AS id`
    })

    const updateStatus = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, status: BlacklistRecord.fields.status }),
      Result: RecordRow,
      execute: ({ id, status }) => sql`UPDATE image_blacklist SET status = ${status}, updated_at = now() WHERE id = ${id} RETURNING ${cols}`
    })

    return {
      list: (p: BlacklistListParams) =>
        sqlEdge(Effect.map(
          pageAndTotal({
            counter: counterTotal({ status: p.status, source: p.source }),
            page: (window) => page({ p, window }),
            count: count(p),
            offset: pageOf(p, BLACKLIST_PAGE).offset
          }),
          ({ rows, total }) => ({
            list: rows.map(({ total_count: _, ...record }) => record),
            total
          })
        )),
      /**
       * Adds new md5s and re-activates disabled ones (first occurrence in the list wins); returns
       * which md5s were inserted and which restored. Existing active ones are left alone.
       */
      add: (items: ReadonlyArray<BlacklistItem>) =>
        items.length === 0
          ? Effect.succeed({ added: new Set<string>(), restored: new Set<string>() })
          : sqlEdge(Effect.map(upsert(items), (rows) => ({
            added: new Set(rows.filter((r) => r.inserted).map((r) => r.md5)),
            restored: new Set(rows.filter((r) => !r.inserted).map((r) => r.md5))
          }))),
      /** The md5s among these that hit an active record; each hit counts once per call. */
      hit: (md5s: ReadonlyArray<string>) =>
        md5s.length === 0
          ? Effect.succeed(new Set<string>())
          : sqlEdge(Effect.map(countHits(md5s), (rows) => new Set(rows.map((r) => r.md5)))),
      /** Permanent removal; false when no record has the id. */
      remove: (id: number) => sqlEdge(Effect.map(deleteRecord(id), Option.isSome)),
      setStatus: (id: number, status: "active" | "disabled") => sqlEdge(updateStatus({ id, status }))
    } as const
  })
}) {
  static readonly layer = Layer.effect(ImageBlacklistRepo, ImageBlacklistRepo.make)
}
