// The events feed (DECISIONS §9, our addition): the webhook payloads a client may read, oldest
// first, cursor-paged by event id, so a receiver that was down catches up without an operator.
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"

import { EVENT_TYPES } from "../src/domain/eventTypes.js"
import * as Area from "./Area.js"
import { csvOf, documentedAs, Envelope, pageSizeParam, PerRecordPermission } from "./Common.js"
import { ErrorEnvelopes } from "./Errors.js"

/** Every event type of the catalogue (DECISIONS §12): what the outbox records and webhooks may subscribe to. */
export const EventType = Schema.Literals(EVENT_TYPES)
export type EventType = typeof EventType.Type

export const EventId = Schema.String.check(
  Schema.isPattern(/^evt_[0-9a-f]{24}$/u, { message: "must be an event id (evt_ and 24 hex digits)" })
)

/** A webhook payload; the feed lists the same objects. */
export const Event = Schema.Struct({
  id: Schema.String,
  type: EventType,
  created_at: Schema.String.annotate({ description: "YYYY-MM-DDTHH:MM:SS (platform time zone)" }),
  data: Schema.Record(Schema.String, Schema.Unknown)
}).annotate({ identifier: "Event" })
export type Event = typeof Event.Type

export const EVENTS_PAGE = { default: 100, max: 1000 } as const

/** `types` as a comma list (or repeated keys) of event types. */
const EventTypes = documentedAs(csvOf(EventType), {
  type: "string",
  description: `comma-separated event types: ${EventType.literals.join(", ")}`
})

export const EventsParams = Schema.Struct({
  after: Schema.optional(
    EventId.annotate({ description: "continue after this event id (exclusive); omit to start at the oldest" })
  ),
  types: Schema.optional(EventTypes),
  page_size: Schema.optional(pageSizeParam(EVENTS_PAGE))
})
export type EventsParams = typeof EventsParams.Type

export const EventsPage = Schema.Struct({
  list: Schema.Array(Event),
  /** The id to pass as `after` next: the last listed, or the `after` sent when nothing is new. */
  next_after: Schema.NullOr(Schema.String)
}).annotate({ identifier: "EventsPage" })
export type EventsPage = typeof EventsPage.Type

export class EventsApi extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/events", {
      disableCodecs: true,
      error: ErrorEnvelopes.InvalidInput,
      query: EventsParams.fields,
      success: Envelope(EventsPage, "EventsPageEnvelope")
    })
      // No permission string of its own: each event is shown only to clients holding its
      // resource's read permission, so the group goes without the Permitted middleware and the
      // operation never answers 403 (Api.ts).
      .annotate(PerRecordPermission, true)
      .annotate(OpenApi.Summary, "List events (the webhook payloads), oldest first")
      .annotate(
        OpenApi.Description,
        "The events of the last 30 days that this client may read (the read permission of each event's resource, whether or not it subscribed to webhooks), in the order they committed. Pass data.next_after as `after` to continue; an empty list means nothing newer yet. An unknown or pruned `after` is a 400."
      )
  )
  .annotate(
    OpenApi.Description,
    "Events, as webhooks deliver them (Standard Webhooks; webhook-id is the event id). A receiver that was down catches up here from the last id it processed."
  )
{}

/** The area: the group, how it is signed, and the names it owns. */
export const EventsArea = Area.signed(EventsApi, { permissions: [], resources: [] })
