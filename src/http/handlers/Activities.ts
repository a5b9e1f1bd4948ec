// Activities (SPEC §4.8): each handler calls one service method.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { Activities } from "../../services/Activities.js"

export const ActivitiesHandlers = HttpApiBuilder.group(OpenApiDef, "activities", (handlers) =>
  Effect.gen(function*() {
    const activities = yield* Activities
    return handlers
      .handle("list", ({ query }) => Effect.flatMap(Caller, (caller) => activities.list(caller.scope, query)))
      .handle("create", ({ payload }) => Effect.flatMap(Caller, (caller) => activities.create(caller.scope, payload)))
      .handle(
        "register",
        ({ params, payload }) => Effect.flatMap(Caller, (caller) => activities.register(caller.scope, params.id, payload))
      )
  }))
