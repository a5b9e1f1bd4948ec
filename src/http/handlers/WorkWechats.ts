// Work WeChat accounts (SPEC §4.3): each handler calls one service method.
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"

import { OpenApiDef } from "../../../schema/Api.js"
import { WorkWechats } from "../../services/WorkWechats.js"

export const WorkWechatsHandlers = HttpApiBuilder.group(OpenApiDef, "workWechats", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* WorkWechats
    return handlers
      .handle("list", ({ urlParams }) => accounts.list(urlParams))
      .handle("get", ({ path }) => accounts.get(path.id))
      .handle("create", ({ payload }) => accounts.create(payload))
      .handle("update", ({ path, payload }) => accounts.update(path.id, payload))
      .handle("setStatus", ({ path, urlParams }) => accounts.setStatus(path.id, urlParams.status))
      .handle("remove", ({ path }) => accounts.remove(path.id))
      .handle("associate", ({ path, payload }) => accounts.associate(path.id, payload))
      .handle("batchAssociate", ({ path, payload }) => accounts.batchAssociate(path.id, payload))
      .handle("disassociate", ({ path, payload }) => accounts.disassociate(path.id, payload))
      .handle("transfer", ({ path, payload }) => accounts.transfer(path.id, payload))
      .handle("transferAdmin", ({ path, payload }) => accounts.transferAdmin(path.id, payload))
      .handle("associations", ({ path, urlParams }) => accounts.associations(path.id, urlParams))
      .handle("logs", ({ path, urlParams }) => accounts.logs(path.id, urlParams))
  }))
