// The sync cursor (DECISIONS §12): what a list gave decodes back to its position for the same
// filters; anything else is refused before it reaches the database, as `malformed` or as made for
// `other filters`.
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"

import { decodeCursor, encodeCursor, syncScope } from "../../src/domain/sync.js"

const scope = syncScope("guests", { status: "available", updated_since: "2000-01-01 00:00:00" })
const crafted = (text: string) => Buffer.from(text, "utf8").toString("base64url")

describe("sync cursor", () => {
  it.each([
    ["2026-11-26T06:45:34.546577Z", 1],
    ["0001-01-01T00:00:00.000000Z", 2_147_483_647],
    ["9999-12-31T23:59:59.999999Z", 42],
    ["2024-02-29T12:00:00.000001Z", 7]
  ])("a cursor the list gave at %s, id %s, decodes to its position", (at, id) => {
    expect(decodeCursor(encodeCursor(scope, { at, id }), scope)).toEqual(Result.succeed({ at, id }))
  })

  it.each([
    ["February 30 (Date.parse would roll it over to March 2)", `1|${scope}|2026-02-30T00:00:00.000000Z|1`],
    ["24:00 (the next day to Date.parse)", `1|${scope}|2026-01-01T24:00:00.000000Z|1`],
    ["year 0 (PostgreSQL has no year 0)", `1|${scope}|0000-01-01T00:00:00.000000Z|1`],
    ["month 13", `1|${scope}|2026-13-01T00:00:00.000000Z|1`],
    ["a leap second", `1|${scope}|2026-12-31T23:59:60.000000Z|1`],
    ["milliseconds only", `1|${scope}|2026-01-01T00:00:00.000Z|1`],
    ["an id past int4", `1|${scope}|2026-01-01T00:00:00.000000Z|2147483648`],
    ["id 0", `1|${scope}|2026-01-01T00:00:00.000000Z|0`],
    ["another version", `2|${scope}|2026-01-01T00:00:00.000000Z|1`],
    ["a part too many", `1|${scope}|2026-01-01T00:00:00.000000Z|1|1`]
  ])("a crafted cursor with %s is malformed", (_, text) => {
    expect(decodeCursor(crafted(text), scope)).toEqual(Result.fail("malformed"))
  })

  it("a cursor of the same list with other filters is refused as such", () => {
    const other = syncScope("guests", { status: "matching", updated_since: "2000-01-01 00:00:00" })
    const cursor = encodeCursor(other, { at: "2026-01-01T00:00:00.000000Z", id: 1 })
    expect(decodeCursor(cursor, scope)).toEqual(Result.fail("other filters"))
  })

  it("text that is not base64url, or too long, is malformed", () => {
    expect(decodeCursor("abc=", scope)).toEqual(Result.fail("malformed"))
    expect(decodeCursor("a".repeat(201), scope)).toEqual(Result.fail("malformed"))
  })
})
