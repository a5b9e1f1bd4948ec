// Follow-up tasks (SPEC §4.5): each handler calls one service method; the lock and the reports are
// the caller's (its app_key is `dispatched_to`).
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { FollowUps } from "../../services/FollowUps.js"

export const FollowUpsHandlers = HttpApiBuilder.group(OpenApiDef, "followUps", (handlers) =>
  Effect.gen(function*() {
    const followUps = yield* FollowUps
    return handlers
      .handle("list", ({ urlParams }) => followUps.list(urlParams))
      .handle("get", ({ path }) => followUps.get(path.task_id))
      .handle("dispatch", ({ path }) => Effect.flatMap(Caller, (caller) => followUps.dispatch(path.task_id, caller.appKey)))
      .handle(
        "complete",
        ({ path, payload }) => Effect.flatMap(Caller, (caller) => followUps.complete(path.task_id, caller.appKey, payload))
      )
      .handle("fail", ({ path, payload }) => Effect.flatMap(Caller, (caller) => followUps.fail(path.task_id, caller.appKey, payload)))
      .handle("skip", ({ path, payload }) => Effect.flatMap(Caller, (caller) => followUps.skip(path.task_id, caller.appKey, payload)))
  }))
