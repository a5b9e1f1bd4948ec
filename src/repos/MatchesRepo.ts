// Matches: the only SQL over `matches`, and the matchmaker match counters they move. A second
// open match of a pair is refused by the partial unique index, never by a check-then-insert.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { pageOf } from "../../schema/Common.js"
import { Match, MATCH_PAGE, MatchListParams, MatchStatus } from "../../schema/Matches.js"
import { MatchExists } from "../domain/errors.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { SyncWindow } from "../domain/sync.js"
import { parseTimestamp } from "../domain/time.js"
import { makeCounterTotal } from "./RowCountsRepo.js"
import { CountRow, PlatformTimeZone, Timestamp } from "./rows.js"
import {
  listPage,
  onUniqueViolation,
  pageTail,
  sinceFilter,
  slotted,
  sqlEdge,
  statementEdge,
  syncColumns,
  SyncKeyFields
} from "./sqlHelpers.js"
import { matchCreatedTailSql, matchStatusChangedTailSql } from "./statements.js"

/** A `matches` row as selected by COLUMNS: the contract's record, instants as platform-time text. */
const MatchRow = Schema.Struct({ ...Match.fields, created_at: Timestamp, updated_at: Timestamp })
const MatchPageRow = Schema.Struct({ ...MatchRow.fields, total_count: Schema.optional(Schema.Int), ...SyncKeyFields })
const Companies = Schema.NullOr(Schema.Array(Schema.Int))
const ListRequest = Schema.Struct({
  params: Schema.toType(MatchListParams),
  timeZone: Schema.String,
  sync: Schema.UndefinedOr(SyncWindow),
  /** A scoped client's companies (DECISIONS §14): only matches with a guest of one of them; null: all. */
  companies: Companies
})
const ById = Schema.Struct({ id: Schema.Int, companies: Companies })
/** A match as read to be changed: MatchRow and its row's version (`xmin`, as statements.ts' GUEST_VERSIONED_COLUMNS says). */
const VersionedMatchRow = Schema.Struct({ ...MatchRow.fields, row_version: Schema.String })

/** A match and the version of its row it was read from. */
export interface VersionedMatch {
  readonly match: typeof MatchRow.Type
  readonly version: string
}
const toVersioned = ({ row_version, ...match }: typeof VersionedMatchRow.Type): VersionedMatch => ({ match, version: row_version })

const COLUMNS = `id::int AS id, guest_a_id::int AS guest_a_id, guest_b_id::int AS guest_b_id,
  guest_a_matchmaker_id::int AS guest_a_matchmaker_id, guest_b_matchmaker_id::int AS guest_b_matchmaker_id,
  match_score::float8 AS match_score, status, created_at, updated_at`

const MatchInsert = Schema.Struct({
  guest_a_id: Schema.Int,
  guest_b_id: Schema.Int,
  guest_a_matchmaker_id: Schema.NullOr(Schema.Int),
  guest_b_matchmaker_id: Schema.NullOr(Schema.Int),
  match_score: Schema.Number
})
export type MatchInsert = typeof MatchInsert.Type

/** One open match per pair in either order (DECISIONS §5). */
const mapOpenPair = onUniqueViolation({
  matches_open_pair_key: () => new MatchExists({ message: "these two guests already have an open match (pending, pending_date or dating)" })
})

