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
      .handle("list", ({ query }) => Effect.flatMap(Caller, (caller) => matchmakers.list(caller.scope, query, caller.masking)))
      .handle("ids", ({ query }) => Effect.flatMap(Caller, (caller) => matchmakers.ids(caller.scope, query)))
      .handle("get", ({ params }) => Effect.flatMap(Caller, (caller) => matchmakers.get(caller.scope, params.id)))
      .handle("create", ({ payload }) => Effect.flatMap(Caller, (caller) => matchmakers.create(caller.scope, payload)))
      .handle("update", ({ params, payload }) => Effect.flatMap(Caller, (caller) => matchmakers.update(caller.scope, params.id, payload)))
  }))
