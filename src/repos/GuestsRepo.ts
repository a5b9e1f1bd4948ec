// Guests: the only SQL over `guests` (and the matchmaker guest counters it moves). Rows are
// decoded by their schema at the boundary; a write encodes the guest's state into its columns.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"
import * as Struct from "effect/Struct"

import { pageOf } from "../../schema/Common.js"
import { ExistingGuest, Guest, GUEST_PAGE, GuestListItem, GuestListParams, RequirementTags } from "../../schema/Guests.js"
import type { GuestState } from "../domain/guest.js"
import { KEYWORD_FIELDS, type KeywordField } from "../domain/masking.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { SyncWindow } from "../domain/sync.js"
import { makeCounterTotal } from "./RowCountsRepo.js"
import { CountRow, PlatformTimeZone, Timestamp } from "./rows.js"
import {
  containsPattern,
  keywordMatch,
  listPage,
  pageTail,
  SearchRequest,
  sinceFilter,
  slotted,
  sqlEdge,
  statementEdge,
  syncColumns,
  SyncKeyFields
} from "./sqlHelpers.js"
import {
  type CounterMove,
  GUEST_COLUMNS,
  GUEST_LIST_COLUMNS,
  GUEST_VERSIONED_COLUMNS,
  guestCreatedTailSql,
  guestUpdatedTailSql,
  guestUpdatedTailValues
} from "./statements.js"

/**
 * A `guests` row as selected by COLUMNS: the contract's record, instants as platform-time text,
 * and the one stored flag the record does not show.
 */
const GuestRow = Schema.Struct({
  ...Guest.fields,
  family_income_explicit: Schema.Boolean,
  photo_time: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp
})
type GuestRow = typeof GuestRow.Type

/** A row of a list page (GUEST_LIST_COLUMNS): the contract's list item. */
const GuestListRow = Schema.Struct({
  ...GuestListItem.fields,
  photo_time: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
  ...SyncKeyFields
})

/** A scoped client's companies (DECISIONS §14): only their rows; null: every row. */
const Companies = Schema.NullOr(Schema.Array(Schema.Int))

const ListRequest = Schema.Struct({
  ...SearchRequest(GuestListParams, KEYWORD_FIELDS.guest).fields,
  sync: Schema.UndefinedOr(SyncWindow),
  companies: Companies
})

/**
 * The columns a write stores, from a guest's state: photo_time becomes an instant (null: left to
 * the column), requirement_tags JSON text. The state keeps a few coded answers as plain text
 * (the domain derives, it does not narrow them), so those are text here too.
 */
const GuestWrite = Schema.Struct({
  ...Struct.omit(Guest.fields, ["id", "created_at", "updated_at"]),
  education: Schema.NullOr(Schema.String),
  marital_status: Schema.NullOr(Schema.String),
  has_children: Schema.NullOr(Schema.String),
  has_house: Schema.NullOr(Schema.String),
  has_car: Schema.NullOr(Schema.String),
  accept_flash_marriage: Schema.NullOr(Schema.String),
  family_income_explicit: Schema.Boolean,
  photo_time: Schema.NullOr(Timestamp),
  requirement_tags: Schema.NullOr(Schema.fromJsonString(Schema.toType(RequirementTags)))
})

/** The columns of GuestListRow. */

const toGuest = ({ family_income_explicit: _, ...guest }: GuestRow): Guest => guest

const toState = ({ created_at: _c, id: _i, updated_at: _u, ...state }: GuestRow): GuestState => state

/** A guest's row as read to be updated: GuestRow and its version (GUEST_VERSIONED_COLUMNS). */
const VersionedRow = Schema.Struct({ ...GuestRow.fields, row_version: Schema.String })

/** A guest's stored state and the version of its row it was read from (statements.ts' GUEST_VERSIONED_COLUMNS). */
export interface VersionedState {
  readonly state: GuestState
  readonly version: string
}

const toVersioned = ({ row_version, ...row }: typeof VersionedRow.Type): VersionedState => ({ state: toState(row), version: row_version })

/** No photo_time: the column keeps its value (on insert, its default: the same instant as created_at). */
const columnsOf = ({ photo_time, ...columns }: typeof GuestWrite.Encoded) => photo_time === null ? columns : { ...columns, photo_time }

