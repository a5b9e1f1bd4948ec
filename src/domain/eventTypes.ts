// The event catalogue of DECISIONS §12: every type an event can have, by resource. A webhook may
// subscribe to any of them (PUT /webhook, `clients webhook --events`); `webhook.test` is not in
// the list: it goes only to the client that asked for it (POST /webhook/test).

export const EVENT_CATALOGUE = {
  guest: ["guest.created", "guest.updated", "guest.card_created"],
  matchmaker: ["matchmaker.created", "matchmaker.updated"],
  company: ["company.created", "company.updated"],
  work_wechat: ["work_wechat.created", "work_wechat.updated", "work_wechat.deleted", "work_wechat.associations_changed"],
  work_group: ["work_group.created", "work_group.updated", "work_group.deleted", "work_group.members_changed"],
  activity: ["activity.created", "activity.updated", "activity.registered"],
  follow_up_task: [
    "follow_up.task_created",
    "follow_up.task_dispatched",
    "follow_up.task_completed",
    "follow_up.task_failed",
    "follow_up.task_skipped"
  ],
  match: ["match.created", "match.status_changed"],
  membership: ["membership.created", "membership.renewed", "membership.cancelled", "membership.expired"]
} as const

export type CatalogueEventType = (typeof EVENT_CATALOGUE)[keyof typeof EVENT_CATALOGUE][number]

/** Every type a webhook may subscribe to, in the catalogue's order. */
export const EVENT_TYPES: ReadonlyArray<CatalogueEventType> = Object.values(EVENT_CATALOGUE).flat()

/** The event a client sends itself to check its receiver; never fanned out, never in the feed. */
export const WEBHOOK_TEST_EVENT = "webhook.test"

export const isEventType = (name: string): name is CatalogueEventType => (EVENT_TYPES as ReadonlyArray<string>).includes(name)

export type EventResource = keyof typeof EVENT_CATALOGUE

/**
 * The read permission of each resource: an event of the resource is delivered and listed only to
 * clients holding it (DECISIONS §9), as its read endpoints are.
 */
export const EVENT_READ_PERMISSION = {
  guest: "open:guest:read",
  matchmaker: "open:matchmaker:read",
  company: "open:company:read",
  work_wechat: "open:work_wechat:read",
  work_group: "open:work_group:read",
  activity: "open:activity:read",
  follow_up_task: "open:follow-up:read",
  match: "open:match:read",
  membership: "open:membership:read"
} as const satisfies Record<EventResource, string>

/** The resource an event type belongs to. */
export const resourceOfEventType = (type: CatalogueEventType): EventResource =>
  (Object.keys(EVENT_CATALOGUE) as ReadonlyArray<EventResource>).find((resource) =>
    (EVENT_CATALOGUE[resource] as ReadonlyArray<string>).includes(type)
  )!
