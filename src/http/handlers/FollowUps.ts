// Follow-up tasks (SPEC §4.5): each handler calls one service method; the lock and the reports are
// the caller's (its app_key is `dispatched_to`).
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { FollowUps } from "../../services/FollowUps.js"

export const FollowUpsHandlers = HttpApiBuilder.group(OpenApiDef, "followUps", (handlers) =>
  Effect.gen(function*() {
    const followUps = yield* FollowUps
    return handlers
      .handle("list", ({ query }) => Effect.flatMap(Caller, (caller) => followUps.list(caller.scope, query)))
      .handle("get", ({ params }) => Effect.flatMap(Caller, (caller) => followUps.get(caller.scope, params.task_id)))
      .handle(
        "dispatch",
        ({ params }) => Effect.flatMap(Caller, (caller) => followUps.dispatch(caller.scope, params.task_id, caller.appKey))
      )
      .handle(
        "complete",
        ({ params, payload }) =>
          Effect.flatMap(Caller, (caller) => followUps.complete(caller.scope, params.task_id, caller.appKey, payload))
      )
      .handle(
        "fail",
        ({ params, payload }) => Effect.flatMap(Caller, (caller) => followUps.fail(caller.scope, params.task_id, caller.appKey, payload))
      )
      .handle(
        "skip",
        ({ params, payload }) => Effect.flatMap(Caller, (caller) => followUps.skip(caller.scope, params.task_id, caller.appKey, payload))
      )
  }))
