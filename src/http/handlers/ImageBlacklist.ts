// Image blacklist (SPEC §4.6): each handler calls one service method.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { ImageBlacklist } from "../../services/ImageBlacklist.js"

export const ImageBlacklistHandlers = HttpApiBuilder.group(OpenApiDef, "imageBlacklist", (handlers) =>
  Effect.gen(function*() {
    const blacklist = yield* ImageBlacklist
    return handlers
      .handle("list", ({ query }) => blacklist.list(query))
      .handle("add", ({ payload }) => blacklist.add(payload.items))
      .handle("check", ({ payload }) => blacklist.check(payload.md5_list))
      .handle("remove", ({ params }) => blacklist.remove(params.record_id))
  }))
