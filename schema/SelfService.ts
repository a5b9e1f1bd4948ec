// Self-service (DECISIONS §12, our addition): a client manages its own webhook (URL, subscribed
// event types, on/off, signing secret, test event, delivery log and redelivery) and rotates its own
// app_secret, under its own signature and with no permission string: it can only ever act on itself.
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"

import { describeLimit, type LimitedAction } from "../src/domain/actionLimits.js"
import { EVENT_TYPES } from "../src/domain/eventTypes.js"
import { isWebhookUrl } from "../src/domain/webhooks.js"
import * as Area from "./Area.js"
import { ActionLimited, CurrentSecret } from "./Auth.js"
import { ActionLimit, CallerOnly, Envelope, IdPath, ListOf, PageOnly, PlatformTime, Text, Timestamp } from "./Common.js"
import { ErrorEnvelopes } from "./Errors.js"

/** Every event type a webhook may subscribe to: the catalogue of DECISIONS §12. */
export const SubscribableEventType = Schema.Literals(EVENT_TYPES)
export type SubscribableEventType = typeof SubscribableEventType.Type

export const DeliveryStatus = Schema.Literals(["pending", "succeeded", "failed"])

/** An absolute http or https URL. */
export const WebhookUrl = Text(2048, 1).check(
  Schema.makeFilter((s: string) => isWebhookUrl(s) || "must be an absolute http or https URL", {
    toJsonSchema: () => ({ format: "uri" })
  })
)

export const WebhookSettings = Schema.Struct({
  url: Schema.NullOr(Schema.String).annotate({ description: "where events are posted; null when none is set" }),
  events: Schema.Array(SubscribableEventType).annotate({ description: "the event types sent" }),
  enabled: Schema.Boolean.annotate({ description: "whether events are sent" }),
  secret_rotating_until: Schema.NullOr(Timestamp).annotate({
    description: "while a rotation's previous signing secret still signs, until when; else null"
  })
}).annotate({ identifier: "WebhookSettings" })
export type WebhookSettings = typeof WebhookSettings.Type

export const WebhookUpdate = Schema.Struct({
  url: Schema.optionalKey(WebhookUrl),
  events: Schema.optionalKey(Schema.Array(SubscribableEventType)),
  enabled: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "WebhookUpdate" })
export type WebhookUpdate = typeof WebhookUpdate.Type

export const WebhookUpdated = Schema.Struct({
  ...WebhookSettings.fields,
  signing_secret: Schema.optionalKey(Schema.String).annotate({
    description: "whsec_…: only in the answer that first set a URL; keep it, it is not shown again"
  })
}).annotate({ identifier: "WebhookUpdated" })
export type WebhookUpdated = typeof WebhookUpdated.Type

export const SigningSecret = Schema.Struct({
  signing_secret: Schema.String.annotate({ description: "whsec_…, the new webhook signing secret" })
}).annotate({ identifier: "WebhookSigningSecret" })

export const WebhookTestSent = Schema.Struct({
  event_id: Schema.String.annotate({ description: "the webhook.test event (its webhook-id)" }),
  delivery_id: Schema.Int
}).annotate({ identifier: "WebhookTestSent" })

export const DeliveryAttempt = Schema.Struct({
  attempt: Schema.Int,
  attempted_at: Timestamp,
  status_code: Schema.NullOr(Schema.Int).annotate({ description: "the receiver's HTTP status; null when it did not answer" }),
  error: Schema.NullOr(Schema.String).annotate({ description: "why the attempt failed without an answer (or was not sent)" }),
  duration_ms: Schema.Int,
  response: Schema.NullOr(Schema.String).annotate({ description: "the start of the receiver's answer" })
}).annotate({ identifier: "WebhookDeliveryAttempt" })

