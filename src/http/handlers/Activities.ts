// Activities (SPEC §4.8): each handler calls one service method.
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"

import { OpenApiDef } from "../../../schema/Api.js"
import { Activities } from "../../services/Activities.js"

export const ActivitiesHandlers = HttpApiBuilder.group(OpenApiDef, "activities", (handlers) =>
  Effect.gen(function*() {
    const activities = yield* Activities
    return handlers
      .handle("list", ({ urlParams }) => activities.list(urlParams))
      .handle("create", ({ payload }) => activities.create(payload))
      .handle("register", ({ path, payload }) => activities.register(path.id, payload))
  }))
