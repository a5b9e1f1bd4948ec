// Matchmaker use cases (SPEC §4.1): create, read, update, list and the id sync list. Status and
// certification are the operator's (DECISIONS §5).
import * as Effect from "effect/Effect"

import type { CertLevel, MatchmakerCreate, MatchmakerIdsParams, MatchmakerListParams, MatchmakerUpdate } from "../../schema/Matchmakers.js"
import { MatchmakersRepo } from "../repos/MatchmakersRepo.js"
import { pickSent, someOrNotFound } from "./common.js"
import { Companies } from "./Companies.js"

export class Matchmakers extends Effect.Service<Matchmakers>()("Matchmakers/Service", {
  dependencies: [MatchmakersRepo.Default, Companies.Default],
  effect: Effect.gen(function*() {
    const repo = yield* MatchmakersRepo
    const companies = yield* Companies
    const orNotFound = (id: number) => someOrNotFound("matchmaker", id)

    const create = (input: MatchmakerCreate) =>
      Effect.gen(function*() {
        if (input.company_id != null) yield* companies.ensureExists(input.company_id)
        return yield* repo.insert(input)
      }).pipe(Effect.withSpan("Matchmakers.create"))

    const get = (id: number) => repo.findById(id).pipe(orNotFound(id), Effect.withSpan("Matchmakers.get"))

    const update = (id: number, change: MatchmakerUpdate) =>
      Effect.gen(function*() {
        if (change.company_id != null) yield* companies.ensureExists(change.company_id)
        const m = yield* repo.update(id, change).pipe(orNotFound(id))
        return { id: m.id, company_id: m.company_id, name: m.name, ...pickSent(m, change), updated_at: m.updated_at }
      }).pipe(Effect.withSpan("Matchmakers.update"))

    const list = (params: MatchmakerListParams) => repo.list(params).pipe(Effect.withSpan("Matchmakers.list"))

    const ids = (params: MatchmakerIdsParams) => repo.ids(params).pipe(Effect.withSpan("Matchmakers.ids"))

    const setStatus = (id: number, status: "active" | "disabled") => repo.setColumn(id, { status }).pipe(orNotFound(id))
    const setCertLevel = (id: number, cert_level: CertLevel) => repo.setColumn(id, { cert_level }).pipe(orNotFound(id))

    return { create, get, update, list, ids, setStatus, setCertLevel } as const
  })
}) {}
