// The keys an event type carried before its `data` became "the record as the read endpoint shows
// it" (DECISIONS §12: a type's payload only ever grows), kept beside the record with their old
// meaning and format, and how each is derived from the record it sits beside.
import type { CatalogueEventType } from "./eventTypes.js"

/**
 * Every key kept beside the record, per type (the others kept none: their `data` was always the
 * record, or, for `guest.card_created`, still is its own payload). A consumer that keeps a copy of
 * the records drops these and `changed_fields`.
 */
export const KEPT_KEYS = {
  "guest.created": ["guest_id"],
  "guest.updated": ["guest_id"],
  "match.created": ["match_id"],
  "match.status_changed": ["match_id", "previous_status"],
  "follow_up.task_completed": [
    "task_id",
    "matched_guest_id",
    "match_score",
    "share_link",
    "share_channel",
    "extra",
    "completed_by",
    "completed_at"
  ],
  "membership.expired": ["membership_id"]
} as const satisfies { readonly [T in CatalogueEventType]?: ReadonlyArray<string> }

export type KeptType = keyof typeof KEPT_KEYS

/**
 * The kept keys the caller supplies, because the record cannot give them back: the status a match
 * left is gone once the change committed, so it is read (locked) in the transaction of the change.
 */
export const GIVEN_BY_CALLER = { "match.status_changed": ["previous_status"] } as const satisfies {
  readonly [T in KeptType]?: ReadonlyArray<(typeof KEPT_KEYS)[T][number]>
}

/** The keys `type` keeps beside the record (none for a type that kept none, or outside the catalogue). */
export const keptKeysOf = (type: string): ReadonlyArray<string> => Object.hasOwn(KEPT_KEYS, type) ? KEPT_KEYS[type as KeptType] : []

type Data = Readonly<Record<string, unknown>>

/** The result fields a completed task's event carried at the top level (its `result` holds them too). */
const resultOf = (record: Data): Data => (record.result !== null && typeof record.result === "object" ? record.result as Data : {})

const byId = (key: string) => (record: Data): Data => ({ [key]: record.id })

/**
 * How the kept keys the record can give are derived from it: each id is the record's `id`; a
 * completed task's `completed_by` is the app_key that held it (`dispatched_to`) and `completed_at`
 * its `finished_at` (ISO `YYYY-MM-DDTHH:MM:SS`, platform time, as before), and its result fields are
 * copied from `result`.
 */
const DERIVED: { readonly [T in KeptType]: (record: Data) => Data } = {
  "guest.created": byId("guest_id"),
  "guest.updated": byId("guest_id"),
  "match.created": byId("match_id"),
  "match.status_changed": byId("match_id"),
  "follow_up.task_completed": (record) => {
    const result = resultOf(record)
    return {
      task_id: record.id,
      matched_guest_id: result.matched_guest_id ?? null,
      match_score: result.match_score ?? null,
      share_link: result.share_link ?? null,
      share_channel: result.share_channel ?? null,
      extra: result.extra ?? null,
      completed_by: record.dispatched_to ?? null,
      completed_at: record.finished_at ?? null
    }
  },
  "membership.expired": byId("membership_id")
}

/** The kept keys of `type` that the record gives, read from it (none for a type that kept none). */
export const keptFields = (type: CatalogueEventType, record: Data): Data =>
  Object.hasOwn(DERIVED, type) ? DERIVED[type as KeptType](record) : {}
