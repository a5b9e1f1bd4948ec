// Thin handlers: the contract has decoded the input; each handler calls one service method.
import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { OpenApiDef } from "../../schema/Api.js"
import { AppConfig } from "../Config.js"
import { formatTimestamp } from "../domain/time.js"
import { Companies } from "../services/Companies.js"
import { Guests } from "../services/Guests.js"
import { Matchmakers } from "../services/Matchmakers.js"

export const SystemHandlers = HttpApiBuilder.group(OpenApiDef, "system", (handlers) =>
  Effect.gen(function*() {
    const { timeZone } = yield* AppConfig
    return handlers.handle("time", () =>
      Effect.map(Clock.currentTimeMillis, (ms) => ({
        timestamp: Math.floor(ms / 1000),
        time: formatTimestamp(new Date(ms), timeZone)
      })))
  }))

export const MatchmakersHandlers = HttpApiBuilder.group(OpenApiDef, "matchmakers", (handlers) =>
  Effect.gen(function*() {
    const matchmakers = yield* Matchmakers
    return handlers
      .handle("list", ({ urlParams }) => matchmakers.list(urlParams))
      .handle("ids", ({ urlParams }) => matchmakers.ids(urlParams))
      .handle("get", ({ path }) => matchmakers.get(path.id))
      .handle("create", ({ payload }) => matchmakers.create(payload))
      .handle("update", ({ path, payload }) => matchmakers.update(path.id, payload))
  }))

export const CompaniesHandlers = HttpApiBuilder.group(OpenApiDef, "companies", (handlers) =>
  Effect.gen(function*() {
    const companies = yield* Companies
    return handlers
      .handle("list", ({ urlParams }) => companies.list(urlParams))
      .handle("get", ({ path }) => companies.get(path.id))
      .handle("create", ({ payload }) => companies.create(payload))
      .handle("update", ({ path, payload }) => companies.update(path.id, payload))
  }))

export const GuestsHandlers = HttpApiBuilder.group(OpenApiDef, "guests", (handlers) =>
  Effect.gen(function*() {
    const guests = yield* Guests
    return handlers
      .handle("list", ({ urlParams }) => guests.list(urlParams))
      .handle("get", ({ path }) => guests.get(path.id))
      .handle("create", ({ payload }) => guests.create(payload))
      .handle("update", ({ path, payload }) => guests.update(path.id, payload))
      .handle("batchCreate", ({ payload }) => guests.batchCreate(payload.guests))
      .handle("batchUpdate", ({ payload }) => guests.batchUpdate(payload.guests))
  }))
