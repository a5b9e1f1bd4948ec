// Matches (SPEC §4.9): each handler calls one service method.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Matches } from "../../services/Matches.js"

export const MatchesHandlers = HttpApiBuilder.group(OpenApiDef, "matches", (handlers) =>
  Effect.gen(function*() {
    const matches = yield* Matches
    return handlers
      .handle("list", ({ query }) => matches.list(query))
      .handle("create", ({ payload }) => matches.create(payload))
      .handle("updateStatus", ({ params, payload }) => matches.updateStatus(params.id, payload.status))
  }))
