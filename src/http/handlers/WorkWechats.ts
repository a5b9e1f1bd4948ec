// Work WeChat accounts (SPEC §4.3): each handler calls one service method.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { WorkWechats } from "../../services/WorkWechats.js"

export const WorkWechatsHandlers = HttpApiBuilder.group(OpenApiDef, "workWechats", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* WorkWechats
    return handlers
      .handle("list", ({ query }) => Effect.flatMap(Caller, (caller) => accounts.list(query, caller.masking)))
      .handle("get", ({ params }) => accounts.get(params.id))
      .handle("create", ({ payload }) => accounts.create(payload))
      .handle("update", ({ params, payload }) => accounts.update(params.id, payload))
      .handle("setStatus", ({ params, query }) => accounts.setStatus(params.id, query.status))
      .handle("remove", ({ params }) => accounts.remove(params.id))
      .handle("associate", ({ params, payload }) => accounts.associate(params.id, payload))
      .handle("batchAssociate", ({ params, payload }) => accounts.batchAssociate(params.id, payload))
      .handle("disassociate", ({ params, payload }) => accounts.disassociate(params.id, payload))
      .handle("transfer", ({ params, payload }) => accounts.transfer(params.id, payload))
      .handle("transferAdmin", ({ params, payload }) => accounts.transferAdmin(params.id, payload))
      .handle("associations", ({ params, query }) => accounts.associations(params.id, query))
      .handle("logs", ({ params, query }) => accounts.logs(params.id, query))
  }))
