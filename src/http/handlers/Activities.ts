// Activities (SPEC §4.8): each handler calls one service method.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Activities } from "../../services/Activities.js"

export const ActivitiesHandlers = HttpApiBuilder.group(OpenApiDef, "activities", (handlers) =>
  Effect.gen(function*() {
    const activities = yield* Activities
    return handlers
      .handle("list", ({ query }) => activities.list(query))
      .handle("create", ({ payload }) => activities.create(payload))
      .handle("register", ({ params, payload }) => activities.register(params.id, payload))
  }))
