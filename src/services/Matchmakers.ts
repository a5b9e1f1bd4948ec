// Matchmaker use cases (SPEC §4.1): create, read, update, list and the id sync list. Status and
// certification are the operator's (DECISIONS §5).
import { Context, Effect, Layer } from "effect"
import type { CertLevel, MatchmakerCreate, MatchmakerIdsParams, MatchmakerListParams, MatchmakerUpdate } from "../../schema/Matchmakers.js"
import { MatchmakersRepo } from "../repos/MatchmakersRepo.js"
import { Companies } from "./Companies.js"
import { pickSent, someOrNotFound } from "./common.js"

export const makeMatchmakers = Effect.gen(function*() {
  const repo = yield* MatchmakersRepo
  const companies = yield* Companies
  const orNotFound = (id: number) => someOrNotFound("matchmaker", id)

  const create = (input: MatchmakerCreate) =>
    Effect.gen(function*() {
      if (input.company_id != null) yield* companies.ensureExists(input.company_id)
      return yield* Effect.orDie(repo.insert(input))
    }).pipe(Effect.withSpan("Matchmakers.create"))

  const get = (id: number) => Effect.orDie(repo.findById(id)).pipe(orNotFound(id), Effect.withSpan("Matchmakers.get"))

  const update = (id: number, change: MatchmakerUpdate) =>
    Effect.gen(function*() {
      if (change.company_id != null) yield* companies.ensureExists(change.company_id)
      const m = yield* Effect.orDie(repo.update(id, change)).pipe(orNotFound(id))
      return { id: m.id, company_id: m.company_id, name: m.name, ...pickSent(m, change), updated_at: m.updated_at }
    }).pipe(Effect.withSpan("Matchmakers.update"))

  const list = (params: MatchmakerListParams) =>
    Effect.orDie(repo.list(params)).pipe(Effect.withSpan("Matchmakers.list"))

  const ids = (params: MatchmakerIdsParams) =>
    Effect.orDie(repo.ids(params)).pipe(Effect.withSpan("Matchmakers.ids"))

  const setStatus = (id: number, status: "active" | "disabled") => Effect.orDie(repo.setColumn(id, { status })).pipe(orNotFound(id))
  const setCertLevel = (id: number, cert_level: CertLevel) => Effect.orDie(repo.setColumn(id, { cert_level })).pipe(orNotFound(id))

  return { create, get, update, list, ids, setStatus, setCertLevel } as const
})

export class Matchmakers extends Context.Tag("Matchmakers/Service")<Matchmakers, Effect.Effect.Success<typeof makeMatchmakers>>() {}
export const MatchmakersLive = Layer.effect(Matchmakers, makeMatchmakers)
