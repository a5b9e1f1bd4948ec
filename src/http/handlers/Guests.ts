// Guests and guest-card import (SPEC §4.2): each handler calls one service method. A card upload's
// form is read and decoded here, in the order clients see its checks: the form, the file, the
// image (size, type), then the fields.
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { CardImport } from "../../services/CardImport.js"
import { Guests } from "../../services/Guests.js"
import { CreateFromCardFields, decodeFields, ParseCardFields, readUpload, requireFile } from "../multipart.js"

const parseCardForm = decodeFields(ParseCardFields)
const createFromCardForm = decodeFields(CreateFromCardFields)

export const GuestsHandlers = HttpApiBuilder.group(OpenApiDef, "guests", (handlers) =>
  Effect.gen(function*() {
    const guests = yield* Guests
    const cards = yield* CardImport
    return handlers
      .handle("parseCard", ({ request }) =>
        Effect.gen(function*() {
          const upload = yield* readUpload(request)
          const image = yield* Effect.flatMap(requireFile(upload), (file) => cards.checkImage(file.bytes))
          const form = yield* parseCardForm(upload)
          return yield* cards.parseCard({ image, matchmakerId: form.matchmaker_id })
        }))
      .handle("createFromCard", ({ request }) =>
        Effect.gen(function*() {
          const upload = yield* readUpload(request)
          const image = yield* Effect.flatMap(requireFile(upload), (file) => cards.checkImage(file.bytes))
          const form = yield* createFromCardForm(upload)
          const caller = yield* Caller
          return yield* cards.createFromCard(
            { image, matchmakerId: form.matchmaker_id, companyId: form.company_id, overrides: form.overrides ?? {} },
            caller.appKey
          )
        }))
      .handle("cardTask", ({ path }) => cards.getTask(path.task_id))
      .handle("list", ({ urlParams }) => guests.list(urlParams))
      .handle("get", ({ path }) => guests.get(path.id))
      .handle("create", ({ payload }) => guests.create(payload))
      .handle("update", ({ path, payload }) => guests.update(path.id, payload))
      .handle("batchCreate", ({ payload }) => guests.batchCreate(payload.guests))
      .handle("batchUpdate", ({ payload }) => guests.batchUpdate(payload.guests))
  }))