export const WebhookDelivery = Schema.Struct({
  id: Schema.Int,
  event_id: Schema.String,
  type: Schema.String,
  status: DeliveryStatus,
  created_at: Timestamp,
  next_attempt_at: Schema.NullOr(Timestamp).annotate({ description: "when the next attempt is due (pending only)" }),
  attempts: Schema.Array(DeliveryAttempt).annotate({ description: "every attempt, oldest first" })
}).annotate({ identifier: "WebhookDelivery" })
export type WebhookDelivery = typeof WebhookDelivery.Type

export const DELIVERY_PAGE = { default: 20, max: 100 } as const

export const DeliveryListParams = Schema.Struct({
  ...PageOnly(DELIVERY_PAGE),
  status: Schema.optional(DeliveryStatus),
  since: Schema.optional(PlatformTime.annotate({ description: "only deliveries created from then on (platform time)" }))
})
export type DeliveryListParams = typeof DeliveryListParams.Type

export const RedeliverSince = Schema.Struct({
  since: PlatformTime,
  status: Schema.optionalKey(DeliveryStatus)
}).annotate({ identifier: "WebhookRedeliverSince" })
export type RedeliverSince = typeof RedeliverSince.Type

export const AppSecret = Schema.Struct({
  app_secret: Schema.String.annotate({ description: "the new app_secret (64 hex digits)" })
}).annotate({ identifier: "AppSecret" })

/** What an operation refused to the previous app secret says of it (CurrentSecret). */
const NEEDS_CURRENT_SECRET = "Signed with the previous app_secret during its grace (X-Secret-Deprecated): 403 deprecated_secret; " +
  "sign with the current one."

/** What an operation counted against a self-service limit says of it (ActionLimited). */
const limitText = (action: LimitedAction): string =>
  `At most ${describeLimit(action)} per client (an idempotent replay does not count); over it, 429 rate_limited with Retry-After.`

