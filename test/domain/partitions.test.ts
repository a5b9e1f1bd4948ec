// Retention by partition (issue 38): which partitions the daemon creates ahead and which it drops,
// their names, and how far ahead a table is covered.
import { describe, expect, it } from "@effect/vitest"

import {
  coveredAheadMs,
  DAY_MS,
  defaultPartitionName,
  type ExistingPartition,
  expiredPartitions,
  expiredRanges,
  partitionName,
  partitionsToCreate
} from "../../src/domain/partitions.js"

const HOUR = 60 * 60 * 1000
/** 2026-11-29T00:00:00Z */
const D0 = Date.UTC(2026, 10, 29)
const day = (n: number) => D0 + n * DAY_MS

const part = (name: string, fromMs: number | null, toMs: number | null): ExistingPartition => ({ name, isDefault: false, fromMs, toMs })
const DEFAULT: ExistingPartition = { name: "events_default", isDefault: true, fromMs: null, toMs: null }
const daily = (table: string, ...days: ReadonlyArray<number>) => days.map((n) => part(partitionName(table, day(n)), day(n), day(n + 1)))
const spans = (created: ReadonlyArray<{ fromMs: number; toMs: number }>) =>
  created.map((p) => [(p.fromMs - D0) / HOUR, (p.toMs - D0) / HOUR])

describe("partitionName", () => {
  it.each([
    { from: D0, name: "events_p20261129", why: "a UTC midnight: the day" },
    { from: D0 + 8.5 * HOUR, name: "events_p20261129_083000", why: "another instant: the day and the time" },
    { from: Date.UTC(2027, 0, 5), name: "events_p20270105", why: "months and days padded" }
  ])("$name ($why)", ({ from, name }) => {
    expect(partitionName("events", from)).toBe(name)
  })

  it("refuses a name past PostgreSQL's 63 bytes (it would be truncated to another name)", () => {
    expect(() => partitionName("t".repeat(54), D0)).toThrow(/longer than 63 bytes/)
    expect(partitionName("t".repeat(53), D0)).toHaveLength(63)
  })

  it("the DEFAULT partition is the table's name and _default", () => {
    expect(defaultPartitionName("webhook_deliveries")).toBe("webhook_deliveries_default")
  })
})

describe("partitionsToCreate", () => {
  const policy = { widthMs: DAY_MS, aheadMs: 2 * DAY_MS, retentionMs: 30 * DAY_MS }

  it.each([
    {
      why: "nothing yet: the slot holding now and every slot up to the one holding now + ahead",
      now: D0 + 10 * HOUR,
      existing: [],
      hours: [[0, 24], [24, 48], [48, 72]]
    },
    {
      why: "the slots that exist are not created again",
      now: D0 + 10 * HOUR,
      existing: daily("events", 0, 1),
      hours: [[48, 72]]
    },
    {
      why: "the DEFAULT partition covers no slot",
      now: D0 + 10 * HOUR,
      existing: [DEFAULT, ...daily("events", 0, 1, 2)],
      hours: []
    },
    {
      why: "now on a grid line: that slot is the first",
      now: D0,
      existing: [],
      hours: [[0, 24], [24, 48], [48, 72]]
    },
    {
      why: "a partition unbounded above covers everything after its start",
      now: D0 + 10 * HOUR,
      existing: [part("events_p_after", day(1), null)],
      hours: [[0, 24]]
    },
    {
      why: "a partition from MINVALUE covers up to its end; the rest of the slot is created",
      now: D0 + 10 * HOUR,
      existing: [part("events_p_before", null, D0 + 12 * HOUR)],
      hours: [[12, 24], [24, 48], [48, 72]]
    },
    {
      why: "off-grid partitions (another width) are kept; only the gaps around them are filled, cut at grid lines",
      now: D0 + 10 * HOUR,
      existing: [part("events_x", D0 + 6 * HOUR, D0 + 30 * HOUR)],
      hours: [[0, 6], [30, 48], [48, 72]]
    }
  ])("$why", ({ existing, hours, now }) => {
    expect(spans(partitionsToCreate("events", policy, now, existing))).toEqual(hours)
  })

  it.each([
    {
      why: "rows waiting in the DEFAULT partition from two days back: their slots are created too",
      oldest: day(-2) + 5 * HOUR,
      first: -48
    },
    { why: "rows in the DEFAULT partition from later than now change nothing", oldest: day(5), first: 0 },
    { why: "not further back than the retention and one slot (older slots would be dropped at once)", oldest: day(-400), first: -31 * 24 }
  ])("$why", ({ first, oldest }) => {
    const created = spans(partitionsToCreate("events", policy, D0 + 10 * HOUR, [DEFAULT], oldest))
    expect(created[0]![0]).toBe(first)
    expect(created.at(-1)).toEqual([48, 72])
    expect(created).toHaveLength(3 - first / 24)
  })

  it("ahead 0 creates the current slot only", () => {
    expect(spans(partitionsToCreate("events", { ...policy, aheadMs: 0 }, D0 + 23 * HOUR, []))).toEqual([[0, 24]])
  })

  it("a wider grid: weekly slots counted from the epoch", () => {
    const week = 7 * DAY_MS
    const created = partitionsToCreate("events", { widthMs: week, aheadMs: 0, retentionMs: 0 }, D0, [])
    expect(created).toHaveLength(1)
    expect(created[0]!.fromMs % week).toBe(0)
    expect(created[0]!.fromMs).toBeLessThanOrEqual(D0)
    expect(created[0]!.toMs).toBeGreaterThan(D0)
    expect(created[0]!.toMs - created[0]!.fromMs).toBe(week)
  })

  it("names each created partition after its lower bound", () => {
    expect(partitionsToCreate("events", policy, D0 + HOUR, daily("events", 0, 2)).map((p) => p.name)).toEqual(["events_p20261130"])
  })

  it("created partitions never overlap each other or an existing one, and leave no gap up to the horizon", () => {
    const existing = [part("a", D0 + 3 * HOUR, D0 + 5 * HOUR), part("b", D0 + 20 * HOUR, D0 + 50 * HOUR), DEFAULT]
    const created = partitionsToCreate("events", policy, D0 + HOUR, existing)
    const all = [...created, ...existing.filter((p) => !p.isDefault)]
      .map((p) => [p.fromMs!, p.toMs!] as const)
      .toSorted((x, y) => x[0] - y[0])
    for (let i = 1; i < all.length; i++) expect(all[i]![0]).toBe(all[i - 1]![1])
    expect(all[0]![0]).toBe(D0)
    expect(all.at(-1)![1]).toBe(day(3))
  })

  it("refuses a width of 0 or a negative ahead", () => {
    expect(() => partitionsToCreate("events", { ...policy, widthMs: 0 }, D0, [])).toThrow(/invalid partition policy/)
    expect(() => partitionsToCreate("events", { ...policy, aheadMs: -1 }, D0, [])).toThrow(/invalid partition policy/)
  })
})

