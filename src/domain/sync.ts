// Incremental sync of the lists (DECISIONS §12): `updated_since` and the opaque `cursor`. A cursor
// is the position after the last record of a page in (updated_at, id) order, with microseconds
// (the wire's platform time shows whole seconds; a cursor made of that text would skip or repeat
// records updated within the same second), and a digest of the list and filters it was made for.
import { createHash } from "node:crypto"

import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

import { existsAsUtc } from "./time.js"

/** A position in (updated_at, id) order: the instant as UTC text with microseconds, and the id. */
export const SyncPosition = Schema.Struct({ at: Schema.String, id: Schema.Int })
export type SyncPosition = typeof SyncPosition.Type

/**
 * How a list page is read in sync order: from `since` (an instant, inclusive) and/or after `after`,
 * `limit` records, for the list and filters that `scope` digests.
 */
export const SyncWindow = Schema.Struct({
  since: Schema.optional(Schema.String),
  after: Schema.optional(SyncPosition),
  limit: Schema.Int,
  scope: Schema.String
})
export type SyncWindow = typeof SyncWindow.Type

/** The query keys that only page: they may change between the pages of one walk. */
const PAGING_KEYS: ReadonlySet<string> = new Set(["page", "page_size", "cursor"])

const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(
      Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map((
        [k, v]
      ) => [k, canonical(v)])
    )
    : value

/**
 * The digest of a list (its name and path ids) and its filters, `updated_since` included; paging
 * keys are left out. Equal filters given in any key order digest the same.
 */
export const syncScope = (list: string, query: object, pathIds: object = {}): string => {
  const filters = Object.fromEntries(Object.entries(query).filter(([key]) => !PAGING_KEYS.has(key)))
  return createHash("sha256").update(JSON.stringify(canonical([list, pathIds, filters]))).digest("base64url").slice(0, 16)
}

const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/u

/**
 * An instant as a cursor holds it, and one that exists (not February 30 or 24:00, which Date.parse
 * would roll over), from year 1 (PostgreSQL has no year 0).
 */
const isInstant = (at: string): boolean => AT.test(at) && !at.startsWith("0000") && existsAsUtc(at.slice(0, 23))

const VERSION = "1"

/** The opaque cursor of a position, for a scope. */
export const encodeCursor = (scope: string, position: SyncPosition): string =>
  Buffer.from(`${VERSION}|${scope}|${position.at}|${position.id}`, "utf8").toString("base64url")

/** Why a cursor is refused (the message of the 400 naming `cursor`). */
export type CursorRefusal = "malformed" | "other filters"

/**
 * The position a cursor holds, when it was made for this scope: a cursor that does not decode is
 * `malformed`; one made for another list or other filters is refused as such.
 */
export const decodeCursor = (cursor: string, scope: string): Result.Result<SyncPosition, CursorRefusal> => {
  if (!/^[A-Za-z0-9_-]{1,200}$/u.test(cursor)) return Result.fail("malformed")
  const parts = Buffer.from(cursor, "base64url").toString("utf8").split("|")
  if (parts.length !== 4) return Result.fail("malformed")
  const [version, madeFor, at, id] = parts as [string, string, string, string]
  if (version !== VERSION || !isInstant(at) || !/^[1-9]\d{0,9}$/u.test(id)) return Result.fail("malformed")
  const n = Number(id)
  if (n > 2_147_483_647) return Result.fail("malformed")
  return madeFor === scope ? Result.succeed({ at, id: n }) : Result.fail("other filters")
}

export const CURSOR_MESSAGES: Readonly<Record<CursorRefusal, string>> = {
  malformed: "is not a cursor this list gave",
  "other filters": "was given for another list or other filters; send the filters of the page it came from"
}
