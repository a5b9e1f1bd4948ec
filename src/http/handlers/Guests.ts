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
    // Made once, not per request (docs/contributor.md, "Generators are made once").
    const parseCard = Effect.fnUntraced(function*() {
      const upload = yield* readUpload
      const image = yield* Effect.flatMap(requireFile(upload, fileLimit), (file) => cards.checkImage(file.bytes))
      const form = yield* parseCardFields(upload)
      const caller = yield* Caller
      return yield* cards.parseCard(caller.scope, { image, matchmakerId: form.matchmaker_id })
    })
    const createFromCard = Effect.fnUntraced(function*() {
      const upload = yield* readUpload
      const image = yield* Effect.flatMap(requireFile(upload, fileLimit), (file) => cards.checkImage(file.bytes))
      const form = yield* createFromCardFields(upload)
      const caller = yield* Caller
      return yield* cards.createFromCard(
        caller.scope,
        { image, matchmakerId: form.matchmaker_id, companyId: form.company_id, overrides: form.overrides ?? {} },
        caller.appKey
      )
    })
    return handlers
      .handle("parseCard", parseCard)
      .handle("createFromCard", createFromCard)
      .handle("cardTask", ({ params }) => Effect.flatMap(Caller, (caller) => cards.getTask(caller.scope, params.task_id)))
      .handle("list", ({ query }) => Effect.flatMap(Caller, (caller) => guests.list(caller.scope, query, caller.masking)))
      .handle("get", ({ params }) => Effect.flatMap(Caller, (caller) => guests.get(caller.scope, params.id)))
      .handle("create", ({ payload }) => Effect.flatMap(Caller, (caller) => guests.create(caller.scope, payload)))
      .handle("update", ({ params, payload }) => Effect.flatMap(Caller, (caller) => guests.update(caller.scope, params.id, payload)))
      .handle("batchCreate", ({ payload }) => Effect.flatMap(Caller, (caller) => guests.batchCreate(caller.scope, payload.guests)))
      .handle("batchUpdate", ({ payload }) => Effect.flatMap(Caller, (caller) => guests.batchUpdate(caller.scope, payload.guests)))
  }))
