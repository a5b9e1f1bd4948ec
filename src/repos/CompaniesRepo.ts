// Companies: the only SQL over `companies`.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { COMPANY_PAGE, type Company, type CompanyCreate, type CompanyListParams, type CompanyStatus, type CompanyUpdate } from "../../schema/Companies.js"
import type { CertLevel } from "../../schema/Matchmakers.js"
import { AppConfig } from "../Config.js"
import { formatTimestamp } from "../domain/time.js"
import { pageOf } from "../../schema/Common.js"
import { containsPattern, pageWithTotal } from "./sqlHelpers.js"

interface CompanyRow extends Omit<Company, "created_at" | "updated_at"> {
  readonly created_at: Date
  readonly updated_at: Date
  readonly total_count?: number
}

const COLUMNS = `id::int AS id, name, contact_name, contact_phone, province, city, district, address,
  credit_code, logo_url, company_type, cert_level, status, created_at, updated_at`

export const makeCompaniesRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const { timeZone } = yield* AppConfig
  const cols = sql.literal(COLUMNS)
  const toCompany = ({ total_count: _, ...row }: CompanyRow): Company => ({
    ...row,
    created_at: formatTimestamp(row.created_at, timeZone),
    updated_at: formatTimestamp(row.updated_at, timeZone)
  })
  const one = (rows: ReadonlyArray<CompanyRow>) => Option.map(Option.fromNullable(rows[0]), toCompany)

  const insert = (input: CompanyCreate) =>
    Effect.map(sql<CompanyRow>`INSERT INTO companies ${sql.insert({ ...input })} RETURNING ${cols}`, (rows) => toCompany(rows[0]!))

  const findById = (id: number) => Effect.map(sql<CompanyRow>`SELECT ${cols} FROM companies WHERE id = ${id}`, one)

  const findType = (id: number) =>
    Effect.map(
      sql<{ company_type: string }>`SELECT company_type FROM companies WHERE id = ${id}`,
      (rows) => Option.fromNullable(rows[0]?.company_type)
    )

  const update = (id: number, change: CompanyUpdate) =>
    Object.keys(change).length === 0
      ? Effect.flatMap(sql`UPDATE companies SET updated_at = now() WHERE id = ${id}`, () => findById(id))
      : Effect.map(
        sql<CompanyRow>`UPDATE companies SET ${sql.update({ ...change })}, updated_at = now() WHERE id = ${id} RETURNING ${cols}`,
        one
      )

  const setColumn = (id: number, change: { status: CompanyStatus } | { cert_level: CertLevel }) =>
    Effect.map(sql<CompanyRow>`UPDATE companies SET ${sql.update(change)}, updated_at = now() WHERE id = ${id} RETURNING ${cols}`, one)

  const list = (p: CompanyListParams) =>
    Effect.gen(function*() {
      const where = sql.and([
        ...(p.keyword ? [sql`lower(name) LIKE ${containsPattern(p.keyword)}`] : []),
        ...(p.status ? [sql`status = ${p.status}`] : []),
        ...(p.city ? [sql`city = ${p.city}`] : [])
      ])
      const { pageSize, offset } = pageOf(p, COMPANY_PAGE)
      const { rows, total } = yield* pageWithTotal(
        sql<CompanyRow>`SELECT ${cols}, count(*) OVER ()::int AS total_count FROM companies
          WHERE ${where} ORDER BY id DESC LIMIT ${pageSize} OFFSET ${offset}`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM companies WHERE ${where}`,
        offset
      )
      return { list: rows.map(toCompany), total }
    })

  return { insert, findById, findType, update, setColumn, list } as const
})

export class CompaniesRepo extends Context.Tag("Companies/Repo")<CompaniesRepo, Effect.Effect.Success<typeof makeCompaniesRepo>>() {}
export const CompaniesRepoLive = Layer.effect(CompaniesRepo, makeCompaniesRepo)
