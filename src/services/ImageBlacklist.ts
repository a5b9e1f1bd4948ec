// Image blacklist use cases (SPEC §4.6, DECISIONS §8): add with per-item errors, check with hit
// counting, list, permanent delete; the operator disables records.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

import {
  BLACKLIST_ADD_MAX,
  BLACKLIST_CHECK_MAX,
  BLACKLIST_PAGE,
  type BlacklistAddOutcome,
  type BlacklistCheckOutcome,
  type BlacklistListParams,
  BlacklistSource
} from "../../schema/ImageBlacklist.js"
import { BatchTooLarge, NotFound } from "../domain/errors.js"
import { jsonTextIssues } from "../domain/text.js"
import { type BlacklistItem, ImageBlacklistRepo } from "../repos/ImageBlacklistRepo.js"
import { method, someOrNotFound, syncWindow } from "./common.js"

export const DEFAULT_REJECT_REASON = "added through the Open API"
const MD5 = /^[0-9a-fA-F]{32}$/
const SOURCES: ReadonlyArray<string> = BlacklistSource.literals
const isSource = Schema.is(BlacklistSource)

/** One add item checked on its own: a normalised item, or the reason it fails. */
export const checkAddItem = (item: unknown): { item: BlacklistItem } | { md5: string | null; reason: string } => {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return { md5: null, reason: "item must be an object" }
  const { md5, source, reject_reason }: Readonly<Record<string, unknown>> = { ...item }
  const md5Text = typeof md5 === "string" ? md5 : null
  if (md5Text === null) return { md5: null, reason: "md5 is required" }
  if (!MD5.test(md5Text)) return { md5: md5Text, reason: "md5 must be 32 hexadecimal characters" }
  if (source !== undefined && source !== null && !isSource(source)) {
    return { md5: md5Text, reason: `source must be one of ${SOURCES.join(", ")}` }
  }
  if (reject_reason !== undefined && reject_reason !== null && (typeof reject_reason !== "string" || [...reject_reason].length > 255)) {
    return { md5: md5Text, reason: "reject_reason must be a string of at most 255 characters" }
  }
  const textIssue = jsonTextIssues(item)[0]
  if (textIssue !== undefined) return { md5: md5Text, reason: `${textIssue.path}: ${textIssue.message}` }
  return {
    item: {
      md5: md5Text.toLowerCase(),
      source: isSource(source) ? source : "external",
      reason: typeof reject_reason === "string" && reject_reason !== "" ? reject_reason : DEFAULT_REJECT_REASON
    }
  }
}

export class ImageBlacklist extends Context.Service<ImageBlacklist>()("ImageBlacklist/Service", {
  make: Effect.gen(function*() {
    const repo = yield* ImageBlacklistRepo

    const list = (params: BlacklistListParams) =>
      Effect.flatMap(syncWindow("image-blacklist", params, BLACKLIST_PAGE), (sync) => repo.list(params, sync))

    const add = method("ImageBlacklist.add")(function*(items: ReadonlyArray<unknown>) {
      if (items.length > BLACKLIST_ADD_MAX) return yield* BatchTooLarge.of(BLACKLIST_ADD_MAX, items.length)
      const valid: Array<BlacklistItem> = []
      const errors: Array<BlacklistAddOutcome["errors"][number]> = []
      items.forEach((raw, index) => {
        const checked = checkAddItem(raw)
        if ("item" in checked) valid.push(checked.item)
        else errors.push({ index, md5: checked.md5, reason: checked.reason })
      })
      const { added, restored } = yield* repo.add(valid)
      const outcome: BlacklistAddOutcome = {
        added: added.size,
        restored: restored.size,
        skipped: valid.length - added.size - restored.size,
        errors
      }
      return outcome
    })

    const check = method("ImageBlacklist.check")(function*(md5List: ReadonlyArray<string>) {
      if (md5List.length > BLACKLIST_CHECK_MAX) return yield* BatchTooLarge.of(BLACKLIST_CHECK_MAX, md5List.length)
      const invalid = md5List.filter((m) => !MD5.test(m))
      const valid = md5List.filter((m) => MD5.test(m)).map((m) => m.toLowerCase())
      const blockedSet = yield* repo.hit(valid)
      const blocked = [...new Set(valid.filter((m) => blockedSet.has(m)))]
      const allowed = [...new Set(valid.filter((m) => !blockedSet.has(m)))]
      const outcome: BlacklistCheckOutcome = invalid.length > 0 ? { blocked, allowed, invalid } : { blocked, allowed }
      return outcome
    })

    const remove = Effect.fnUntraced(function*(id: number) {
      if (!(yield* repo.remove(id))) return yield* NotFound.of("image_blacklist", id)
      return null
    })

    const disable = (id: number) => repo.setStatus(id, "disabled").pipe(someOrNotFound("image_blacklist", id))

    /** Upload check: true when the md5 hits an active record (the hit is counted). */
    const blocks = (md5: string) => Effect.map(repo.hit([md5.toLowerCase()]), (s) => s.size > 0)

    return { list, add, check, remove, disable, blocks } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(ImageBlacklist, ImageBlacklist.make)
  static readonly layer = ImageBlacklist.layerWithoutDependencies.pipe(Layer.provide(ImageBlacklistRepo.layer))
}
