// WeChat groups (SPEC §4.4): each handler calls one service method.
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"

import { OpenApiDef } from "../../../schema/Api.js"
import { WorkGroups } from "../../services/WorkGroups.js"

export const WorkGroupsHandlers = HttpApiBuilder.group(OpenApiDef, "workGroups", (handlers) =>
  Effect.gen(function*() {
    const groups = yield* WorkGroups
    return handlers
      .handle("list", ({ urlParams }) => groups.list(urlParams))
      .handle("get", ({ path }) => groups.get(path.id))
      .handle("create", ({ payload }) => groups.create(payload))
      .handle("update", ({ path, payload }) => groups.update(path.id, payload))
      .handle("setStatus", ({ path, urlParams }) => groups.setStatus(path.id, urlParams.status))
      .handle("remove", ({ path }) => groups.remove(path.id))
      .handle(
        "addMatchmaker",
        ({ path, payload }) => groups.addMember(path.id, "matchmaker", payload.matchmaker_id, payload.remark ?? null)
      )
      .handle(
        "addMatchmakersBatch",
        ({ path, payload }) => groups.addMembers(path.id, "matchmaker", payload.matchmaker_ids, payload.remark ?? null)
      )
      .handle("removeMatchmaker", ({ path }) => groups.removeMember(path.id, "matchmaker", path.matchmaker_id))
      .handle(
        "addWorkWechat",
        ({ path, payload }) => groups.addMember(path.id, "work_wechat", payload.work_wechat_id, payload.remark ?? null)
      )
      .handle(
        "addWorkWechatsBatch",
        ({ path, payload }) => groups.addMembers(path.id, "work_wechat", payload.work_wechat_ids, payload.remark ?? null)
      )
      .handle("removeWorkWechat", ({ path }) => groups.removeMember(path.id, "work_wechat", path.work_wechat_id))
      .handle("matchmakers", ({ path, urlParams }) => groups.matchmakerMembers(path.id, urlParams))
      .handle("workWechats", ({ path, urlParams }) => groups.accountMembers(path.id, urlParams))
      .handle("logs", ({ path, urlParams }) => groups.logs(path.id, urlParams))
  }))
