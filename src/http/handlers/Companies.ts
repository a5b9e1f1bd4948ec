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
      .handle("list", ({ query }) => Effect.flatMap(Caller, (caller) => companies.list(query, caller.masking)))
      .handle("get", ({ params }) => companies.get(params.id))
      .handle("create", ({ payload }) => companies.create(payload))
      .handle("update", ({ params, payload }) => companies.update(params.id, payload))
  }))
