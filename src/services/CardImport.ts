// Guest-card import (SPEC §4.2 card endpoints, §3.2; DECISIONS §8): image checks (size, type by
// content, blacklist, duplicates), synchronous parsing, queued tasks, and the processing of one
// claimed task into a guest — all of it in one transaction at the end, never during parsing. The
// HTTP handlers decode the form; this service takes the image and the domain values.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

import { API_PREFIX } from "../../schema/Api.js"
import { type CardOverrides, type CreateFromCardResult, GuestCreate, type ParseCardResult } from "../../schema/Guests.js"
import { imageErrorOf } from "../card/CardParser.js"
import { detectImageType, md5Hex } from "../card/image.js"
import { CardParser, type ParseOutcome } from "../card/types.js"
import { cardGuestFields, cardSummary } from "../domain/card.js"
import { ImageBlacklisted, InvalidInput, NotFound, ParserUnavailable, UnsupportedImage } from "../domain/errors.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { CardTasksRepo, type ClaimedCardTask } from "../repos/CardTasksRepo.js"
import { CompaniesRepo } from "../repos/CompaniesRepo.js"
import { GuestsRepo } from "../repos/GuestsRepo.js"
import { MatchmakersRepo } from "../repos/MatchmakersRepo.js"
import { OutboxRepo } from "../repos/OutboxRepo.js"
import { Transaction } from "../repos/sqlHelpers.js"
import { method } from "./common.js"
import { Guests } from "./Guests.js"
import { ImageBlacklist } from "./ImageBlacklist.js"

/** An uploaded card image that passed `checkImage`: a JPEG or PNG (its size limit is the upload's, at the edge). */
export interface CardImage {
  readonly bytes: Uint8Array
  readonly imageHash: string
  readonly contentType: "image/png" | "image/jpeg"
}

/** What parse-card asks: the image, and the matchmaker whose imports are checked for a duplicate. */
export interface ParseCardInput {
  readonly image: CardImage
  readonly matchmakerId?: number | undefined
}

/** What create-from-card asks: the image, its matchmaker and company (default: the matchmaker's), overrides. */
export interface CreateFromCardInput {
  readonly image: CardImage
  readonly matchmakerId: number
  readonly companyId?: number | undefined
  readonly overrides: CardOverrides
}

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

