// Companies: the only SQL over `companies`. Rows are decoded by their schema at the boundary.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { pageOf } from "../../schema/Common.js"
import {
  Company,
  COMPANY_PAGE,
  type CompanyCreate,
  CompanyListParams,
  type CompanyStatus,
  CompanyType,
  type CompanyUpdate
} from "../../schema/Companies.js"
import type { CertLevel } from "../../schema/Matchmakers.js"
import { KEYWORD_FIELDS, type KeywordField } from "../domain/masking.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { SyncWindow } from "../domain/sync.js"
import { makeRecordedWrites } from "./recordedWrites.js"
import { CountRow, Timestamp } from "./rows.js"
import {
  containsPattern,
  keywordMatch,
  pageTail,
  SearchRequest,
  sinceFilter,
  sqlEdge,
  syncColumns,
  SyncKeyFields,
  uncountedList
} from "./sqlHelpers.js"
import { COMPANY_COLUMNS } from "./statements.js"

/** A `companies` row as selected by COLUMNS: the contract's record, instants as platform-time text. */
const CompanyRow = Schema.Struct({ ...Company.fields, created_at: Timestamp, updated_at: Timestamp })
const CompanyPageRow = Schema.Struct({ ...CompanyRow.fields, total_count: Schema.optional(Schema.Int), ...SyncKeyFields })
const ListRequest = Schema.Struct({
  ...SearchRequest(CompanyListParams, KEYWORD_FIELDS.company).fields,
  sync: Schema.UndefinedOr(SyncWindow),
  /** A scoped client's companies (DECISIONS §14): only these; null: every company. */
  companies: Schema.NullOr(Schema.Array(Schema.Int))
})
const ById = Schema.Struct({ id: Schema.Int, companies: Schema.NullOr(Schema.Array(Schema.Int)) })

export class CompaniesRepo extends Context.Service<CompaniesRepo>()("Companies/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(COMPANY_COLUMNS)
    const keywordColumns = { name: sql`lower(name)` }
    /** The scope's condition (DECISIONS §14): the companies themselves, by primary key. */
    const inScope = (companies: ReadonlyArray<number> | null) =>
      companies === null ? [] : [sql`companies.id = ANY (${companies}::bigint[])`]
    const where = ({ companies, params: p, searchable, sync }: typeof ListRequest.Type) =>
      sql.and([
        ...inScope(companies),
        ...(p.keyword ? [keywordMatch(sql, keywordColumns, searchable, containsPattern(p.keyword))] : []),
        ...(p.status ? [sql`status = ${p.status}`] : []),
        ...(p.city ? [sql`city = ${p.city}`] : []),
        ...sinceFilter(sql, sync, "companies.updated_at")
      ])
    const syncKey = syncColumns(sql, "companies.updated_at", "companies.id")

    // A write and its event in one statement (recordedWrites): nothing is read before the write
    // decides, so no transaction, one round trip.
    const writes = makeRecordedWrites(sql, {
      table: "companies",
      columns: COMPANY_COLUMNS,
      row: CompanyRow,
      created: "company.created",
      updated: "company.updated",
      times: ["created_at", "updated_at"]
    })

    const findById = SqlSchema.findOneOption({
      Request: ById,
      Result: CompanyRow,
      execute: ({ companies, id }) => sql`SELECT ${cols} FROM companies WHERE ${sql.and([sql`id = ${id}`, ...inScope(companies)])}`
    })

    const findType = SqlSchema.findOneOption({
      Request: Schema.Int,
      Result: Schema.Struct({ company_type: CompanyType }),
      execute: (id) => sql`SELECT company_type FROM companies WHERE id = ${id}`
    })

    const page = SqlSchema.findAll({
      Request: Schema.Struct({ ...ListRequest.fields, window: Schema.Boolean }),
      Result: CompanyPageRow,
      execute: ({ window, ...request }) => {
        const { offset, pageSize } = pageOf(request.params, COMPANY_PAGE)
        return sql`SELECT ${cols}, ${syncKey}${window ? sql`, count(*) OVER ()::int AS total_count` : sql``} FROM companies ${
          pageTail(sql, {
            sync: request.sync,
            where: where(request),
            at: "companies.updated_at",
            id: "companies.id",
            offsetOrder: "companies.id DESC",
            pageSize,
            offset
          })
        }`
      }
    })
    const count = SqlSchema.findAll({
      Request: ListRequest,
      Result: CountRow,
      execute: (request) => sql`SELECT count(*)::int AS n FROM companies WHERE ${where(request)}`
    })

    return {
      /** Inserts a company and records its `company.created` event, in one statement. */
      insert: (input: CompanyCreate) => sqlEdge(writes.insert(input)),
      /** A company of the scope; none when unknown or outside it (DECISIONS §14: as if it did not exist). */
      findById: (scope: CompanyScope, id: number) => sqlEdge(findById({ id, companies: Scopes.companyIds(scope) })),
      findType: (id: number) => sqlEdge(Effect.map(findType(id), Option.map((r) => r.company_type))),
      /** Changes a company and records its `company.updated` event, in one statement; none for an unknown id. */
      update: (id: number, change: CompanyUpdate) => sqlEdge(writes.update(id, change)),
      setColumn: (id: number, change: { status: CompanyStatus } | { cert_level: CertLevel }) => sqlEdge(writes.update(id, change)),
      /** `searchable`: the fields the keyword may match (DECISIONS §1: a masking client's unmasked ones). */
      list: (
        scope: CompanyScope,
        params: CompanyListParams,
        searchable: ReadonlyArray<KeywordField<"company">>,
        sync: SyncWindow | undefined
      ) => {
        const request = { params, searchable, sync, companies: Scopes.companyIds(scope) }
        return uncountedList({ page: page, count: count }, request, pageOf(params, COMPANY_PAGE).offset)
      }
    } as const
  })
}) {
  static readonly layer = Layer.effect(CompaniesRepo, CompaniesRepo.make)
}
