// Memberships (SPEC §4.10): each handler calls one service method.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { Memberships } from "../../services/Memberships.js"

export const MembershipsHandlers = HttpApiBuilder.group(OpenApiDef, "memberships", (handlers) =>
  Effect.gen(function*() {
    const memberships = yield* Memberships
    return handlers
      .handle("list", ({ query }) => Effect.flatMap(Caller, (caller) => memberships.list(caller.scope, query)))
      .handle("create", ({ payload }) => Effect.flatMap(Caller, (caller) => memberships.createOrRenew(caller.scope, payload)))
  }))
