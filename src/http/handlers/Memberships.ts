// Memberships (SPEC §4.10): each handler calls one service method.
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"

import { OpenApiDef } from "../../../schema/Api.js"
import { Memberships } from "../../services/Memberships.js"

export const MembershipsHandlers = HttpApiBuilder.group(OpenApiDef, "memberships", (handlers) =>
  Effect.gen(function*() {
    const memberships = yield* Memberships
    return handlers
      .handle("list", ({ urlParams }) => memberships.list(urlParams))
      .handle("create", ({ payload }) => memberships.createOrRenew(payload))
  }))