export class CardImport extends Context.Service<CardImport>()("CardImport/Service", {
  make: Effect.gen(function*() {
    const parser = yield* CardParser
    const blacklist = yield* ImageBlacklist
    const guestsRepo = yield* GuestsRepo
    const guests = yield* Guests
    const tasks = yield* CardTasksRepo
    const matchmakers = yield* MatchmakersRepo
    const companies = yield* CompaniesRepo
    const outbox = yield* OutboxRepo
    const tx = yield* Transaction

    /** The file is a JPEG or PNG by content. */
    const checkImage = Effect.fnUntraced(function*(bytes: Uint8Array) {
      const type = yield* Effect.promise(() => detectImageType(bytes))
      if (type === null) return yield* new UnsupportedImage({ message: "the file is not a JPEG or PNG image" })
      const image: CardImage = { bytes, imageHash: md5Hex(bytes), contentType: type === "png" ? "image/png" : "image/jpeg" }
      return image
    })

    const refuseBlacklisted = (imageHash: string) =>
      Effect.flatMap(
        blacklist.blocks(imageHash),
        (blocked) => blocked ? Effect.fail(new ImageBlacklisted({ message: "this image is blacklisted" })) : Effect.void
      )

    const parse = (bytes: Uint8Array) =>
      parser.parse(bytes).pipe(
        Effect.catchTags({
          ParserUnavailable: (e) => Effect.fail(new ParserUnavailable({ message: e.message })),
          // An image the parser refuses is the client's; any other parser failure is ours.
          CardParseError: (e) =>
            imageErrorOf(e) !== null
              ? Effect.fail(new UnsupportedImage({ message: `the image could not be read: ${e.message}` }))
              : Effect.fail(new ParserUnavailable({ message: `card parsing failed: ${e.message}` }))
        })
      )

    /** The matchmaker, if it exists in the scope (an independent one is in none): else 404 as if unknown. */
    const matchmakerInScope = (scope: CompanyScope, matchmakerId: number) =>
      Effect.flatMap(
        matchmakers.findById(scope, matchmakerId),
        (found) => Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(NotFound.of("matchmaker", matchmakerId))
      )

    /** A scoped client's duplicate check looks only at its own companies' matchmakers (their guests are its). */
    const parseCard = method("CardImport.parseCard")(function*(scope: CompanyScope, { image, matchmakerId }: ParseCardInput) {
      if (matchmakerId !== undefined) yield* matchmakerInScope(scope, matchmakerId)
      yield* refuseBlacklisted(image.imageHash)
      const existing = matchmakerId === undefined ? Option.none() : yield* guestsRepo.findByImage(matchmakerId, image.imageHash)
      const outcome = yield* parse(image.bytes)
      const result: ParseCardResult = {
        duplicate: Option.isSome(existing),
        image_hash: image.imageHash,
        method: outcome.method,
        parsed: {
          ...outcome.parsed,
          requirementTags: outcome.parsed.requirementTags === null ? null : { ...outcome.parsed.requirementTags }
        },
        confidence: outcome.confidence,
        ...(Option.isSome(existing) ? { existing_guest: existing.value } : {})
      }
      return result
    })

    /**
     * A scoped client (DECISIONS §14) names a matchmaker of its companies (else 404) and a
     * company_id of its scope (else 403); without one, the guest goes to the matchmaker's company.
     */
    const createFromCard = method("CardImport.createFromCard")(function*(
      scope: CompanyScope,
      { companyId: sentCompanyId, image, matchmakerId, overrides }: CreateFromCardInput,
      clientAppKey: string | null
    ) {
      const matchmaker = yield* matchmakerInScope(scope, matchmakerId)
      const companyId = sentCompanyId ?? matchmaker.company_id
      if (companyId === null) {
        return yield* InvalidInput.of([{ path: "company_id", message: "the matchmaker has no company: send company_id" }])
      }
      const refused = Scopes.checkNamed(scope, companyId)
      if (refused !== undefined) return yield* refused
      if (Option.isNone(yield* companies.findById(Scopes.all, companyId))) return yield* NotFound.of("company", companyId)
      yield* refuseBlacklisted(image.imageHash)
      const existing = yield* guestsRepo.findByImage(matchmakerId, image.imageHash)
      if (Option.isSome(existing)) {
        const result: CreateFromCardResult = {
          duplicate: true,
          existing_guest: existing.value,
          message: `a guest was already created from this image: ${existing.value.id}`
        }
        return result
      }
      const task = yield* tasks.enqueue({
        matchmaker_id: matchmakerId,
        company_id: companyId,
        image_hash: image.imageHash,
        image: image.bytes,
        content_type: image.contentType,
        overrides,
        client_app_key: clientAppKey
      })
      const result: CreateFromCardResult = {
        task_id: task.task_id,
        status: task.status,
        async: true,
        message: task.created
          ? `accepted; poll GET ${API_PREFIX}/guests/card-task/{task_id}`
          : `this image is already being processed; poll GET ${API_PREFIX}/guests/card-task/{task_id}`
      }
      return result
    })

    /** A task of the scope's companies (of its guest-to-be); any other is unknown. */
    const getTask = Effect.fnUntraced(function*(scope: CompanyScope, taskId: string) {
      const task = yield* tasks.find(scope, taskId)
      if (Option.isNone(task)) return yield* NotFound.of("card_task", taskId)
      return task.value
    })

    /** The guest a parsed card gives: parsed fields, overrides over them, the form's ids. */
    const guestInput = (task: ClaimedCardTask, outcome: ParseOutcome): Result.Result<GuestCreate, string> => {
      const overrides = task.overrides
      const parsedFields = cardGuestFields(outcome.parsed)
      let candidate: Record<string, unknown> = {
        source: "card",
        ...parsedFields,
        ...overrides,
        company_id: task.company_id,
        matchmaker_id: task.matchmaker_id
      }
      if (typeof candidate.name !== "string" || candidate.name === "" || (candidate.gender !== "male" && candidate.gender !== "female")) {
        return Result.fail("name or gender could not be recognised on the card")
      }
      // A value misread by OCR (an age of 8, a height of 17) is dropped rather than failing the card.
      for (let attempt = 0; attempt < 3; attempt++) {
        const decoded = Schema.decodeUnknownResult(GuestCreate)(candidate)
        if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
        const bad = new Set(formatIssues(decoded.failure.issue).issues.map((i) => String(i.path?.[0] ?? "")))
        const fromOverrides = [...bad].filter((k) => k in overrides || k === "name" || k === "gender")
        if (fromOverrides.length > 0) return Result.fail(`invalid guest fields: ${[...bad].join(", ")}`)
        candidate = Object.fromEntries(Object.entries(candidate).filter(([k]) => !bad.has(k)))
      }
      return Result.fail("the card's fields could not be turned into a guest")
    }

    /**
     * The guest of a parsed task, guest.card_created and the task done, in one transaction — only
     * while this worker holds the task ("lost" otherwise).
     */
    const createGuest = Effect.fnUntraced(function*(
      task: ClaimedCardTask,
      worker: string,
      input: GuestCreate,
      outcome: ParseOutcome
    ) {
      if (!(yield* tasks.lockHeld(task.id, worker))) return "lost" as const
      const existing = yield* guestsRepo.findByImage(task.matchmaker_id, task.image_hash)
      if (Option.isSome(existing)) {
        yield* tasks.finish(task.id, { status: "failed", error: `a guest was already created from this image: ${existing.value.id}` })
        return "failed" as const
      }
      const guest = yield* guests.insertNew(input, { image_hash: task.image_hash })
      const result = {
        method: outcome.method,
        summary: cardSummary(input),
        completeness: guest.completeness,
        saved: true,
        guest_id: guest.id
      }
      yield* outbox.record("guest.card_created", "open:guest:read", {
        task_id: task.task_id,
        guest_id: guest.id,
        name: guest.name,
        matchmaker_id: task.matchmaker_id,
        completeness: guest.completeness
      })
      yield* tasks.finish(task.id, { status: "done", result, guest_id: guest.id })
      return "done" as const
    })

    /**
     * Finishes one claimed task: parse (no transaction open), then, in one transaction, create the
     * guest, record guest.card_created and mark the task done — only while this worker holds it.
     */
    const processTask = Effect.fn("CardImport.processTask")(function*(task: ClaimedCardTask, worker: string) {
      const parsed = yield* Effect.result(parser.parse(task.image))
      if (Result.isFailure(parsed)) {
        yield* finishIfHeld(task, worker, { status: "failed", error: parsed.failure.message })
        return "failed" as const
      }
      const input = guestInput(task, parsed.success)
      if (Result.isFailure(input)) {
        yield* finishIfHeld(task, worker, { status: "failed", error: input.failure })
        return "failed" as const
      }
      return yield* tx.run(createGuest(task, worker, input.success, parsed.success))
    }, (effect, task) => Effect.annotateLogs(effect, { task_id: task.task_id }))

    const finishIfHeld = Effect.fnUntraced(function*(
      task: ClaimedCardTask,
      worker: string,
      outcome: { status: "failed"; error: string }
    ) {
      if (yield* tasks.lockHeld(task.id, worker)) yield* tasks.finish(task.id, outcome)
    }, (effect) => tx.run(effect))

    return { checkImage, parseCard, createFromCard, getTask, processTask, finishIfHeld } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(CardImport, CardImport.make)
  static readonly layer = CardImport.layerWithoutDependencies.pipe(
    Layer.provide([
      CardTasksRepo.layer,
      CompaniesRepo.layer,
      GuestsRepo.layer,
      MatchmakersRepo.layer,
      OutboxRepo.layer,
      Guests.layer,
      ImageBlacklist.layer,
      Transaction.layer
    ])
  )
}
