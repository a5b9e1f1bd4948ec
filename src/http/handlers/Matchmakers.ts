// Matchmakers (SPEC §4.1): each handler calls one service method.
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"

import { OpenApiDef } from "../../../schema/Api.js"
import { Matchmakers } from "../../services/Matchmakers.js"

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
