// Matchmaker use cases (SPEC §4.1): create, read, update, list and the id sync list. Status and
// certification are the operator's (DECISIONS §5).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import {
  type CertLevel,
  MATCHMAKER_IDS_PAGE,
  MATCHMAKER_PAGE,
  type MatchmakerCreate,
  type MatchmakerIdsParams,
  type MatchmakerListParams,
  type MatchmakerUpdate
} from "../../schema/Matchmakers.js"
import { OutOfScope } from "../domain/errors.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { MatchmakersRepo } from "../repos/MatchmakersRepo.js"
import { method, pickSent, searchableFields, someOrNotFound, syncWindow } from "./common.js"
import { Companies } from "./Companies.js"

export class Matchmakers extends Context.Service<Matchmakers>()("Matchmakers/Service", {
  make: Effect.gen(function*() {
    const repo = yield* MatchmakersRepo
    const companies = yield* Companies
    const orNotFound = (id: number) => someOrNotFound("matchmaker", id)

    /** An independent matchmaker (company_id null) is outside every scope: a scoped client may not make one. */
    const refuseIndependent = (scope: CompanyScope, companyId: number | null | undefined) =>
      companyId === null && Scopes.isScoped(scope)
        ? Effect.fail(new OutOfScope({ message: "an independent matchmaker (company_id null) is outside this client's companies" }))
        : Effect.void

    // Each write records its event in its own statement (MatchmakersRepo: one round trip, no
    // transaction). A company_id sent is checked first: a read before the write, not in its
    // statement; a company is never deleted, so the check cannot go stale before the write.
    /**
     * A scoped client's matchmaker belongs to one of its companies (DECISIONS §14): a named
     * company_id outside them is 403; without one, its only company (400 when it has several).
     */
    const create = method("Matchmakers.create")(function*(scope: CompanyScope, sent: MatchmakerCreate) {
      yield* refuseIndependent(scope, sent.company_id)
      const company = Scopes.companyOfWrite(scope, sent.company_id ?? undefined)
      if (company._tag === "Refused") return yield* Effect.fail(company.error)
      const input = company.id === undefined || sent.company_id != null ? sent : { ...sent, company_id: company.id }
      if (input.company_id != null) yield* companies.ensureExists(input.company_id)
      return yield* repo.insert(input)
    })

    const get = method("Matchmakers.get")(function*(scope: CompanyScope, id: number) {
      return yield* repo.findById(scope, id).pipe(orNotFound(id))
    })

    /** Another company's matchmaker is unknown (404); a company_id outside the scope 403. */
    const update = method("Matchmakers.update")(function*(scope: CompanyScope, id: number, change: MatchmakerUpdate) {
      if (Scopes.isScoped(scope)) yield* repo.findById(scope, id).pipe(orNotFound(id))
      yield* refuseIndependent(scope, change.company_id)
      if (change.company_id != null) {
        const refused = Scopes.checkNamed(scope, change.company_id)
        if (refused !== undefined) return yield* Effect.fail(refused)
        yield* companies.ensureExists(change.company_id)
      }
      const m = yield* repo.update(id, change).pipe(orNotFound(id))
      return { id: m.id, company_id: m.company_id, name: m.name, ...pickSent(m, change), updated_at: m.updated_at }
    })

    /** `masking`: the caller's; its keyword matches only what it sees unmasked (DECISIONS §1). */
    const list = method("Matchmakers.list")(function*(scope: CompanyScope, params: MatchmakerListParams, masking: boolean) {
      const searchable = yield* searchableFields("matchmaker", masking, params)
      return yield* repo.list(scope, params, searchable, yield* syncWindow("matchmakers", params, MATCHMAKER_PAGE))
    })

    const ids = method("Matchmakers.ids")(function*(scope: CompanyScope, params: MatchmakerIdsParams) {
      return yield* repo.ids(scope, params, yield* syncWindow("matchmakers/ids", params, MATCHMAKER_IDS_PAGE))
    })

    const setStatus = (id: number, status: "active" | "disabled") => repo.setColumn(id, { status }).pipe(orNotFound(id))
    const setCertLevel = (id: number, cert_level: CertLevel) => repo.setColumn(id, { cert_level }).pipe(orNotFound(id))

    return { create, get, update, list, ids, setStatus, setCertLevel } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Matchmakers, Matchmakers.make)
  static readonly layer = Matchmakers.layerWithoutDependencies.pipe(
    Layer.provide([MatchmakersRepo.layer, Companies.layer])
  )
}
