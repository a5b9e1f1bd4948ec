// The platform-time rendering (DECISIONS §10): the cached-offset fast path writes exactly what Intl
// writes, in zones with and without daylight saving, across their transitions.
import { describe, expect, it } from "@effect/vitest"

import {
  canonicalTimeZone,
  existsAsUtc,
  formatDate,
  formatIso,
  formatTimestamp,
  parseTimestamp,
  slowTimestamp
} from "../../src/domain/time.js"

const ZONES = [
  "Asia/Shanghai",
  "UTC",
  "America/New_York",
  "Europe/London",
  "Australia/Lord_Howe",
  "Asia/Kathmandu",
  "America/St_Johns",
  "Pacific/Chatham"
]

describe("platform time rendering", () => {
  it.each([
    ["2026-11-25T02:00:00.000Z", "Asia/Shanghai", "2026-11-25 10:00:00"],
    ["2026-11-24T16:00:00.000Z", "Asia/Shanghai", "2026-11-25 00:00:00"],
    ["2026-11-24T15:59:59.999Z", "Asia/Shanghai", "2026-11-24 23:59:59"],
    ["2026-03-08T06:59:59.000Z", "America/New_York", "2026-03-08 01:59:59"],
    ["2026-03-08T07:00:00.000Z", "America/New_York", "2026-03-08 03:00:00"],
    ["2026-11-01T05:30:00.000Z", "America/New_York", "2026-11-01 01:30:00"],
    ["2026-11-01T06:30:00.000Z", "America/New_York", "2026-11-01 01:30:00"],
    ["1969-12-31T23:59:59.500Z", "UTC", "1969-12-31 23:59:59"],
    ["2026-04-04T14:59:59.000Z", "Australia/Lord_Howe", "2026-04-05 01:59:59"],
    ["2026-04-04T15:00:00.000Z", "Australia/Lord_Howe", "2026-04-05 01:30:00"]
  ])("%s in %s is %s", (instant, zone, text) => {
    expect(formatTimestamp(new Date(instant), zone)).toBe(text)
    expect(formatIso(new Date(instant), zone)).toBe(text.replace(" ", "T"))
    expect(formatDate(new Date(instant), zone)).toBe(text.slice(0, 10))
  })

  it("the cached offsets write what Intl writes, every 67 minutes and 13 seconds over two years, transitions included", () => {
    const from = Date.UTC(2025, 0, 1)
    const to = Date.UTC(2027, 0, 1)
    for (const zone of ZONES) {
      const mismatches: Array<string> = []
      for (let ms = from; ms < to; ms += 4_033_000) {
        const d = new Date(ms + (ms % 997))
        if (formatTimestamp(d, zone) !== slowTimestamp(d, zone)) mismatches.push(d.toISOString())
      }
      expect(mismatches, zone).toEqual([])
    }
  })

  it("each second around a transition is written as Intl writes it", () => {
    for (
      const [zone, at] of [["America/New_York", "2026-03-08T07:00:00Z"], ["America/New_York", "2026-11-01T06:00:00Z"], [
        "Europe/London",
        "2026-10-25T01:00:00Z"
      ]] as const
    ) {
      const t = Date.parse(at)
      for (let ms = t - 5_000; ms <= t + 5_000; ms += 500) {
        expect(formatTimestamp(new Date(ms), zone)).toBe(slowTimestamp(new Date(ms), zone))
      }
    }
  })

  it("years outside 1000-9999 are written as Intl writes them", () => {
    for (const ms of [Date.UTC(999, 5, 1), Date.UTC(10000, 0, 2), Date.UTC(1, 0, 1)]) {
      expect(formatTimestamp(new Date(ms), "Asia/Shanghai")).toBe(slowTimestamp(new Date(ms), "Asia/Shanghai"))
    }
  })

  it("parsing a written instant gives it back", () => {
    for (const zone of ZONES) {
      const d = new Date(Date.UTC(2026, 6, 1, 12, 34, 56))
      expect(parseTimestamp(formatTimestamp(d, zone), zone).getTime()).toBe(d.getTime())
    }
  })
})

describe("a time that exists", () => {
  it.each([
    ["2024-02-29T12:00:00", true],
    ["2026-11-26T06:45:34.546", true],
    ["0001-01-01T00:00:00", true],
    ["9999-12-31T23:59:59", true],
    ["2026-02-29T00:00:00", false],
    ["2026-02-30T00:00:00", false],
    ["2026-01-01T24:00:00", false],
    ["2026-12-31T23:59:60", false],
    ["2026-13-01T00:00:00", false],
    ["2026-04-31T00:00:00.000", false],
    ["not a time", false]
  ])("%s read as UTC exists: %s", (text, exists) => {
    expect(existsAsUtc(text)).toBe(exists)
  })
})

describe("the platform time zone (TZ)", () => {
  const cases: ReadonlyArray<readonly [string, string | undefined]> = [
    ["Asia/Shanghai", "Asia/Shanghai"],
    ["  Asia/Shanghai ", "Asia/Shanghai"],
    ["asia/shanghai", "Asia/Shanghai"],
    ["UTC", "UTC"],
    ["utc", "UTC"],
    ["Europe/Berlin", "Europe/Berlin"],
    ["Etc/GMT-8", "Etc/GMT-8"],
    ["Mars/Olympus", undefined],
    ["CST-8", undefined],
    ["+08:00x", undefined],
    ["", undefined],
    ["Asia/Shanghai\u0000", undefined]
  ]
  it.each(cases)("%j is %j: a zone Intl knows, as Intl spells it, or none", (text, expected) => {
    expect(canonicalTimeZone(text)).toBe(expected)
  })

  it("every zone it accepts renders an instant (what each answer's times need)", () => {
    for (const [text] of cases) {
      const zone = canonicalTimeZone(text)
      if (zone !== undefined) expect(formatTimestamp(new Date(0), zone)).toMatch(/^19(69|70)-/)
    }
  })
})
