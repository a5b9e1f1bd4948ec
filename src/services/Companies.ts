// Company use cases (SPEC §4.7): create, read, update, list; status and certification are the
// operator's (DECISIONS §5), through the admin command line.
import * as Effect from "effect/Effect"

import type { CompanyCreate, CompanyListParams, CompanyStatus, CompanyUpdate } from "../../schema/Companies.js"
import type { CertLevel } from "../../schema/Matchmakers.js"
import { CompaniesRepo } from "../repos/CompaniesRepo.js"
import { pickSent, someOrNotFound } from "./common.js"

export class Companies extends Effect.Service<Companies>()("Companies/Service", {
  dependencies: [CompaniesRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* CompaniesRepo
    const orNotFound = (id: number) => someOrNotFound("company", id)

    const create = (input: CompanyCreate) => repo.insert(input).pipe(Effect.withSpan("Companies.create"))

    const get = (id: number) => repo.findById(id).pipe(orNotFound(id), Effect.withSpan("Companies.get"))

    const update = (id: number, change: CompanyUpdate) =>
      Effect.gen(function*() {
        const company = yield* repo.update(id, change).pipe(orNotFound(id))
        return { id: company.id, name: company.name, ...pickSent(company, change), updated_at: company.updated_at }
      }).pipe(Effect.withSpan("Companies.update"))

    const list = (params: CompanyListParams) =>
      Effect.map(repo.list(params), ({ list, total }) => ({ list: list.map(({ updated_at: _, ...item }) => item), total }))
        .pipe(Effect.withSpan("Companies.list"))

    const setStatus = (id: number, status: CompanyStatus) => repo.setColumn(id, { status }).pipe(orNotFound(id))
    const setCertLevel = (id: number, cert_level: CertLevel) => repo.setColumn(id, { cert_level }).pipe(orNotFound(id))

    /** Fails with 404 `company` when the id is unknown (a referenced id in a body). */
    const ensureExists = (id: number) => Effect.asVoid(get(id))

    return { create, get, update, list, setStatus, setCertLevel, ensureExists } as const
  })
}) {}
