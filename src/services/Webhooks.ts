// Webhook delivery (DECISIONS §9): one attempt of a claimed delivery (checks, payload, signatures,
// the HTTP call with no transaction open, then the recorded decision), and the operator's
// recovery: listing deliveries with their attempts, redelivery, and a test event.
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Random from "effect/Random"

import type { CallerInfo } from "../../schema/Auth.js"
import type { DeliveryListParams, RedeliverSince, WebhookDelivery } from "../../schema/SelfService.js"
import { DELIVERY_PAGE } from "../../schema/SelfService.js"
import { placeOf, type SealedColumn, SecretBox } from "../auth/SecretBox.js"
import { AppConfig } from "../Config.js"
import { InvalidInput, NotFound, WebhookOff } from "../domain/errors.js"
import { WEBHOOK_TEST_EVENT } from "../domain/eventTypes.js"
import { formatIso, formatTimestamp, parseTimestamp } from "../domain/time.js"
import { decide, type Decision, payloadFor, refusal, retryScheduleOf, signingSecrets } from "../domain/webhooks.js"
import { type ClientRow, ClientsRepo } from "../repos/ClientsRepo.js"
import { newEventId } from "../repos/OutboxRepo.js"
import { type AttemptRecord, type ClaimedDelivery, type Delivery, type DeliveryStatus, WebhooksRepo } from "../repos/WebhooksRepo.js"
import { WebhookSender } from "../webhooks/sender.js"
import { UnknownClient } from "./Clients.js"
import { method } from "./common.js"

