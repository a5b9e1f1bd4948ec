// Company use cases (SPEC §4.7): create, read, update, list; status and certification are the
// operator's (DECISIONS §5), through the admin command line.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { COMPANY_PAGE, type CompanyCreate, type CompanyListParams, type CompanyStatus, type CompanyUpdate } from "../../schema/Companies.js"
import type { CertLevel } from "../../schema/Matchmakers.js"
import { NotFound } from "../domain/errors.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { CompaniesRepo } from "../repos/CompaniesRepo.js"
import { method, pickSent, searchableFields, someOrNotFound, syncWindow } from "./common.js"

export class Companies extends Context.Service<Companies>()("Companies/Service", {
  make: Effect.gen(function*() {
    const repo = yield* CompaniesRepo
    const orNotFound = (id: number) => someOrNotFound("company", id)

    // Each write records its event in its own statement (CompaniesRepo: one round trip, no
    // transaction): the inserted or changed row is the record as GET /companies/{id} shows it.
    const create = method("Companies.create")(function*(input: CompanyCreate) {
      return yield* repo.insert(input)
    })

    /** A company of the caller's scope; 404 when unknown or outside it (DECISIONS §14). */
    const get = method("Companies.get")(function*(scope: CompanyScope, id: number) {
      return yield* repo.findById(scope, id).pipe(orNotFound(id))
    })

    /**
     * A scoped client updates only its companies: another's is 404 as if unknown (DECISIONS §14).
     * A company is in a scope by its id alone, so nothing is read before the write: the update
     * stays the one statement it is.
     */
    const update = method("Companies.update")(function*(scope: CompanyScope, id: number, change: CompanyUpdate) {
      if (Scopes.isScoped(scope) && !Scopes.includes(scope, id)) return yield* NotFound.of("company", id)
      const company = yield* repo.update(id, change).pipe(orNotFound(id))
      return { id: company.id, name: company.name, ...pickSent(company, change), updated_at: company.updated_at }
    })

    /** `masking`: the caller's; its keyword matches only what it sees unmasked (DECISIONS §1). */
    const list = method("Companies.list")(function*(scope: CompanyScope, params: CompanyListParams, masking: boolean) {
      const searchable = yield* searchableFields("company", masking, params)
      const page = yield* repo.list(scope, params, searchable, yield* syncWindow("companies", params, COMPANY_PAGE))
      return { ...page, list: page.list.map(({ updated_at: _, ...item }) => item) }
    })

    const setStatus = (id: number, status: CompanyStatus) => repo.setColumn(id, { status }).pipe(orNotFound(id))
    const setCertLevel = (id: number, cert_level: CertLevel) => repo.setColumn(id, { cert_level }).pipe(orNotFound(id))

    /** Fails with 404 `company` when the id is unknown (a referenced id in a body). */
    const ensureExists = (id: number) => Effect.asVoid(get(Scopes.all, id))

    return { create, get, update, list, setStatus, setCertLevel, ensureExists } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Companies, Companies.make)
  static readonly layer = Companies.layerWithoutDependencies.pipe(
    Layer.provide(CompaniesRepo.layer)
  )
}
