// Guests: the only SQL over `guests` (and the matchmaker guest counters it moves).
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { pageOf } from "../../schema/Common.js"
import { GUEST_PAGE, type Guest, type GuestListItem, type GuestListParams } from "../../schema/Guests.js"
import { AppConfig } from "../Config.js"
import type { GuestState } from "../domain/guest.js"
import { formatTimestamp, parseTimestamp } from "../domain/time.js"
import { containsPattern } from "./sqlHelpers.js"

interface GuestRow extends Omit<GuestState, "photo_time" | "completeness"> {
  readonly id: number
  readonly photo_time: Date
  readonly completeness: string | number
  readonly created_at: Date
  readonly updated_at: Date
}

const STATE_COLUMNS = [
  "name", "gender", "age", "phone", "wechat", "workplace", "height", "weight", "education", "occupation",
  "income_level", "income_amount", "family_income_amount", "family_income_level", "family_income_explicit",
  "marital_status", "has_children", "has_house", "has_car", "self_intro", "requirement", "requirement_tags",
  "req_age_min", "req_age_max", "req_height_min", "req_education_min", "req_weight_min", "req_weight_max",
  "req_income_amount", "req_income_text", "req_location", "req_location_codes", "req_housing", "req_health",
  "native_place", "native_place_code", "photos", "photo_time", "birth_date", "personality", "source_id", "source",
  "matchmaker_id", "company_id", "ethnicity", "hobbies", "family_members", "health_status", "dating_description",
  "accept_flash_marriage", "status", "completeness"
] as const satisfies ReadonlyArray<keyof GuestState>

const CASTS: Partial<Record<(typeof STATE_COLUMNS)[number], string>> = {
  income_amount: "income_amount::float8",
  family_income_amount: "family_income_amount::float8",
  req_income_amount: "req_income_amount::float8",
  birth_date: "birth_date::text",
  matchmaker_id: "matchmaker_id::int",
  company_id: "company_id::int",
  completeness: "completeness::float8"
}

const SELECT_COLUMNS = [
  "id::int AS id",
  ...STATE_COLUMNS.map((c) => (CASTS[c] ? `${CASTS[c]} AS ${c}` : c)),
  "created_at",
  "updated_at"
].join(", ")

const LIST_COLUMNS = [
  "id::int AS id", "name", "gender", "age", "phone", "workplace", "height", "weight", "education", "occupation",
  "income_level", "income_amount::float8 AS income_amount", "family_income_amount::float8 AS family_income_amount",
  "family_income_level", "req_income_amount::float8 AS req_income_amount", "req_income_text", "marital_status",
  "requirement", "requirement_tags", "photos", "photo_time", "company_id::int AS company_id", "status", "created_at", "updated_at"
].join(", ")

