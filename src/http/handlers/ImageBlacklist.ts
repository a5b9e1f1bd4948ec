// Image blacklist (SPEC §4.6): each handler calls one service method.
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"

import { OpenApiDef } from "../../../schema/Api.js"
import { ImageBlacklist } from "../../services/ImageBlacklist.js"

export const ImageBlacklistHandlers = HttpApiBuilder.group(OpenApiDef, "imageBlacklist", (handlers) =>
  Effect.gen(function*() {
    const blacklist = yield* ImageBlacklist
    return handlers
      .handle("list", ({ urlParams }) => blacklist.list(urlParams))
      .handle("add", ({ payload }) => blacklist.add(payload.items))
      .handle("check", ({ payload }) => blacklist.check(payload.md5_list))
      .handle("remove", ({ path }) => blacklist.remove(path.record_id))
  }))
