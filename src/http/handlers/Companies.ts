// Companies (SPEC §4.7): each handler calls one service method.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { Companies } from "../../services/Companies.js"

export const CompaniesHandlers = HttpApiBuilder.group(OpenApiDef, "companies", (handlers) =>
  Effect.gen(function*() {
    const companies = yield* Companies
    return handlers
      .handle("list", ({ query }) => Effect.flatMap(Caller, (caller) => companies.list(caller.scope, query, caller.masking)))
      .handle("get", ({ params }) => Effect.flatMap(Caller, (caller) => companies.get(caller.scope, params.id)))
      .handle("create", ({ payload }) => companies.create(payload))
      .handle("update", ({ params, payload }) => Effect.flatMap(Caller, (caller) => companies.update(caller.scope, params.id, payload)))
  }))
