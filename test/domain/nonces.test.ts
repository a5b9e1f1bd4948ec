// Nonces by partition (migration 0025, DECISIONS §2): the hour slots a sighting is recorded in,
// and the rule the admission relies on: two sightings of a nonce within the retention share a
// slot (so the later one meets the earlier on that slot's unique index), whichever comes first.
// Also which rows of a DEFAULT partition are past the retention (src/domain/partitions.ts).
import { describe, expect, it } from "@effect/vitest"

import { NONCE_SLOT_MS, nonceSlots } from "../../src/domain/nonces.js"
import { DAY_MS, defaultPruneBeforeMs } from "../../src/domain/partitions.js"

const H = NONCE_SLOT_MS
/** 2026-11-29T08:00:00Z */
const T0 = Date.UTC(2026, 10, 29, 8)
const RETENTION = 15 * 60_000

describe("nonceSlots", () => {
  it.each([
    { at: T0, retention: RETENTION, slots: [T0], why: "the start of an hour: that hour alone" },
    { at: T0 + 45 * 60_000 - 1, retention: RETENTION, slots: [T0], why: "the retention ends within the hour" },
    { at: T0 + 45 * 60_000, retention: RETENTION, slots: [T0, T0 + H], why: "the retention reaches the next hour's first instant" },
    { at: T0 + H - 1, retention: RETENTION, slots: [T0, T0 + H], why: "the last instant of an hour" },
    { at: T0 + 10 * 60_000, retention: 0, slots: [T0], why: "no retention" },
    { at: T0, retention: H, slots: [T0, T0 + H], why: "a retention of an hour" },
    { at: T0 + 30 * 60_000, retention: 5 * H, slots: [T0, T0 + H], why: "a retention past an hour counts as an hour" }
  ])("$why", ({ at, retention, slots }) => {
    expect(nonceSlots(at, retention)).toEqual(slots)
  })

  it("two sightings at most the retention apart share a slot, either one first; further apart they may not", () => {
    const retention = RETENTION
    for (let first = T0 - H; first < T0 + H; first += 61_003) {
      for (const gap of [0, 1, 60_000, retention - 1, retention]) {
        const later = first + gap
        // The later sighting looks in its own slots for the earlier one's rows.
        const shared = nonceSlots(later, retention).filter((s) => nonceSlots(first, retention).includes(s))
        expect(shared, `${first} then ${later}`).toContain(Math.floor(later / H) * H)
      }
    }
    // Past the retention, the rows met (if any) are older than it: the admission's seen_ms check decides.
    expect(nonceSlots(T0, retention)).not.toContain(Math.floor((T0 + H) / H) * H)
  })
})

describe("defaultPruneBeforeMs", () => {
  it.each([
    { widthMs: H, retentionMs: RETENTION, now: T0 + 20 * 60_000, before: T0, why: "the hour holding now − retention begins the rows kept" },
    {
      widthMs: H,
      retentionMs: RETENTION,
      now: T0 + 14 * 60_000,
      before: T0 - H,
      why: "now − retention still in the hour before: that hour is kept"
    },
    {
      widthMs: DAY_MS,
      retentionMs: H,
      now: Date.UTC(2026, 10, 29, 0, 30),
      before: Date.UTC(2026, 10, 28),
      why: "days: within the margin of midnight, the day before is kept"
    },
    {
      widthMs: DAY_MS,
      retentionMs: H,
      now: Date.UTC(2026, 10, 29, 1),
      before: Date.UTC(2026, 10, 29),
      why: "days: past it, only the day before goes"
    }
  ])("$why", ({ before, now, retentionMs, widthMs }) => {
    expect(defaultPruneBeforeMs({ widthMs, retentionMs }, now)).toBe(before)
  })
})
