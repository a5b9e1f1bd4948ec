// Memberships (SPEC §4.10): each handler calls one service method.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Memberships } from "../../services/Memberships.js"

export const MembershipsHandlers = HttpApiBuilder.group(OpenApiDef, "memberships", (handlers) =>
  Effect.gen(function*() {
    const memberships = yield* Memberships
    return handlers
      .handle("list", ({ query }) => memberships.list(query))
      .handle("create", ({ payload }) => memberships.createOrRenew(payload))
  }))