export const makeGuestsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const { timeZone } = yield* AppConfig
  const cols = sql.literal(SELECT_COLUMNS)
  const listCols = sql.literal(LIST_COLUMNS)

  const toState = (row: GuestRow): GuestState => {
    const { id: _id, created_at: _c, updated_at: _u, ...rest } = row
    return { ...rest, photo_time: formatTimestamp(row.photo_time, timeZone), completeness: Number(row.completeness) }
  }

  const toGuest = (row: GuestRow): Guest => {
    const { family_income_explicit: _f, ...rest } = row
    return {
      ...rest,
      photo_time: formatTimestamp(row.photo_time, timeZone),
      completeness: Number(row.completeness),
      created_at: formatTimestamp(row.created_at, timeZone),
      updated_at: formatTimestamp(row.updated_at, timeZone)
    } as Guest
  }

  const toRecord = (state: GuestState): Record<string, unknown> => {
    const record: Record<string, unknown> = {}
    for (const c of STATE_COLUMNS) record[c] = state[c]
    // No photo_time: the insert's default, the same instant as created_at.
    if (state.photo_time === null) delete record.photo_time
    else record.photo_time = parseTimestamp(state.photo_time, timeZone)
    record.requirement_tags = state.requirement_tags === null ? null : JSON.stringify(state.requirement_tags)
    record.photos = [...state.photos]
    record.req_location_codes = [...state.req_location_codes]
    return record
  }

  const insert = (state: GuestState, extra: { readonly image_hash?: string } = {}) =>
    Effect.map(
      sql<GuestRow>`INSERT INTO guests ${sql.insert({ ...toRecord(state), ...extra })} RETURNING ${cols}`,
      (rows) => toGuest(rows[0]!)
    )

  /** The guest created from this image under this matchmaker, if any. */
  const findByImage = (matchmakerId: number, imageHash: string) =>
    Effect.map(
      sql<{ id: number; name: string }>`SELECT id::int AS id, name FROM guests WHERE matchmaker_id = ${matchmakerId} AND image_hash = ${imageHash}`,
      (rows) => Option.fromNullable(rows[0])
    )

  const update = (id: number, state: GuestState) =>
    Effect.map(
      sql<GuestRow>`UPDATE guests SET ${sql.update(toRecord(state))}, updated_at = now() WHERE id = ${id} RETURNING ${cols}`,
      (rows) => toGuest(rows[0]!)
    )

  const findById = (id: number) =>
    Effect.map(sql<GuestRow>`SELECT ${cols} FROM guests WHERE id = ${id}`, (rows) => Option.map(Option.fromNullable(rows[0]), toGuest))

  /** Current states of these guests, locked for the rest of the transaction. */
  const lockStates = (ids: ReadonlyArray<number>) =>
    ids.length === 0
      ? Effect.succeed(new Map<number, GuestState>())
      : Effect.map(
        sql<GuestRow>`SELECT ${cols} FROM guests WHERE id IN ${sql.in(ids)} ORDER BY id FOR UPDATE`,
        (rows) => new Map(rows.map((r) => [r.id, toState(r)] as const))
      )

  /** Moves matchmaker guest counters by the given deltas (ids with a zero delta are skipped). */
  const adjustGuestCounts = (deltas: ReadonlyMap<number, number>) => {
    const entries = [...deltas].filter(([, d]) => d !== 0).sort(([a], [b]) => a - b)
    if (entries.length === 0) return Effect.void
    // Lock in id order first, so two writes moving the same counters cannot deadlock. NO KEY
    // UPDATE (what the UPDATE itself takes) does not conflict with the KEY SHARE locks that the
    // guests' foreign keys hold on the same rows.
    return Effect.zipRight(
      sql`SELECT id FROM matchmakers WHERE id IN ${sql.in(entries.map(([id]) => id))} ORDER BY id FOR NO KEY UPDATE`,
      Effect.asVoid(sql`UPDATE matchmakers m SET guest_count = m.guest_count + d.delta
        FROM (SELECT unnest(${entries.map(([id]) => id)}::bigint[]) AS id, unnest(${entries.map(([, d]) => d)}::int[]) AS delta) d
        WHERE m.id = d.id`)
    )
  }

  const existingIds = (table: "companies" | "matchmakers", ids: ReadonlyArray<number>) =>
    ids.length === 0
      ? Effect.succeed(new Set<number>())
      : Effect.map(
        sql<{ id: number }>`SELECT id::int AS id FROM ${sql(table)} WHERE id IN ${sql.in([...new Set(ids)])}`,
        (rows) => new Set(rows.map((r) => r.id))
      )

  const list = (p: GuestListParams) =>
    Effect.gen(function*() {
      const { pageSize, offset } = pageOf(p, GUEST_PAGE)
      const keyword = p.keyword?.trim().toLowerCase()
      const keywordFilter = keyword === undefined || keyword === ""
        ? []
        : [...keyword].length <= 2
        ? [sql`search_grams @> ARRAY[${keyword}]::text[]`]
        : [sql`(lower(name) LIKE ${containsPattern(keyword)} OR phone LIKE ${containsPattern(keyword)})`]
      const where = sql.and([
        ...keywordFilter,
        ...(p.gender ? [sql`gender = ${p.gender}`] : []),
        ...(p.workplace !== undefined ? [sql`workplace = ${p.workplace}`] : []),
        ...(p.status ? [sql`status = ${p.status}`] : []),
        ...(p.company_id !== undefined ? [sql`company_id = ${p.company_id}`] : [])
      ])
      const orderColumn = sql(p.order_by ?? "created_at")
      const dir = sql.literal(p.order_dir === "asc" ? "ASC" : "DESC")
      const [rows, count] = yield* Effect.all([
        sql<GuestRow>`SELECT ${listCols} FROM guests WHERE ${where}
          ORDER BY ${orderColumn} ${dir}, id ${dir} LIMIT ${pageSize} OFFSET ${offset}`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM guests WHERE ${where}`
      ], { concurrency: 2 })
      const list: Array<GuestListItem> = rows.map((r) => ({
        ...(r as unknown as GuestListItem),
        photo_time: formatTimestamp(r.photo_time, timeZone),
        created_at: formatTimestamp(r.created_at, timeZone),
        updated_at: formatTimestamp(r.updated_at, timeZone)
      }))
      return { list, total: count[0]!.n }
    })

  return { insert, findByImage, update, findById, lockStates, adjustGuestCounts, existingIds, list } as const
})

export class GuestsRepo extends Context.Tag("Guests/Repo")<GuestsRepo, Effect.Effect.Success<typeof makeGuestsRepo>>() {}
export const GuestsRepoLive = Layer.effect(GuestsRepo, makeGuestsRepo)