describe("expiredPartitions", () => {
  const policy = { retentionMs: 30 * DAY_MS }
  const now = day(40) + 10 * HOUR

  it.each([
    { why: "its upper bound before now − retention: every row is past it", p: part("a", day(8), day(9)), expired: true },
    { why: "its upper bound exactly at now − retention", p: part("a", day(9), D0 + 10 * DAY_MS + 10 * HOUR), expired: true },
    { why: "a row of it may still be within the retention", p: part("a", day(10), day(11)), expired: false },
    { why: "from MINVALUE, ended long ago", p: part("a", null, day(1)), expired: true },
    { why: "unbounded above: never", p: part("a", day(1), null), expired: false },
    { why: "the DEFAULT partition: never", p: DEFAULT, expired: false }
  ])("$why: $expired", ({ expired, p }) => {
    expect(expiredPartitions(policy, now, [p]).length > 0).toBe(expired)
  })

  it("lists them oldest first", () => {
    const existing = daily("events", 5, 2, 9, 3)
    expect(expiredPartitions(policy, now, existing).map((p) => p.name)).toEqual(
      ["events_p20261201", "events_p20261202", "events_p20261204", "events_p20261208"]
    )
  })
})

describe("expiredRanges", () => {
  const policy = { retentionMs: 30 * DAY_MS, tables: ["events", "webhook_deliveries", "webhook_attempts"] }
  const now = day(33)

  it("groups the tables' partitions of the same bounds, in drop order (the policy's tables reversed), oldest range first", () => {
    const existing = new Map([
      ["events", daily("events", 1, 0, 2, 5)],
      ["webhook_deliveries", daily("webhook_deliveries", 0, 1, 2, 5)],
      ["webhook_attempts", daily("webhook_attempts", 0, 2)]
    ])
    expect(expiredRanges(policy, now, existing)).toEqual([
      {
        fromMs: day(0),
        toMs: day(1),
        partitions: [
          { table: "webhook_attempts", name: "webhook_attempts_p20261129" },
          { table: "webhook_deliveries", name: "webhook_deliveries_p20261129" },
          { table: "events", name: "events_p20261129" }
        ]
      },
      {
        fromMs: day(1),
        toMs: day(2),
        partitions: [
          { table: "webhook_deliveries", name: "webhook_deliveries_p20261130" },
          { table: "events", name: "events_p20261130" }
        ]
      },
      {
        fromMs: day(2),
        toMs: day(3),
        partitions: [
          { table: "webhook_attempts", name: "webhook_attempts_p20261201" },
          { table: "webhook_deliveries", name: "webhook_deliveries_p20261201" },
          { table: "events", name: "events_p20261201" }
        ]
      }
    ])
  })

  it("nothing expired, or a table not listed: no range", () => {
    expect(expiredRanges(policy, day(31), new Map([["events", daily("events", 1, 2)]]))).toEqual([])
    expect(expiredRanges(policy, now, new Map())).toEqual([])
  })
})

describe("coveredAheadMs", () => {
  it.each([
    { why: "contiguous partitions: up to the end of the last", existing: daily("e", 0, 1, 2), ahead: 3 * DAY_MS - 10 * HOUR },
    { why: "a gap ends the coverage", existing: daily("e", 0, 2), ahead: DAY_MS - 10 * HOUR },
    { why: "no partition holds now (the DEFAULT one does not count)", existing: [DEFAULT, ...daily("e", 1)], ahead: 0 },
    { why: "a partition unbounded above", existing: [part("e", null, null)], ahead: Infinity }
  ])("$why", ({ ahead, existing }) => {
    expect(coveredAheadMs(D0 + 10 * HOUR, existing)).toBe(ahead)
  })
})