/** A delivery the operator asks to send again while a daemon attempts it. */
export class DeliveryInFlight extends Data.TaggedError("DeliveryInFlight")<{ readonly id: number; readonly message: string }> {}

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

    // Opening a sealed secret costs a decryption; deliveries to one client reuse it. Held by place
    // and value: a value met at another place is opened there (and refused, its binding is another).
    const opened = new Map<string, string>()
    const open = (sealed: string, column: SealedColumn, appKey: string): string => {
      const held = `${column}\n${appKey}\n${sealed}`
      let plain = opened.get(held)
      if (plain === undefined) {
        if (opened.size > 1000) opened.clear()
        plain = box.open(sealed, placeOf(column, appKey))
        opened.set(held, plain)
      }
      return plain
    }

    const secretsOf = (
      client: {
        readonly app_key: string
        readonly webhook_secret_enc: string
        readonly webhook_prev_secret_enc: string | null
        readonly webhook_prev_expires_at: Date | null
      },
      nowMs: number
    ) =>
      signingSecrets(
        open(client.webhook_secret_enc, "clients.webhook_secret_enc", client.app_key),
        client.webhook_prev_secret_enc === null
          ? null
          : open(client.webhook_prev_secret_enc, "clients.webhook_prev_secret_enc", client.app_key),
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
          retryScheduleOf(d.type, config.webhookRetrySchedule),
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
          onNone: () => Effect.fail(UnknownClient.of(appKey)),
          onSome: Effect.succeed
        })
      )

    /** The client's webhook is off, or has no URL (the operator's command line words it in its own terms). */
    const webhookOff = (client: ClientRow) =>
      client.webhook_url === null
        ? new WebhookOff({ message: "no webhook URL is set (PUT /webhook)" })
        : new WebhookOff({ message: "the webhook is off (PUT /webhook with enabled: true)" })

    const iso = (date: Date | null) => (date === null ? null : formatIso(date, config.timeZone))

    /** Deliveries, newest first, with their attempts (time, status or error, next attempt). */
    const deliveries = Effect.fnUntraced(function*(
      filter: { readonly appKey?: string | undefined; readonly status?: DeliveryStatus | undefined; readonly limit: number }
    ) {
      const clientId = filter.appKey === undefined ? null : (yield* clientOf(filter.appKey)).id
      const page = yield* repo.list({ client_id: clientId, status: filter.status ?? null, since: null }, {
        limit: filter.limit,
        offset: 0
      })
      return page.deliveries.map((d) => ({
        ...d,
        next_attempt_at: iso(d.next_attempt_at),
        created_at: iso(d.created_at),
        updated_at: iso(d.updated_at),
        attempt_history: d.attempt_history.map((a) => ({
          ...a,
          attempted_at: iso(a.attempted_at),
          next_attempt_at: iso(a.next_attempt_at)
        }))
      }))
    })

    /** Sends one delivery again (whatever its state), with a fresh retry schedule. */
    const redeliver = Effect.fnUntraced(function*(id: number) {
      const row = yield* repo.redeliver(id)
      if (Option.isNone(row)) return yield* NotFound.of("webhook_delivery", id)
      if (row.value.in_flight) {
        return yield* new DeliveryInFlight({ id, message: `delivery ${id} is being attempted right now; try again in a moment` })
      }
      return { redelivered: [id] }
    })

    const instantOf = (text: string): Date | undefined => {
      try {
        return parseTimestamp(text, config.timeZone)
      } catch {
        return undefined
      }
    }

    /** Sends every failed delivery of the client from `since` on (after an outage). */
    const redeliverSince = Effect.fnUntraced(function*(appKey: string, since: string) {
      const client = yield* clientOf(appKey)
      const instant = instantOf(since)
      if (instant === undefined) return yield* InvalidInput.at("since", `must be YYYY-MM-DDTHH:MM:SS (platform time), got ${since}`)
      if (!client.webhook_enabled || client.webhook_url === null) return yield* webhookOff(client)
      return { app_key: appKey, since: formatIso(instant, config.timeZone), redelivered: yield* repo.redeliverSince(client.id, instant) }
    })

    /** Sends a `webhook.test` event to the client's URL now (even while its webhook is off). */
    const test = Effect.fnUntraced(function*(appKey: string) {
      const client = yield* clientOf(appKey)
      if (client.webhook_url === null || client.webhook_secret_enc === null) return yield* webhookOff(client)
      const nowMs = yield* Clock.currentTimeMillis
      const id = newEventId()
      const sentAt = formatIso(new Date(nowMs), config.timeZone)
      // The same keys as POST /webhook/test's (a type's payload has one set of keys).
      const payload = {
        id,
        type: "webhook.test",
        created_at: sentAt,
        data: { app_key: appKey, message: "a test event sent by the platform's operator", sent_at: sentAt }
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

    // Self-service (DECISIONS §12): the calling client's own deliveries only. Its app_key exists
    // (it has just signed the request), so an unknown one is a defect, not an answer.
    const own = (caller: CallerInfo) => Effect.catchTag(clientOf(caller.appKey), "UnknownClient", Effect.die)

    const at = (date: Date) => formatTimestamp(date, config.timeZone)

    const shown = (d: Delivery): WebhookDelivery => ({
      id: d.id,
      event_id: d.event_id,
      type: d.type,
      status: d.status,
      created_at: at(d.created_at),
      next_attempt_at: d.next_attempt_at === null ? null : at(d.next_attempt_at),
      attempts: d.attempt_history.map((a) => ({
        attempt: a.attempt,
        attempted_at: at(a.attempted_at),
        status_code: a.status_code,
        error: a.error,
        duration_ms: a.duration_ms,
        response: a.response
      }))
    })

    /** GET /webhook/deliveries: the caller's deliveries, newest first, with their attempts. */
    const ownDeliveries = method("Webhooks.ownDeliveries")(function*(caller: CallerInfo, params: DeliveryListParams) {
      const pageSize = params.page_size ?? DELIVERY_PAGE.default
      const since = params.since === undefined ? null : instantOf(params.since)
      if (since === undefined) {
        return yield* InvalidInput.of([{ path: "since", message: "must be a real time YYYY-MM-DD HH:MM:SS" }])
      }
      const page = yield* repo.list(
        { client_id: caller.id, status: params.status ?? null, since },
        { limit: pageSize, offset: ((params.page ?? 1) - 1) * pageSize }
      )
      // Not a sync list (DECISIONS §12 fixes its parameters): paged by `page` only.
      return { list: page.deliveries.map(shown), total: page.total, next_cursor: null }
    })

    /** POST /webhook/deliveries/{id}/redeliver: that delivery, pending again; 404 for another client's. */
    const redeliverOwn = method("Webhooks.redeliverOwn")(function*(caller: CallerInfo, id: number) {
      const client = yield* own(caller)
      if (Option.isNone(yield* repo.findOwn(client.id, id))) return yield* NotFound.of("webhook_delivery", id)
      if (!client.webhook_enabled || client.webhook_url === null) return yield* webhookOff(client)
      // One being attempted right now stays with its attempt (it is pending already).
      yield* repo.redeliver(id, client.id)
      const delivery = yield* repo.findOwn(client.id, id)
      if (Option.isNone(delivery)) return yield* NotFound.of("webhook_delivery", id)
      return shown(delivery.value)
    })

    /** POST /webhook/redeliver: every delivery of the caller in that status since then, pending again. */
    const redeliverOwnSince = method("Webhooks.redeliverOwnSince")(function*(caller: CallerInfo, body: RedeliverSince) {
      const client = yield* own(caller)
      const since = instantOf(body.since)
      if (since === undefined) return yield* InvalidInput.of([{ path: "since", message: "must be a real time YYYY-MM-DD HH:MM:SS" }])
      if (!client.webhook_enabled || client.webhook_url === null) return yield* webhookOff(client)
      return { count: (yield* repo.redeliverSince(client.id, since, body.status ?? "failed")).length }
    })

    /** POST /webhook/test: a webhook.test event for the caller alone, delivered by the daemon as any other. */
    const sendTest = method("Webhooks.sendTest")(function*(caller: CallerInfo) {
      const client = yield* own(caller)
      if (client.webhook_url === null) return yield* webhookOff(client)
      const nowMs = yield* Clock.currentTimeMillis
      const eventId = newEventId()
      const deliveryId = yield* repo.addressed(client.id, {
        event_id: eventId,
        type: WEBHOOK_TEST_EVENT,
        data: {
          app_key: client.app_key,
          message: "a test event sent at the client's request",
          sent_at: formatIso(new Date(nowMs), config.timeZone)
        }
      })
      return { event_id: eventId, delivery_id: deliveryId }
    })

    return {
      cycle,
      attempt,
      nextDueInMs,
      release,
      deliveries,
      redeliver,
      redeliverSince,
      test,
      ownDeliveries,
      redeliverOwn,
      redeliverOwnSince,
      sendTest
    } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Webhooks, Webhooks.make)
  static readonly layer = Webhooks.layerWithoutDependencies.pipe(
    Layer.provide([WebhooksRepo.layer, ClientsRepo.layer, WebhookSender.layer])
  )
}