export class MatchesRepo extends Context.Service<MatchesRepo>()("Matches/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(COLUMNS)

    // A match belongs to both its guests' companies (DECISIONS §14): in a scope when either guest
    // is. The guests of the companies come from guests_company_created_idx (company_id, …), the
    // matches of each guest from matches_guest_a_idx / matches_guest_b_idx (guest_*_id, id DESC),
    // as the company_id filter always has.
    const ofCompanies = (ids: ReadonlyArray<number>) => sql`(SELECT g.id FROM guests g WHERE g.company_id = ANY (${ids}::bigint[]))`
    const inScope = (companies: ReadonlyArray<number> | null) =>
      companies === null ? [] : [sql`(matches.guest_a_id IN ${ofCompanies(companies)} OR matches.guest_b_id IN ${ofCompanies(companies)})`]

    const where = (p: MatchListParams, timeZone: string, sync: SyncWindow | undefined, companies: ReadonlyArray<number> | null) => {
      // created_at bounds: from the start of start_date to the end of end_date (its last second
      // included, fractions too), in the platform time zone.
      const from = p.start_date === undefined ? undefined : parseTimestamp(`${p.start_date} 00:00:00`, timeZone)
      const until = p.end_date === undefined
        ? undefined
        : new Date(parseTimestamp(`${p.end_date} 23:59:59`, timeZone).getTime() + 1000)
      const ofCompany = (id: number) => sql`(SELECT g.id FROM guests g WHERE g.company_id = ${id})`
      return sql.and([
        ...inScope(companies),
        ...(p.guest_id !== undefined ? [sql`(guest_a_id = ${p.guest_id} OR guest_b_id = ${p.guest_id})`] : []),
        ...(p.status ? [sql`status = ${p.status}`] : []),
        ...(p.company_id !== undefined
          ? [sql`(guest_a_id IN ${ofCompany(p.company_id)} OR guest_b_id IN ${ofCompany(p.company_id)})`]
          : []),
        ...(from !== undefined ? [sql`created_at >= ${from}`] : []),
        ...(until !== undefined ? [sql`created_at < ${until}`] : []),
        ...sinceFilter(sql, sync, "matches.updated_at")
      ])
    }

    // POST /matches in one statement (issue 37): the match, match.created, and the counted
    // matchmakers' match_count and events (matchCreatedTailSql).
    const insert = SqlSchema.findOne({
      Request: Schema.Struct({ input: MatchInsert, timeZone: Schema.String }),
      Result: MatchRow,
      execute: ({ input, timeZone }) =>
        sql`WITH c AS (INSERT INTO matches ${sql.insert({ ...input })} RETURNING ${cols})${sql.literal(matchCreatedTailSql(timeZone))}`
    })

    const findVersioned = SqlSchema.findOneOption({
      Request: Schema.Struct({ ...ById.fields, lock: Schema.Boolean }),
      Result: VersionedMatchRow,
      execute: ({ companies, id, lock }) =>
        sql`SELECT ${cols}, xmin::text AS row_version FROM matches WHERE ${sql.and([sql`id = ${id}`, ...inScope(companies)])}${
          lock ? sql` FOR UPDATE` : sql``
        }`
    })

    // PUT /matches/{id}/status in one statement (issue 37): the move made against the version
    // read, match.status_changed, and on completion the matchmakers' success_count and events
    // (matchStatusChangedTailSql).
    const setStatusRecorded = SqlSchema.findOneOption({
      Request: Schema.Struct({
        id: Schema.Int,
        version: Schema.String,
        status: MatchStatus,
        previous: MatchStatus,
        timeZone: Schema.String
      }),
      Result: MatchRow,
      execute: ({ id, previous, status, timeZone, version }) =>
        sql`WITH c AS (UPDATE matches SET status = ${status}, updated_at = now() WHERE id = ${id} AND xmin = ${version}::xid
          RETURNING ${cols})${slotted(sql, matchStatusChangedTailSql(timeZone), [previous])}`
    })

    const findById = SqlSchema.findOneOption({
      Request: ById,
      Result: MatchRow,
      execute: ({ companies, id }) => sql`SELECT ${cols} FROM matches WHERE ${sql.and([sql`id = ${id}`, ...inScope(companies)])}`
    })

    const page = SqlSchema.findAll({
      Request: Schema.Struct({ ...ListRequest.fields, window: Schema.Boolean }),
      Result: MatchPageRow,
      execute: ({ companies, params, sync, timeZone, window }) => {
        const { offset, pageSize } = pageOf(params, MATCH_PAGE)
        return sql`SELECT ${cols}, ${syncColumns(sql, "matches.updated_at", "matches.id")}${
          window ? sql`, count(*) OVER ()::int AS total_count` : sql``
        } FROM matches ${
          pageTail(sql, {
            sync,
            where: where(params, timeZone, sync, companies),
            at: "matches.updated_at",
            id: "matches.id",
            offsetOrder: "matches.id DESC",
            pageSize,
            offset
          })
        }`
      }
    })
    const counterTotal = makeCounterTotal(sql, "matches", ["status"])
    const count = SqlSchema.findAll({
      Request: ListRequest,
      Result: CountRow,
      execute: ({ companies, params, sync, timeZone }) =>
        sql`SELECT count(*)::int AS n FROM matches WHERE ${where(params, timeZone, sync, companies)}`
    })

    return {
      /**
       * The new match, with its match.created event and the counted matchmakers' match_count and
       * events, in one statement; 400 match_exists when the pair already has an open one.
       */
      insert: (input: MatchInsert) => statementEdge(sql, PlatformTimeZone.use((timeZone) => insert({ input, timeZone }).pipe(mapOpenPair))),
      /**
       * A match of the scope as stored, with its row's version (none when unknown or outside it);
       * `lock`: locked for the rest of the transaction.
       */
      findVersioned: (scope: CompanyScope, id: number, lock = false) =>
        sqlEdge(Effect.map(findVersioned({ id, companies: Scopes.companyIds(scope), lock }), Option.map(toVersioned))),
      /**
       * A status move in one statement, with its event and, on completion, the counted
       * matchmakers' success_count and events, if the row is still the `version` the move was
       * decided on (`previous`: the status read then); none otherwise (nothing written). The move
       * is decided from the current status (domain/matches.ts), so the caller reads it first.
       */
      setStatusRecorded: (id: number, version: string, status: MatchStatus, previous: MatchStatus) =>
        statementEdge(sql, PlatformTimeZone.use((timeZone) => setStatusRecorded({ id, version, status, previous, timeZone }))),
      /** A match of the scope as the list shows it; none when unknown or outside it. */
      findById: (scope: CompanyScope, id: number) => sqlEdge(findById({ id, companies: Scopes.companyIds(scope) })),
      /**
       * A page of the scope's matches and the exact total: from the counters (status, or none) only
       * when the scope is every company; a scoped list counts with its filter (the counters know no scope).
       */
      list: (scope: CompanyScope, params: MatchListParams, sync: SyncWindow | undefined) =>
        Effect.flatMap(PlatformTimeZone, (timeZone) => {
          const companies = Scopes.companyIds(scope)
          return sqlEdge(listPage({
            sync,
            counter: companies === null
              ? counterTotal({
                guest_id: params.guest_id,
                status: params.status,
                company_id: params.company_id,
                start_date: params.start_date,
                end_date: params.end_date,
                updated_since: sync?.since
              })
              : undefined,
            page: (window) => page({ params, timeZone, sync, window, companies }),
            count: count({ params, timeZone, sync, companies }),
            offset: pageOf(params, MATCH_PAGE).offset
          }))
        })
    } as const
  })
}) {
  static readonly layer = Layer.effect(MatchesRepo, MatchesRepo.make)
}
