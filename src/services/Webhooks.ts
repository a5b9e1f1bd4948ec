// Webhook delivery (DECISIONS §9): one attempt of a claimed delivery (checks, payload, signatures,
// the HTTP call with no transaction open, then the recorded decision), and the operator's
// recovery: listing deliveries with their attempts, redelivery, and a test event.
import { randomBytes } from "node:crypto"

import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Random from "effect/Random"

import { SecretBox } from "../auth/SecretBox.js"
import { AppConfig } from "../Config.js"
import { formatIso, parseTimestamp } from "../domain/time.js"
import { decide, type Decision, payloadFor, refusal, signingSecrets } from "../domain/webhooks.js"
import { ClientsRepo } from "../repos/ClientsRepo.js"
import { type AttemptRecord, type ClaimedDelivery, type DeliveryStatus, WebhooksRepo } from "../repos/WebhooksRepo.js"
import { WebhookSender } from "../webhooks/sender.js"

export class WebhookCommandError extends Data.TaggedError("WebhookCommandError")<{ readonly message: string }> {}

/** What one attempt came to (for the daemon's log and the tests). */
export type AttemptOutcome = Decision["_tag"] | "Refused"

export class Webhooks extends Context.Service<Webhooks>()("Webhooks/Service", {
  make: Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const sender = yield* WebhookSender
    const clients = yield* ClientsRepo
    const box = yield* SecretBox
    const config = yield* AppConfig

    /**
     * One turn of a daemon: records its finished attempts, then claims up to `free` due
     * deliveries for the worker, within the per-client bound, in one round trip.
     */
    const cycle = (records: ReadonlyArray<AttemptRecord>, worker: string, free: number) =>
      repo.cycle(records, worker, free, config.webhookClientConcurrency, config.webhookLeaseSeconds * 1000)

    // Opening a sealed secret costs a decryption; deliveries to one client reuse it.
    const opened = new Map<string, string>()
    const open = (sealed: string): string => {
      let plain = opened.get(sealed)
      if (plain === undefined) {
        if (opened.size > 1000) opened.clear()
        plain = box.open(sealed)
        opened.set(sealed, plain)
      }
      return plain
    }

    const secretsOf = (
      client: {
        readonly webhook_secret_enc: string
        readonly webhook_prev_secret_enc: string | null
        readonly webhook_prev_expires_at: Date | null
      },
      nowMs: number
    ) =>
      signingSecrets(
        open(client.webhook_secret_enc),
        client.webhook_prev_secret_enc === null ? null : open(client.webhook_prev_secret_enc),
        client.webhook_prev_expires_at,
        nowMs
      )

    /**
     * One attempt of a claimed delivery, and the record of what it decided (to be written by the
     * next `cycle`): refused without a call when the client may no longer receive the event;
     * otherwise sent, with no transaction open.
     */
    const attempt: (
      d: ClaimedDelivery,
      worker: string
    ) => Effect.Effect<{ readonly record: AttemptRecord; readonly outcome: AttemptOutcome }> = Effect.fn("Webhooks.attempt")(
      function*(d: ClaimedDelivery, worker: string) {
        const held = { id: d.id, worker, attempt: d.attempt, client_id: d.client_id }
        const nowMs = yield* Clock.currentTimeMillis
        const secretEnc = d.webhook_secret_enc
        const refused = secretEnc === null ? "the client has no webhook secret" : refusal(d, d)
        if (refused !== undefined || secretEnc === null) {
          const record: AttemptRecord = {
            ...held,
            status: "failed",
            step: d.schedule_step,
            delay_ms: null,
            attempted_at_ms: nowMs,
            duration_ms: 0,
            status_code: null,
            error: `not sent: ${refused}`,
            response: null,
            turn_off: false
          }
          return { record, outcome: "Refused" as const }
        }
        const payload = payloadFor({ id: d.event_id, type: d.type, created_at: d.created_at, data: d.data }, d.masking)
        const sent = yield* sender.send({
          url: d.webhook_url ?? "",
          id: d.event_id,
          body: JSON.stringify(payload),
          secrets: secretsOf({ ...d, webhook_secret_enc: secretEnc }, nowMs),
          timeoutMs: config.webhookTimeoutMs,
          responseLimitBytes: config.webhookResponseLimitBytes
        })
        const decision = decide(
          sent.result,
          d.schedule_step,
          config.webhookRetrySchedule,
          yield* Clock.currentTimeMillis,
          yield* Random.next
        )
        const record: AttemptRecord = {
          ...held,
          status: decision._tag === "Succeeded" ? "succeeded" : decision._tag === "Retry" ? "pending" : "failed",
          step: decision._tag === "Retry" ? decision.step : d.schedule_step,
          delay_ms: decision._tag === "Retry" ? decision.delayMs : null,
          attempted_at_ms: sent.startedAt,
          duration_ms: sent.durationMs,
          status_code: sent.result._tag === "Answered" ? sent.result.status : null,
          error: sent.result._tag === "NoAnswer"
            ? sent.result.error
            : decision._tag === "Gone"
            ? "410 Gone: the client's webhook was turned off"
            : null,
          response: sent.response,
          turn_off: decision._tag === "Gone"
        }
        return { record, outcome: decision._tag }
      }
    )

    /** Milliseconds until the next pending delivery comes due (none when nothing waits). */
    const nextDueInMs = repo.nextDueInMs

    /** Gives a claimed delivery back, due at once (shutdown mid-attempt). */
    const release = (d: ClaimedDelivery, worker: string) => repo.release(d.id, worker, d.attempt)

    const clientOf = (appKey: string) =>
      Effect.flatMap(
        clients.findByAppKey(appKey),
        Option.match({
          onNone: () => Effect.fail(new WebhookCommandError({ message: `unknown app_key ${appKey}` })),
          onSome: Effect.succeed
        })
      )

    /** Deliveries, newest first, with their attempts (time, status or error, next attempt). */
    const deliveries = (
      filter: { readonly appKey?: string | undefined; readonly status?: DeliveryStatus | undefined; readonly limit: number }
    ) =>
      Effect.gen(function*() {
        const clientId = filter.appKey === undefined ? null : (yield* clientOf(filter.appKey)).id
        return yield* repo.list({ clientId, status: filter.status ?? null, limit: filter.limit })
      })

    /** Sends one delivery again (whatever its state), with a fresh retry schedule. */
    const redeliver = (id: number) =>
      Effect.gen(function*() {
        const row = yield* repo.redeliver(id)
        if (Option.isNone(row)) return yield* new WebhookCommandError({ message: `unknown delivery ${id}` })
        if (row.value.in_flight) {
          return yield* new WebhookCommandError({ message: `delivery ${id} is being attempted right now; try again in a moment` })
        }
        return { redelivered: [id] }
      })

    /** Sends every failed delivery of the client whose event is from `since` on (after an outage). */
    const redeliverSince = (appKey: string, since: string) =>
      Effect.gen(function*() {
        const client = yield* clientOf(appKey)
        let instant: Date
        try {
          instant = parseTimestamp(since, config.timeZone)
        } catch {
          return yield* new WebhookCommandError({ message: `--since must be YYYY-MM-DDTHH:MM:SS (platform time), got ${since}` })
        }
        if (!client.webhook_enabled || client.webhook_url === null) {
          return yield* new WebhookCommandError({
            message: `the webhook of ${appKey} is off; turn it on first (clients webhook ${appKey} --url URL --events ...)`
          })
        }
        return { app_key: appKey, since: formatIso(instant, config.timeZone), redelivered: yield* repo.redeliverSince(client.id, instant) }
      })

    /** Sends a `webhook.test` event to the client's URL now (even while its webhook is off). */
    const test = (appKey: string) =>
      Effect.gen(function*() {
        const client = yield* clientOf(appKey)
        if (client.webhook_url === null || client.webhook_secret_enc === null) {
          return yield* new WebhookCommandError({
            message: `${appKey} has no webhook URL (clients webhook ${appKey} --url URL --events ...)`
          })
        }
        const nowMs = yield* Clock.currentTimeMillis
        const id = "evt_" + randomBytes(12).toString("hex")
        const payload = {
          id,
          type: "webhook.test",
          created_at: formatIso(new Date(nowMs), config.timeZone),
          data: { app_key: appKey, message: "a test event sent by the platform's operator" }
        }
        const sent = yield* sender.send({
          url: client.webhook_url,
          id,
          body: JSON.stringify(payload),
          secrets: secretsOf({ ...client, webhook_secret_enc: client.webhook_secret_enc }, nowMs),
          timeoutMs: config.webhookTimeoutMs,
          responseLimitBytes: config.webhookResponseLimitBytes
        })
        const answered = sent.result._tag === "Answered" ? sent.result : undefined
        return {
          app_key: appKey,
          url: client.webhook_url,
          webhook_enabled: client.webhook_enabled,
          webhook_id: id,
          delivered: answered !== undefined && answered.status >= 200 && answered.status < 300,
          status: answered?.status ?? null,
          error: sent.result._tag === "NoAnswer" ? sent.result.error : null,
          duration_ms: sent.durationMs,
          response: sent.response
        }
      })

    return { cycle, attempt, nextDueInMs, release, deliveries, redeliver, redeliverSince, test } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Webhooks, Webhooks.make)
  static readonly layer = Webhooks.layerWithoutDependencies.pipe(
    Layer.provide([WebhooksRepo.layer, ClientsRepo.layer, WebhookSender.layer])
  )
}
