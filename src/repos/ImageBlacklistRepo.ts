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
import { SyncWindow } from "../domain/sync.js"
import { makeCounterTotal } from "./RowCountsRepo.js"
import { CountRow, IsoTimestamp } from "./rows.js"
import { listPage, pageTail, sinceFilter, sqlEdge, syncColumns, SyncKeyFields } from "./sqlHelpers.js"

/** One md5 to add, checked and normalised by the service. */
export const BlacklistItem = Schema.Struct({ md5: Schema.String, source: BlacklistSource, reason: Schema.String })
export type BlacklistItem = typeof BlacklistItem.Type

/** A record as selected by COLUMNS: the contract's record, created_at in ISO form (SPEC §2.7). */
const RecordRow = Schema.Struct({ ...BlacklistRecord.fields, created_at: IsoTimestamp })
const RecordPageRow = Schema.Struct({ ...RecordRow.fields, total_count: Schema.optional(Schema.Int), ...SyncKeyFields })
const ListRequest = Schema.Struct({ p: Schema.toType(BlacklistListParams), sync: Schema.UndefinedOr(SyncWindow) })

const COLUMNS = "id::int AS id, md5, source, status, hit_count, created_at"

export class ImageBlacklistRepo extends Context.Service<ImageBlacklistRepo>()("ImageBlacklist/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(COLUMNS)

    const where = ({ p, sync }: typeof ListRequest.Type) =>
      sql.and([
        ...(p.status ? [sql`status = ${p.status}`] : []),
        ...(p.source ? [sql`source = ${p.source}`] : []),
        ...sinceFilter(sql, sync, "image_blacklist.updated_at")
      ])
    const page = SqlSchema.findAll({
      Request: Schema.Struct({ ...ListRequest.fields, window: Schema.Boolean }),
      Result: RecordPageRow,
      execute: ({ p, sync, window }) => {
        const { offset, pageSize } = pageOf(p, BLACKLIST_PAGE)
        return sql`SELECT ${cols}, ${syncColumns(sql, "image_blacklist.updated_at", "image_blacklist.id")}${
          window ? sql`, count(*) OVER ()::int AS total_count` : sql``
        } FROM image_blacklist ${
          pageTail(sql, {
            sync,
            where: where({ p, sync }),
            at: "image_blacklist.updated_at",
            id: "image_blacklist.id",
            offsetOrder: "image_blacklist.id DESC",
            pageSize,
            offset
          })
        }`
      }
    })
    const counterTotal = makeCounterTotal(sql, "image_blacklist", ["status", "source"])
    const count = SqlSchema.findAll({
      Request: ListRequest,
      Result: CountRow,
      execute: (request) => sql`SELECT count(*)::int AS n FROM image_blacklist WHERE ${where(request)}`
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
      list: (p: BlacklistListParams, sync: SyncWindow | undefined) =>
        sqlEdge(listPage({
          sync,
          counter: counterTotal({ status: p.status, source: p.source, updated_since: sync?.since }),
          page: (window) => page({ p, sync, window }),
          count: count({ p, sync }),
          offset: pageOf(p, BLACKLIST_PAGE).offset
        })),
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