export class GuestsRepo extends Context.Service<GuestsRepo>()("Guests/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(GUEST_COLUMNS)
    const listCols = sql.literal(GUEST_LIST_COLUMNS)
    const syncKey = syncColumns(sql, "updated_at", "id")

    const insert = SqlSchema.findOne({
      Request: Schema.Struct({ state: GuestWrite, image_hash: Schema.optional(Schema.String) }),
      Result: GuestRow,
      execute: ({ image_hash, state }) =>
        sql`INSERT INTO guests ${sql.insert({ ...columnsOf(state), ...(image_hash !== undefined ? { image_hash } : {}) })}
          RETURNING ${cols}`
    })

    // POST /guests in one statement (issue 37): statements.ts's GUEST_CREATED_SQL says what it does.
    const createRecorded = SqlSchema.findOne({
      Request: Schema.Struct({ state: GuestWrite, timeZone: Schema.String }),
      Result: GuestRow,
      execute: ({ state, timeZone }) =>
        sql`WITH c AS (INSERT INTO guests ${sql.insert(columnsOf(state))} RETURNING ${cols})${sql.literal(guestCreatedTailSql(timeZone))}`
    })

    const update = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Int, state: GuestWrite }),
      Result: GuestRow,
      execute: ({ id, state }) =>
        sql`UPDATE guests SET ${sql.update(columnsOf(state))}, updated_at = now() WHERE id = ${id} RETURNING ${cols}`
    })

    /** `AND company_id = ANY (...)` for a scoped read (DECISIONS §14), nothing for an unscoped one. */
    const inCompanies = (companies: typeof Companies.Type, column = "company_id") =>
      companies === null ? sql`` : sql`AND ${sql.literal(column)} = ANY (${companies}::bigint[])`

    // PUT /guests/{id} in one statement (issue 37): the update made against the version read,
    // guest.updated, and the moved matchmakers' guest_count and events (guestUpdatedTailSql).
    const updateRecorded = SqlSchema.findOneOption({
      Request: Schema.Struct({
        id: Schema.Int,
        version: Schema.String,
        state: GuestWrite,
        changed: Schema.Array(Schema.String),
        moves: Schema.Array(Schema.Tuple([Schema.Int, Schema.Int])),
        timeZone: Schema.String
      }),
      Result: GuestRow,
      execute: ({ changed, id, moves, state, timeZone, version }) =>
        sql`WITH c AS (UPDATE guests SET ${sql.update(columnsOf(state))}, updated_at = now()
          WHERE id = ${id} AND xmin = ${version}::xid RETURNING ${cols})${
          slotted(sql, guestUpdatedTailSql(timeZone), guestUpdatedTailValues(changed, moves))
        }`
    })

    const findVersioned = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, companies: Companies, lock: Schema.Boolean }),
      Result: VersionedRow,
      execute: ({ companies, id, lock }) =>
        sql`SELECT ${sql.literal(GUEST_VERSIONED_COLUMNS)} FROM guests WHERE id = ${id} ${inCompanies(companies)}${
          lock ? sql` FOR UPDATE` : sql``
        }`
    })

    const findById = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, companies: Companies }),
      Result: GuestRow,
      execute: ({ companies, id }) => sql`SELECT ${cols} FROM guests WHERE id = ${id} ${inCompanies(companies)}`
    })

    const findByImage = SqlSchema.findOneOption({
      Request: Schema.Struct({ matchmakerId: Schema.Int, imageHash: Schema.String }),
      Result: ExistingGuest,
      execute: ({ imageHash, matchmakerId }) =>
        sql`SELECT id::int AS id, name FROM guests WHERE matchmaker_id = ${matchmakerId} AND image_hash = ${imageHash}`
    })

    const lockRows = SqlSchema.findAll({
      Request: Schema.Array(Schema.Int),
      Result: GuestRow,
      execute: (ids) => sql`SELECT ${cols} FROM guests WHERE id IN ${sql.in(ids)} ORDER BY id FOR UPDATE`
    })

    /** Counter moves [matchmaker id, delta], in id order, none zero. */
    const moveCounters = SqlSchema.void({
      Request: Schema.Array(Schema.Tuple([Schema.Int, Schema.Int])),
      execute: (entries) =>
        // Lock in id order first, so two writes moving the same counters cannot deadlock. NO KEY
        // UPDATE (what the UPDATE itself takes) does not conflict with the KEY SHARE locks that the
        // guests' foreign keys hold on the same rows.
        Effect.andThen(
          sql`SELECT id FROM matchmakers WHERE id IN ${sql.in(entries.map(([id]) => id))} ORDER BY id FOR NO KEY UPDATE`,
          sql`UPDATE matchmakers m SET guest_count = m.guest_count + d.delta
            FROM (SELECT unnest(${entries.map(([id]) => id)}::bigint[]) AS id, unnest(${entries.map(([, d]) => d)}::int[]) AS delta) d
            WHERE m.id = d.id`
        )
    })

    const findIds = SqlSchema.findAll({
      Request: Schema.Struct({
        table: Schema.Literals(["companies", "matchmakers"]),
        ids: Schema.Array(Schema.Int),
        companies: Companies
      }),
      Result: Schema.Struct({ id: Schema.Int }),
      // A company is in the scope by its id, a matchmaker by its company (an independent one is in none).
      execute: ({ companies, ids, table }) =>
        sql`SELECT id::int AS id FROM ${sql(table)} WHERE id IN ${sql.in(ids)}
          ${inCompanies(companies, table === "companies" ? "id" : "company_id")}`
    })

    const keywordColumns = { name: sql`lower(name)`, phone: sql`phone` }
    /**
     * Below three characters the short grams of name and phone (search_grams) answer from their
     * index; with fewer fields searchable (a masking client) the grams only narrow, and each
     * remaining field is matched itself.
     */
    const keywordWhere = (keyword: string, searchable: ReadonlyArray<KeywordField<"guest">>) => {
      const match = keywordMatch(sql, keywordColumns, searchable, containsPattern(keyword))
      if ([...keyword].length > 2) return match
      const grams = sql`search_grams @> ARRAY[${keyword}]::text[]`
      return KEYWORD_FIELDS.guest.every((field) => searchable.includes(field)) ? grams : sql`${grams} AND ${match}`
    }
    const listWhere = ({ companies, params: p, searchable, sync }: typeof ListRequest.Type) => {
      const keyword = p.keyword?.trim().toLowerCase()
      const keywordFilter = keyword === undefined || keyword === "" ? [] : [keywordWhere(keyword, searchable)]
      return sql.and([
        ...keywordFilter,
        ...(p.gender ? [sql`gender = ${p.gender}`] : []),
        ...(p.workplace !== undefined ? [sql`workplace = ${p.workplace}`] : []),
        ...(p.status ? [sql`status = ${p.status}`] : []),
        ...(p.company_id !== undefined ? [sql`company_id = ${p.company_id}`] : []),
        ...(companies !== null ? [sql`company_id = ANY (${companies}::bigint[])`] : []),
        ...sinceFilter(sql, sync, "guests.updated_at")
      ])
    }

    const page = SqlSchema.findAll({
      Request: ListRequest,
      Result: GuestListRow,
      execute: (request) => {
        const p = request.params
        const { offset, pageSize } = pageOf(p, GUEST_PAGE)
        const dir = p.order_dir === "asc" ? "ASC" : "DESC"
        return sql`SELECT ${listCols}, ${syncKey} FROM guests ${
          pageTail(sql, {
            sync: request.sync,
            where: listWhere(request),
            at: "guests.updated_at",
            id: "guests.id",
            offsetOrder: `guests.${p.order_by ?? "created_at"} ${dir}, guests.id ${dir}`,
            pageSize,
            offset
          })
        }`
      }
    })
    const counterTotal = makeCounterTotal(sql, "guests", ["company_id", "status", "gender"])
    const count = SqlSchema.findOne({
      Request: ListRequest,
      Result: CountRow,
      execute: (request) => sql`SELECT count(*)::int AS n FROM guests WHERE ${listWhere(request)}`
    })

    return {
      /**
       * POST /guests' write in one statement: the guest (references checked), its event, its
       * matchmaker's guest_count and that event (createRecorded).
       */
      create: (state: GuestState) => sqlEdge(Effect.map(PlatformTimeZone.use((timeZone) => createRecorded({ state, timeZone })), toGuest)),
      insert: (state: GuestState, extra: { readonly image_hash?: string } = {}) =>
        sqlEdge(Effect.map(insert({ state, ...extra }), toGuest)),
      /** The guest created from this image under this matchmaker, if any. */
      findByImage: (matchmakerId: number, imageHash: string) => sqlEdge(findByImage({ matchmakerId, imageHash })),
      /**
       * The guest in the scope as stored, with its row's version (none outside the scope, as if it
       * did not exist); `lock`: locked for the rest of the transaction.
       */
      findVersioned: (scope: CompanyScope, id: number, lock = false) =>
        sqlEdge(Effect.map(findVersioned({ id, companies: Scopes.companyIds(scope), lock }), Option.map(toVersioned))),
      /**
       * PUT /guests/{id}'s write in one statement: the guest's next state stored, its
       * guest.updated event (`changed`: the fields sent), the matchmakers' guest_count moved
       * (`moves`: [id, delta], none zero, in any order) and their events (guestUpdatedTailSql), if the row is
       * still the `version` the state was derived from; none otherwise (nothing written). A write
       * that must decide from the current row (the guest's derived fields do: domain/guest.ts) reads
       * it first (findVersioned) and then writes without holding a lock in between: what it read is
       * what it changes, or it changes nothing and the caller decides again, under the row's lock.
       */
      updateRecorded: (
        id: number,
        version: string,
        state: GuestState,
        changed: ReadonlyArray<string>,
        moves: ReadonlyArray<CounterMove>
      ) =>
        statementEdge(
          sql,
          Effect.map(
            PlatformTimeZone.use((timeZone) => updateRecorded({ id, version, state, changed, moves, timeZone })),
            Option.map(toGuest)
          )
        ),
      /** Stores the next state of a guest that exists (locked by lockStates). */
      update: (id: number, state: GuestState) => sqlEdge(Effect.map(update({ id, state }), toGuest)),
      /** The guest, if it exists in the scope (outside it: none, as if it did not exist). */
      findById: (scope: CompanyScope, id: number) =>
        sqlEdge(Effect.map(findById({ id, companies: Scopes.companyIds(scope) }), Option.map(toGuest))),
      /** Current states of these guests, locked for the rest of the transaction. */
      lockStates: (ids: ReadonlyArray<number>) =>
        ids.length === 0
          ? Effect.succeed(new Map<number, GuestState>())
          : sqlEdge(Effect.map(lockRows(ids), (rows) => new Map(rows.map((r) => [r.id, toState(r)] as const)))),
      /** Moves matchmaker guest counters by the given deltas (ids with a zero delta are skipped). */
      adjustGuestCounts: (deltas: ReadonlyMap<number, number>) => {
        const entries = [...deltas].filter(([, d]) => d !== 0).sort(([a], [b]) => a - b)
        return entries.length === 0 ? Effect.void : sqlEdge(moveCounters(entries))
      },
      /** Which of these ids name a row of the table in the scope (a matchmaker by its company). */
      existingIds: (scope: CompanyScope, table: "companies" | "matchmakers", ids: ReadonlyArray<number>) =>
        ids.length === 0
          ? Effect.succeed(new Set<number>())
          : sqlEdge(
            Effect.map(
              findIds({ table, ids: [...new Set(ids)], companies: Scopes.companyIds(scope) }),
              (rows) => new Set(rows.map((r) => r.id))
            )
          ),
      /**
       * A page of the scope's guests and the exact total: from the counters when the client is
       * unscoped and the filter is none or one of company_id, status, gender (no count over the
       * rows), else a count with the same filter (a scoped list always counts: the counters know
       * no scope). `searchable`: the fields the keyword may match (DECISIONS §1: a masking
       * client's unmasked ones).
       */
      list: (
        scope: CompanyScope,
        p: GuestListParams,
        searchable: ReadonlyArray<KeywordField<"guest">>,
        sync: SyncWindow | undefined
      ) => {
        const companies = Scopes.companyIds(scope)
        const request = { params: p, searchable, sync, companies }
        const counter = (companies === null ?
          counterTotal({
            // As listWhere: a blank keyword is no filter, an empty workplace is one.
            keyword: p.keyword?.trim() || undefined,
            workplace: p.workplace,
            company_id: p.company_id,
            status: p.status,
            gender: p.gender,
            updated_since: sync?.since
          }) :
          undefined) ?? Effect.map(count(request), (row) => row.n)
        // The total never comes from a window count here: from the counter or the count.
        return sqlEdge(listPage({
          sync,
          counter,
          page: () => page(request),
          count: Effect.succeed([]),
          offset: pageOf(p, GUEST_PAGE).offset
        }))
      }
    } as const
  })
}) {
  static readonly layer = Layer.effect(GuestsRepo, GuestsRepo.make)
}
