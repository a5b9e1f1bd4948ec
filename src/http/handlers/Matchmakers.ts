// Matchmakers (SPEC §4.1): each handler calls one service method.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { Matchmakers } from "../../services/Matchmakers.js"

export const MatchmakersHandlers = HttpApiBuilder.group(OpenApiDef, "matchmakers", (handlers) =>
  Effect.gen(function*() {
    const matchmakers = yield* Matchmakers
    return handlers
      .handle("list", ({ query }) => Effect.flatMap(Caller, (caller) => matchmakers.list(query, caller.masking)))
      .handle("ids", ({ query }) => matchmakers.ids(query))
      .handle("get", ({ params }) => matchmakers.get(params.id))
      .handle("create", ({ payload }) => matchmakers.create(payload))
      .handle("update", ({ params, payload }) => matchmakers.update(params.id, payload))
  }))
