// Matches (SPEC §4.9): each handler calls one service method.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { Matches } from "../../services/Matches.js"

export const MatchesHandlers = HttpApiBuilder.group(OpenApiDef, "matches", (handlers) =>
  Effect.gen(function*() {
    const matches = yield* Matches
    return handlers
      .handle("list", ({ query }) => Effect.flatMap(Caller, (caller) => matches.list(caller.scope, query)))
      .handle("create", ({ payload }) => Effect.flatMap(Caller, (caller) => matches.create(caller.scope, payload)))
      .handle(
        "updateStatus",
        ({ params, payload }) => Effect.flatMap(Caller, (caller) => matches.updateStatus(caller.scope, params.id, payload.status))
      )
  }))
