// The keys kept beside the record (DECISIONS §12: a payload only grows): which ones each type keeps,
// and how each is derived from the record with its old meaning and format.
import { describe, expect, it } from "@effect/vitest"

import { GIVEN_BY_CALLER, KEPT_KEYS, keptFields, keptKeysOf, type KeptType } from "../../src/domain/eventPayloads.js"
import { EVENT_TYPES } from "../../src/domain/eventTypes.js"
import { isMasked, MASKED_FIELDS, type MaskedResource } from "../../src/domain/masking.js"

const completedTask = {
  id: 41,
  follow_up_id: 7,
  guest_id: 3,
  company_id: 2,
  task_type: "recommend",
  task_day: 1,
  scheduled_date: "2026-11-25",
  status: "completed",
  dispatched_to: "ak_matcher",
  dispatched_at: "2026-11-25T09:00:00",
  finished_at: "2026-11-25T09:05:07",
  result: {
    matched_guest_id: 9,
    match_score: 88.5,
    share_link: "https://example.test/s/1",
    share_channel: "wechat",
    extra: { note: "n" },
    error_code: null,
    error_msg: null,
    reason: null
  }
}

describe("keptFields", () => {
  it.each<[KeptType, Record<string, unknown>, Record<string, unknown>]>([
    ["guest.created", { id: 5, name: "王芳" }, { guest_id: 5 }],
    ["guest.updated", { id: 5, name: "王芳" }, { guest_id: 5 }],
    ["match.created", { id: 12, status: "pending" }, { match_id: 12 }],
    ["match.status_changed", { id: 12, status: "pending_date" }, { match_id: 12 }],
    ["membership.expired", { id: 30, status: "expired" }, { membership_id: 30 }],
    ["follow_up.task_completed", completedTask, {
      task_id: 41,
      matched_guest_id: 9,
      match_score: 88.5,
      share_link: "https://example.test/s/1",
      share_channel: "wechat",
      extra: { note: "n" },
      completed_by: "ak_matcher",
      completed_at: "2026-11-25T09:05:07"
    }]
  ])("%s: the old keys, derived from the record with their old meaning", (type, record, kept) => {
    expect(keptFields(type, record)).toEqual(kept)
  })

  it("a completed task without result fields keeps them as null, as its old event did", () => {
    const bare = { ...completedTask, result: { ...completedTask.result, share_link: null, share_channel: null, extra: null } }
    expect(keptFields("follow_up.task_completed", bare)).toMatchObject({ share_link: null, share_channel: null, extra: null })
  })

  it("gives every kept key except those only the caller knows, and adds nothing to a type that kept none", () => {
    for (const type of EVENT_TYPES) {
      const given: ReadonlyArray<string> = (GIVEN_BY_CALLER as Record<string, ReadonlyArray<string>>)[type] ?? []
      const derived = Object.keys(keptFields(type, completedTask)).sort()
      expect(derived, type).toEqual(keptKeysOf(type).filter((k) => !given.includes(k)).sort())
    }
    expect(keptKeysOf("company.created")).toEqual([])
    expect(keptKeysOf("guest.card_created")).toEqual([])
  })
})

describe("KEPT_KEYS", () => {
  it("names no masked field (the masker works by name: ids, statuses and results are shown to a masking client)", () => {
    const resources = Object.keys(MASKED_FIELDS) as Array<MaskedResource>
    for (const keys of Object.values(KEPT_KEYS)) {
      for (const key of keys) expect(resources.filter((r) => isMasked(r, key)), key).toEqual([])
    }
  })
})
