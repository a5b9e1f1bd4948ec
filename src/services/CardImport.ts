// Guest-card import (SPEC §4.2 card endpoints, §3.2; DECISIONS §8): upload checks (size, type by
// content, blacklist, duplicates), synchronous parsing, queued tasks, and the processing of one
// claimed task into a guest — all of it in one transaction at the end, never during parsing.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import { imageErrorOf } from "../card/CardParser.js"
import { detectImageType, md5Hex } from "../card/image.js"
import { CardParser, type ParseOutcome } from "../card/types.js"
import { BadRequest, type Issue, NotFound, PayloadTooLarge, ServiceUnavailable } from "../../schema/Errors.js"
import { type CreateFromCardResult, GuestCreate, guestWritableFields, Gender, type ParseCardResult } from "../../schema/Guests.js"
import { Text } from "../../schema/Common.js"
import { AppConfig } from "../Config.js"
import { cardGuestFields, cardSummary, normalizeOverrides } from "../domain/card.js"
import { mergeIssues } from "../domain/issues.js"
import { clip, jsonTextIssues } from "../domain/text.js"
import type { Upload } from "../http/multipart.js"
import { CardTasksRepo, type ClaimedCardTask } from "../repos/CardTasksRepo.js"
import { CompaniesRepo } from "../repos/CompaniesRepo.js"
import { GuestsRepo } from "../repos/GuestsRepo.js"
import { MatchmakersRepo } from "../repos/MatchmakersRepo.js"
import { OutboxRepo } from "../repos/OutboxRepo.js"
import { Guests } from "./Guests.js"
import { ImageBlacklist } from "./ImageBlacklist.js"

/** Guest fields an upload may override; the matchmaker and company come from the form. */
const { matchmaker_id: _m, ...overridableFields } = guestWritableFields
const Overrides = Schema.Struct({
  name: Schema.optionalWith(Text(20, 1), { exact: true }),
  gender: Schema.optionalWith(Gender, { exact: true }),
  ...overridableFields
}).annotations({ parseOptions: { errors: "all", onExcessProperty: "ignore" } })

const renderPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((out, seg) => (typeof seg === "number" ? `${out}[${seg}]` : out === "" ? String(seg) : `${out}.${String(seg)}`), "")

const issuesOf = (error: ParseResult.ParseError, prefix = ""): ReadonlyArray<Issue> =>
  mergeIssues(ParseResult.ArrayFormatter.formatErrorSync(error).map((i) => ({
    path: prefix + (renderPath(i.path) || ""),
    message: clip(i.message)
  })))

const intField = (fields: Readonly<Record<string, string>>, key: string, required: boolean): Either.Either<number | undefined, Issue> => {
  const raw = fields[key]
  if (raw === undefined || raw === "") return required ? Either.left({ path: key, message: "is required" }) : Either.right(undefined)
  return /^\d{1,15}$/.test(raw) && Number(raw) > 0 ? Either.right(Number(raw)) : Either.left({ path: key, message: "must be an integer >= 1" })
}

