// Guests and guest-card import (SPEC §4.2): each handler calls one service method.
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { CardImport } from "../../services/CardImport.js"
import { Guests } from "../../services/Guests.js"
import { readUpload } from "../multipart.js"

export const GuestsHandlers = HttpApiBuilder.group(OpenApiDef, "guests", (handlers) =>
  Effect.gen(function*() {
    const guests = yield* Guests
    const cards = yield* CardImport
    return handlers
      .handle("parseCard", ({ request }) => Effect.flatMap(readUpload(request), cards.parseCard))
      .handle("createFromCard", ({ request }) =>
        Effect.gen(function*() {
          const upload = yield* readUpload(request)
          const caller = yield* Caller
          return yield* cards.createFromCard(upload, caller.appKey)
        }))
      .handle("cardTask", ({ path }) => cards.getTask(path.task_id))
      .handle("list", ({ urlParams }) => guests.list(urlParams))
      .handle("get", ({ path }) => guests.get(path.id))
      .handle("create", ({ payload }) => guests.create(payload))
      .handle("update", ({ path, payload }) => guests.update(path.id, payload))
      .handle("batchCreate", ({ payload }) => guests.batchCreate(payload.guests))
      .handle("batchUpdate", ({ payload }) => guests.batchUpdate(payload.guests))
  }))
