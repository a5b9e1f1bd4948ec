// Matches (SPEC §4.9): each handler calls one service method.
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"

import { OpenApiDef } from "../../../schema/Api.js"
import { Matches } from "../../services/Matches.js"

export const MatchesHandlers = HttpApiBuilder.group(OpenApiDef, "matches", (handlers) =>
  Effect.gen(function*() {
    const matches = yield* Matches
    return handlers
      .handle("list", ({ urlParams }) => matches.list(urlParams))
      .handle("create", ({ payload }) => matches.create(payload))
      .handle("updateStatus", ({ path, payload }) => matches.updateStatus(path.id, payload.status))
  }))
