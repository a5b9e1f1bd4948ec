// Guests and guest-card import (SPEC §4.2): each handler calls one service method. A card upload's
// form is read and decoded here, in the order clients see its checks: the form, the file (its
// size), the image (its type), then the fields.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { AppConfig } from "../../Config.js"
import { CardImport } from "../../services/CardImport.js"
import { Guests } from "../../services/Guests.js"
import { createFromCardFields, parseCardFields, readUpload, requireFile } from "../multipart.js"

export const GuestsHandlers = HttpApiBuilder.group(OpenApiDef, "guests", (handlers) =>
  Effect.gen(function*() {
    const guests = yield* Guests
    const cards = yield* CardImport
    const fileLimit = (yield* AppConfig).cardFileLimitBytes
    return handlers
      .handle("parseCard", () =>
        Effect.gen(function*() {
          const upload = yield* readUpload
          const image = yield* Effect.flatMap(requireFile(upload, fileLimit), (file) => cards.checkImage(file.bytes))
          const form = yield* parseCardFields(upload)
          return yield* cards.parseCard({ image, matchmakerId: form.matchmaker_id })
        }))
      .handle("createFromCard", () =>
        Effect.gen(function*() {
          const upload = yield* readUpload
          const image = yield* Effect.flatMap(requireFile(upload, fileLimit), (file) => cards.checkImage(file.bytes))
          const form = yield* createFromCardFields(upload)
          const caller = yield* Caller
          return yield* cards.createFromCard(
            { image, matchmakerId: form.matchmaker_id, companyId: form.company_id, overrides: form.overrides ?? {} },
            caller.appKey
          )
        }))
      .handle("cardTask", ({ params }) => cards.getTask(params.task_id))
      .handle("list", ({ query }) => Effect.flatMap(Caller, (caller) => guests.list(query, caller.masking)))
      .handle("get", ({ params }) => guests.get(params.id))
      .handle("create", ({ payload }) => guests.create(payload))
      .handle("update", ({ params, payload }) => guests.update(params.id, payload))
      .handle("batchCreate", ({ payload }) => guests.batchCreate(payload.guests))
      .handle("batchUpdate", ({ payload }) => guests.batchUpdate(payload.guests))
  }))
