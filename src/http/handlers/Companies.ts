// Companies (SPEC §4.7): each handler calls one service method.
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"

import { OpenApiDef } from "../../../schema/Api.js"
import { Companies } from "../../services/Companies.js"

export const CompaniesHandlers = HttpApiBuilder.group(OpenApiDef, "companies", (handlers) =>
  Effect.gen(function*() {
    const companies = yield* Companies
    return handlers
      .handle("list", ({ urlParams }) => companies.list(urlParams))
      .handle("get", ({ path }) => companies.get(path.id))
      .handle("create", ({ payload }) => companies.create(payload))
      .handle("update", ({ path, payload }) => companies.update(path.id, payload))
  }))