export const makeCardImport = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const parser = yield* CardParser
  const blacklist = yield* ImageBlacklist
  const guestsRepo = yield* GuestsRepo
  const guests = yield* Guests
  const tasks = yield* CardTasksRepo
  const matchmakers = yield* MatchmakersRepo
  const companies = yield* CompaniesRepo
  const outbox = yield* OutboxRepo
  const config = yield* AppConfig

  /** The file is present, at most 10 MiB, and a JPEG or PNG by content. */
  const checkFile = (upload: Upload) =>
    Effect.gen(function*() {
      const file = upload.file
      if (file === undefined) return yield* BadRequest.invalid([{ path: "file", message: "a JPEG or PNG file is required" }])
      if (file.bytes.length > config.cardFileLimitBytes) {
        return yield* new PayloadTooLarge({
          error: "payload_too_large",
          message: `card images are at most ${config.cardFileLimitBytes} bytes`,
          limit: config.cardFileLimitBytes
        })
      }
      const type = yield* Effect.promise(() => detectImageType(file.bytes))
      if (type === null) return yield* new BadRequest({ error: "unsupported_image", message: "the file is not a JPEG or PNG image" })
      return { bytes: file.bytes, imageHash: md5Hex(file.bytes), contentType: type === "png" ? "image/png" : "image/jpeg" }
    })

  const refuseBlacklisted = (imageHash: string) =>
    Effect.flatMap(blacklist.blocks(imageHash), (blocked) =>
      blocked ? Effect.fail(new BadRequest({ error: "image_blacklisted", message: "this image is blacklisted" })) : Effect.void)

  const parse = (bytes: Uint8Array) =>
    parser.parse(bytes).pipe(
      Effect.catchTags({
        ParserUnavailable: (e) => Effect.fail(new ServiceUnavailable({ error: "parser_unavailable", message: e.message })),
        // An image the parser refuses is the client's; any other parser failure is ours.
        CardParseError: (e) =>
          imageErrorOf(e) !== null
            ? Effect.fail(new BadRequest({ error: "unsupported_image", message: `the image could not be read: ${e.message}` }))
            : Effect.fail(new ServiceUnavailable({ error: "parser_unavailable", message: `card parsing failed: ${e.message}` }))
      })
    )

  const parseCard = (upload: Upload) =>
    Effect.gen(function*() {
      const file = yield* checkFile(upload)
      const mm = intField(upload.fields, "matchmaker_id", false)
      if (Either.isLeft(mm)) return yield* BadRequest.invalid([mm.left])
      if (mm.right !== undefined && Option.isNone(yield* Effect.orDie(matchmakers.findById(mm.right)))) {
        return yield* NotFound.of("matchmaker", mm.right)
      }
      yield* refuseBlacklisted(file.imageHash)
      const existing = mm.right === undefined ? Option.none() : yield* Effect.orDie(guestsRepo.findByImage(mm.right, file.imageHash))
      const outcome = yield* parse(file.bytes)
      const result: ParseCardResult = {
        duplicate: Option.isSome(existing),
        image_hash: file.imageHash,
        method: outcome.method,
        parsed: { ...outcome.parsed, requirementTags: outcome.parsed.requirementTags === null ? null : { ...outcome.parsed.requirementTags } },
        confidence: outcome.confidence,
        ...(Option.isSome(existing) ? { existing_guest: existing.value } : {})
      }
      return result
    }).pipe(Effect.withSpan("CardImport.parseCard"))

  const createFromCard = (upload: Upload, clientAppKey: string | null) =>
    Effect.gen(function*() {
      const file = yield* checkFile(upload)
      const issues: Array<Issue> = []
      const mm = intField(upload.fields, "matchmaker_id", true)
      const co = intField(upload.fields, "company_id", false)
      if (Either.isLeft(mm)) issues.push(mm.left)
      if (Either.isLeft(co)) issues.push(co.left)
      let overrides: Record<string, unknown> = {}
      const rawOverrides = upload.fields.overrides
      if (rawOverrides !== undefined && rawOverrides.trim() !== "") {
        let parsed: unknown
        try {
          parsed = JSON.parse(rawOverrides)
        } catch {
          parsed = undefined
          issues.push({ path: "overrides", message: "must be a JSON object (malformed JSON)" })
        }
        if (parsed !== undefined) {
          const textIssues = jsonTextIssues(parsed, { prefix: "overrides" })
          if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
            issues.push({ path: "overrides", message: "must be a JSON object" })
          } else if (textIssues.length > 0) {
            issues.push(...textIssues)
          } else {
            const normalized = normalizeOverrides(parsed as Record<string, unknown>)
            const decoded = Schema.decodeUnknownEither(Overrides)(normalized)
            if (Either.isLeft(decoded)) issues.push(...issuesOf(decoded.left, "overrides."))
            else overrides = { ...decoded.right }
          }
        }
      }
      if (issues.length > 0 || Either.isLeft(mm) || Either.isLeft(co)) return yield* BadRequest.invalid(issues)
      const matchmakerId = mm.right!
      const matchmaker = yield* Effect.orDie(matchmakers.findById(matchmakerId))
      if (Option.isNone(matchmaker)) return yield* NotFound.of("matchmaker", matchmakerId)
      const companyId = co.right ?? matchmaker.value.company_id
      if (companyId === null) {
        return yield* BadRequest.invalid([{ path: "company_id", message: "the matchmaker has no company: send company_id" }])
      }
      if (Option.isNone(yield* Effect.orDie(companies.findById(companyId)))) return yield* NotFound.of("company", companyId)
      yield* refuseBlacklisted(file.imageHash)
      const existing = yield* Effect.orDie(guestsRepo.findByImage(matchmakerId, file.imageHash))
      if (Option.isSome(existing)) {
        const result: CreateFromCardResult = {
          duplicate: true,
          existing_guest: existing.value,
          message: `a guest was already created from this image: ${existing.value.id}`
        }
        return result
      }
      const task = yield* Effect.orDie(tasks.enqueue({
        matchmaker_id: matchmakerId,
        company_id: companyId,
        image_hash: file.imageHash,
        image: file.bytes,
        content_type: file.contentType,
        overrides,
        client_app_key: clientAppKey
      }))
      const result: CreateFromCardResult = {
        task_id: task.task_id,
        status: task.status,
        async: true,
        message: task.created ? "accepted; poll GET /guests/card-task/{task_id}" : "this image is already being processed; poll its task"
      }
      return result
    }).pipe(Effect.withSpan("CardImport.createFromCard"))

  const getTask = (taskId: string) =>
    Effect.flatMap(Effect.orDie(tasks.find(taskId)), Option.match({
      onNone: () => Effect.fail(NotFound.of("card_task", taskId)),
      onSome: Effect.succeed
    }))

  /** The guest a parsed card gives: parsed fields, overrides over them, the form's ids. */
  const guestInput = (task: ClaimedCardTask, outcome: ParseOutcome): Either.Either<GuestCreate, string> => {
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
      return Either.left("name or gender could not be recognised on the card")
    }
    // A value misread by OCR (an age of 8, a height of 17) is dropped rather than failing the card.
    for (let attempt = 0; attempt < 3; attempt++) {
      const decoded = Schema.decodeUnknownEither(GuestCreate)(candidate)
      if (Either.isRight(decoded)) return Either.right(decoded.right)
      const bad = new Set(ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((i) => String(i.path[0] ?? "")))
      const fromOverrides = [...bad].filter((k) => k in overrides || k === "name" || k === "gender")
      if (fromOverrides.length > 0) return Either.left(`invalid guest fields: ${[...bad].join(", ")}`)
      candidate = Object.fromEntries(Object.entries(candidate).filter(([k]) => !bad.has(k)))
    }
    return Either.left("the card's fields could not be turned into a guest")
  }

  /**
   * Finishes one claimed task: parse (no transaction open), then, in one transaction, create the
   * guest, record guest.card_created and mark the task done — only while this worker holds it.
   */
  const processTask = (task: ClaimedCardTask, worker: string) =>
    Effect.gen(function*() {
      const parsed = yield* Effect.either(parser.parse(task.image))
      if (Either.isLeft(parsed)) {
        yield* finishIfHeld(task, worker, { status: "failed", error: parsed.left.message })
        return "failed" as const
      }
      const input = guestInput(task, parsed.right)
      if (Either.isLeft(input)) {
        yield* finishIfHeld(task, worker, { status: "failed", error: input.left })
        return "failed" as const
      }
      return yield* Effect.orDie(sql.withTransaction(Effect.gen(function*() {
        if (!(yield* tasks.lockHeld(task.id, worker))) return "lost" as const
        const existing = yield* guestsRepo.findByImage(task.matchmaker_id, task.image_hash)
        if (Option.isSome(existing)) {
          yield* tasks.finish(task.id, { status: "failed", error: `a guest was already created from this image: ${existing.value.id}` })
          return "failed" as const
        }
        const guest = yield* guests.insertNew(input.right, { image_hash: task.image_hash })
        const result = {
          method: parsed.right.method,
          summary: cardSummary(input.right),
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
      })))
    }).pipe(Effect.withSpan("CardImport.processTask"), Effect.annotateLogs({ task_id: task.task_id }))

  const finishIfHeld = (task: ClaimedCardTask, worker: string, outcome: { status: "failed"; error: string }) =>
    Effect.orDie(sql.withTransaction(Effect.gen(function*() {
      if (yield* tasks.lockHeld(task.id, worker)) yield* tasks.finish(task.id, outcome)
    })))

  return { parseCard, createFromCard, getTask, processTask, finishIfHeld } as const
})

export class CardImport extends Context.Tag("CardImport/Service")<CardImport, Effect.Effect.Success<typeof makeCardImport>>() {}
export const CardImportLive = Layer.effect(CardImport, makeCardImport)