export class SelfServiceApi extends HttpApiGroup.make("selfService")
  .add(
    HttpApiEndpoint.get("getWebhook", "/webhook", {
      disableCodecs: true,
      success: Envelope(WebhookSettings, "WebhookSettingsEnvelope")
    })
      .annotate(OpenApi.Summary, "Get this client's webhook settings")
      .annotate(OpenApi.Description, "URL, subscribed event types, on/off and the end of a secret rotation. Never the secret.")
  )
  .add(
    HttpApiEndpoint.put("updateWebhook", "/webhook", {
      disableCodecs: true,
      error: ErrorEnvelopes.InvalidInput,
      payload: WebhookUpdate,
      success: Envelope(WebhookUpdated, "WebhookUpdatedEnvelope")
    })
      .middleware(CurrentSecret)
      .annotate(OpenApi.Summary, "Set this client's webhook")
      .annotate(
        OpenApi.Description,
        "Fields left out keep their value. Sending `url` without `enabled` turns the webhook on; `enabled: true` needs a URL. " +
          "`events` replaces the subscribed types (the event catalogue). The answer is the settings; the answer that first " +
          "sets a URL also carries `signing_secret` (whsec_…), once. " + NEEDS_CURRENT_SECRET
      )
  )
  .add(
    HttpApiEndpoint.post("rotateWebhookSecret", "/webhook/rotate-secret", {
      disableCodecs: true,
      success: Envelope(SigningSecret, "WebhookSigningSecretEnvelope")
    })
      .middleware(ActionLimited)
      .middleware(CurrentSecret)
      .annotate(ActionLimit, "webhook_secret_rotate")
      .annotate(OpenApi.Summary, "Rotate the webhook signing secret")
      .annotate(
        OpenApi.Description,
        "A new whsec_ secret. For 7 days deliveries carry two signatures in webhook-signature (the new secret's and the previous one's). " +
          `No body. ${limitText("webhook_secret_rotate")} ${NEEDS_CURRENT_SECRET}`
      )
  )
  .add(
    HttpApiEndpoint.post("testWebhook", "/webhook/test", {
      disableCodecs: true,
      error: ErrorEnvelopes.WebhookOff,
      success: Envelope(WebhookTestSent, "WebhookTestSentEnvelope")
    })
      .middleware(ActionLimited)
      .annotate(ActionLimit, "webhook_test")
      .annotate(OpenApi.Summary, "Send a webhook.test event")
      .annotate(
        OpenApi.Description,
        "Queues a webhook.test event to this client's URL now (even while the webhook is off), attempted once (never retried); " +
          "follow it in GET /webhook/deliveries. 400 webhook_off when no URL is set. No body. " + limitText("webhook_test")
      )
  )
  .add(
    HttpApiEndpoint.get("listDeliveries", "/webhook/deliveries", {
      disableCodecs: true,
      error: ErrorEnvelopes.InvalidInput,
      query: DeliveryListParams.fields,
      success: Envelope(ListOf(WebhookDelivery), "WebhookDeliveryListEnvelope")
    })
      .annotate(OpenApi.Summary, "List this client's webhook deliveries")
      .annotate(
        OpenApi.Description,
        "Newest first, each with its attempts (time, HTTP status or error, duration, the start of the answer). page_size at most 100."
      )
  )
  .add(
    HttpApiEndpoint.post("redeliver", "/webhook/deliveries/:id/redeliver", {
      disableCodecs: true,
      params: IdPath,
      success: Envelope(WebhookDelivery, "WebhookDeliveryEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.WebhookOff]
    })
      .annotate(OpenApi.Summary, "Send a delivery again")
      .annotate(
        OpenApi.Description,
        "The delivery is pending again, due now, with a fresh retry schedule and the same webhook-id. 404 for an unknown id or " +
          "another client's delivery; 400 webhook_off while the webhook is off. No body."
      )
  )
  .add(
    HttpApiEndpoint.post("redeliverSince", "/webhook/redeliver", {
      disableCodecs: true,
      error: [ErrorEnvelopes.InvalidInput, ErrorEnvelopes.WebhookOff],
      payload: RedeliverSince,
      success: Envelope(Schema.Struct({ count: Schema.Int }).annotate({ identifier: "WebhookRedelivered" }), "WebhookRedeliveredEnvelope")
    })
      .middleware(ActionLimited)
      .annotate(ActionLimit, "webhook_redeliver")
      .annotate(OpenApi.Summary, "Send again every delivery since a time")
      .annotate(
        OpenApi.Description,
        "After an outage: every delivery of this client created from `since` on (platform time) in `status` (default failed) is " +
          "pending again, due now; `count` says how many. 400 webhook_off while the webhook is off. " + limitText("webhook_redeliver")
      )
  )
  .add(
    HttpApiEndpoint.post("rotateCredentials", "/credentials/rotate", {
      disableCodecs: true,
      success: Envelope(AppSecret, "AppSecretEnvelope")
    })
      .middleware(ActionLimited)
      .middleware(CurrentSecret)
      .annotate(ActionLimit, "credentials_rotate")
      .annotate(OpenApi.Summary, "Rotate this client's app_secret")
      .annotate(
        OpenApi.Description,
        "A new app_secret, shown only here. The previous one keeps signing for 7 days (answers then carry X-Secret-Deprecated: " +
          `true); a secret older than that stops at once. No body. ${limitText("credentials_rotate")} ${NEEDS_CURRENT_SECRET}`
      )
  )
  .annotate(CallerOnly, true)
  .annotate(
    OpenApi.Description,
    "Self-service: the calling client's own webhook and credentials, under its own signature. No permission string: a client only ever acts on itself."
  )
{}

/** The area: the group, how it is signed, and the names it owns. */
export const SelfServiceArea = Area.signed(SelfServiceApi, { permissions: [], resources: ["webhook_delivery"] })

// The resource names this area's 404s carry (`resources` above), for the domain's `NotFound`.
declare module "../src/domain/errors.js" {
  interface ResourceNames {
    readonly webhook_delivery: true
  }
}
