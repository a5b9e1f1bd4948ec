// WeChat groups (SPEC §4.4): each handler calls one service method.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { WorkGroups } from "../../services/WorkGroups.js"

export const WorkGroupsHandlers = HttpApiBuilder.group(OpenApiDef, "workGroups", (handlers) =>
  Effect.gen(function*() {
    const groups = yield* WorkGroups
    return handlers
      .handle("list", ({ query }) => Effect.flatMap(Caller, (caller) => groups.list(query, caller.masking)))
      .handle("get", ({ params }) => groups.get(params.id))
      .handle("create", ({ payload }) => groups.create(payload))
      .handle("update", ({ params, payload }) => groups.update(params.id, payload))
      .handle("setStatus", ({ params, query }) => groups.setStatus(params.id, query.status))
      .handle("remove", ({ params }) => groups.remove(params.id))
      .handle(
        "addMatchmaker",
        ({ params, payload }) => groups.addMember(params.id, "matchmaker", payload.matchmaker_id, payload.remark ?? null)
      )
      .handle(
        "addMatchmakersBatch",
        ({ params, payload }) => groups.addMembers(params.id, "matchmaker", payload.matchmaker_ids, payload.remark ?? null)
      )
      .handle("removeMatchmaker", ({ params }) => groups.removeMember(params.id, "matchmaker", params.matchmaker_id))
      .handle(
        "addWorkWechat",
        ({ params, payload }) => groups.addMember(params.id, "work_wechat", payload.work_wechat_id, payload.remark ?? null)
      )
      .handle(
        "addWorkWechatsBatch",
        ({ params, payload }) => groups.addMembers(params.id, "work_wechat", payload.work_wechat_ids, payload.remark ?? null)
      )
      .handle("removeWorkWechat", ({ params }) => groups.removeMember(params.id, "work_wechat", params.work_wechat_id))
      .handle("matchmakers", ({ params, query }) => groups.matchmakerMembers(params.id, query))
      .handle("workWechats", ({ params, query }) => groups.accountMembers(params.id, query))
      .handle("logs", ({ params, query }) => groups.logs(params.id, query))
  }))
