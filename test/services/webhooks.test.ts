// The webhook service's attempt decisions (DECISIONS §9): what one attempt records for the next
// turn — success, the retry schedule with ±20% jitter, Retry-After on 429/503, 410 Gone, the end
// of the schedule, and refusals without a call — with a scripted fake receiver instead of HTTP,
// makeTestLayer for the repositories the attempt must not touch, Random fixed and the TestClock.
// The recording and claiming of those decisions in PostgreSQL: test/webhooks.test.ts.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Random from "effect/Random"
import * as TestClock from "effect/testing/TestClock"

import { makeSecretBox, placeOf, SecretBox } from "../../src/auth/SecretBox.js"
import { singleKey } from "../../src/auth/secretKeys.js"
import { appConfigWith } from "../../src/Config.js"
import { ClientsRepo } from "../../src/repos/ClientsRepo.js"
import { type ClaimedDelivery, WebhooksRepo } from "../../src/repos/WebhooksRepo.js"
import { Webhooks } from "../../src/services/Webhooks.js"
import { makeTestLayer } from "../fakes/makeTestLayer.js"
import { FakeWebhookSender, type ScriptedAnswer, WebhookReceiver } from "../fakes/webhookSender.js"

const box = makeSecretBox([singleKey("ab".repeat(32))])
const SCHEDULE = [5_000, 300_000, 1_800_000]
// 2026-11-24 12:00 in Asia/Shanghai.
const START = Date.UTC(2026, 10, 24, 4, 0, 0)
const SECRET = "whsec_" + Buffer.from("current-secret-0123456789").toString("base64")
const PREVIOUS = "whsec_" + Buffer.from("previous-secret-012345678").toString("base64")

const TestLayer = () =>
  Webhooks.layerWithoutDependencies.pipe(
    // An attempt reads and writes nothing: any repository call dies, naming itself.
    Layer.provideMerge(Layer.mergeAll(makeTestLayer(WebhooksRepo)({}), makeTestLayer(ClientsRepo)({}))),
    Layer.provideMerge(FakeWebhookSender),
    Layer.provideMerge(Layer.succeed(SecretBox, box)),
    Layer.provideMerge(appConfigWith({ webhookRetrySchedule: SCHEDULE })),
    Layer.provideMerge(Layer.effectDiscard(TestClock.setTime(START)))
  )

const test = <A, E>(name: string, body: () => Effect.Effect<A, E, Layer.Success<ReturnType<typeof TestLayer>>>) =>
  it.effect(name, () => Effect.provide(body(), TestLayer()))

const delivery = (over: Partial<ClaimedDelivery> = {}): ClaimedDelivery => ({
  recorded: false,
  id: 41,
  attempt: 1,
  schedule_step: 0,
  event_id: "evt_0123456789abcdef01234567",
  type: "guest.created",
  permission: "open:guest:read",
  data: { guest_id: 7, name: "张晓雯" },
  created_at: "2026-11-24T11:59:00",
  client_id: 3,
  app_key: "ak_receiver",
  status: "active",
  permissions: ["open:guest:read"],
  masking: false,
  webhook_url: "https://receiver.example/hooks",
  webhook_events: ["guest.created"],
  webhook_enabled: true,
  webhook_secret_enc: box.seal(SECRET, placeOf("clients.webhook_secret_enc", "ak_receiver")),
  webhook_prev_secret_enc: null,
  webhook_prev_expires_at: null,
  ...over
})

/** A Random whose every double is `value` (the jitter a test wants). */
const fixedRandom = (value: number): Random.Random => ({
  nextDoubleUnsafe: () => value,
  nextIntUnsafe: () => Math.floor(value * Number.MAX_SAFE_INTEGER)
})

/** One attempt with the receiver's next answer scripted, and Random.next fixed. */
const attemptWith = (answer: ScriptedAnswer, random = 0.5, over: Partial<ClaimedDelivery> = {}) =>
  Effect.gen(function*() {
    ;(yield* WebhookReceiver).answer(answer)
    return yield* Effect.provideService((yield* Webhooks).attempt(delivery(over), "worker-1"), Random.Random, fixedRandom(random))
  })

describe("webhook attempts over a fake receiver", () => {
  test("a 2xx answer succeeds: no next attempt; the event is posted once, signed with the current secret", () =>
    Effect.gen(function*() {
      const { outcome, record } = yield* attemptWith({ status: 204, body: "ok" })
      expect(outcome).toBe("Succeeded")
      expect(record).toMatchObject({
        id: 41,
        worker: "worker-1",
        attempt: 1,
        status: "succeeded",
        step: 0,
        delay_ms: null,
        attempted_at_ms: START,
        status_code: 204,
        error: null,
        response: "ok",
        turn_off: false
      })
      const [request, ...more] = (yield* WebhookReceiver).requests
      expect(more).toEqual([])
      expect(request).toMatchObject({ url: "https://receiver.example/hooks", id: "evt_0123456789abcdef01234567", secrets: [SECRET] })
      expect(JSON.parse(request!.body)).toEqual({
        id: "evt_0123456789abcdef01234567",
        type: "guest.created",
        created_at: "2026-11-24T11:59:00",
        data: { guest_id: 7, name: "张晓雯" }
      })
    }))

  test("a failure is retried after the schedule's next wait with ±20% jitter: 0.8× at the lowest random, 1.2× at the highest", () =>
    Effect.gen(function*() {
      const low = yield* attemptWith({ status: 500 }, 0)
      expect(low.record).toMatchObject({ status: "pending", step: 1, delay_ms: 4_000, status_code: 500 })
      expect(low.outcome).toBe("Retry")
      const high = yield* attemptWith({ status: 500 }, 0.999_999)
      expect(high.record).toMatchObject({ status: "pending", step: 1, delay_ms: 6_000 })
    }))

  test("jittered waits stay within ±20% of the step's wait for any random draw", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 50; i++) {
        const random = i / 50
        const { record } = yield* attemptWith({ status: 502 }, random, { schedule_step: 1 })
        expect(record.step).toBe(2)
        expect(record.delay_ms).toBeGreaterThanOrEqual(0.8 * SCHEDULE[1]!)
        expect(record.delay_ms).toBeLessThanOrEqual(1.2 * SCHEDULE[1]!)
        expect(record.delay_ms).toBe(Math.round(SCHEDULE[1]! * (0.8 + 0.4 * random)))
      }
    }))

  test("no answer (refused, timed out) is retried like an error status, with the error recorded and no status code", () =>
    Effect.gen(function*() {
      const { outcome, record } = yield* attemptWith({ noAnswer: "connection refused" }, 0.5)
      expect(outcome).toBe("Retry")
      expect(record).toMatchObject({
        status: "pending",
        step: 1,
        delay_ms: 5_000,
        status_code: null,
        error: "connection refused",
        response: null
      })
    }))

  test("429 and 503 with Retry-After in seconds wait exactly that long, no jitter; the step still advances", () =>
    Effect.gen(function*() {
      const tooMany = yield* attemptWith({ status: 429, headers: { "Retry-After": "120" } }, 0)
      expect(tooMany.record).toMatchObject({ status: "pending", step: 1, delay_ms: 120_000, status_code: 429 })
      const unavailable = yield* attemptWith({ status: 503, headers: { "retry-after": "7" } }, 0.9, { schedule_step: 2 })
      expect(unavailable.record).toMatchObject({ status: "pending", step: 3, delay_ms: 7_000 })
    }))

  test("Retry-After as an HTTP date waits until then by the clock; a pause beyond 24 hours is capped at 24 hours", () =>
    Effect.gen(function*() {
      const at = new Date(START + 90_000).toUTCString()
      expect((yield* attemptWith({ status: 503, headers: { "retry-after": at } })).record.delay_ms).toBe(90_000)
      expect((yield* attemptWith({ status: 429, headers: { "retry-after": "999999" } })).record.delay_ms).toBe(24 * 3_600_000)
    }))

  test("Retry-After on another status, or unreadable, is ignored: the jittered schedule applies", () =>
    Effect.gen(function*() {
      expect((yield* attemptWith({ status: 500, headers: { "retry-after": "120" } }, 0)).record.delay_ms).toBe(4_000)
      expect((yield* attemptWith({ status: 429, headers: { "retry-after": "soon" } }, 0)).record.delay_ms).toBe(4_000)
    }))

  test("410 Gone fails the delivery and turns the client's webhook off, whatever the schedule has left", () =>
    Effect.gen(function*() {
      const { outcome, record } = yield* attemptWith({ status: 410 })
      expect(outcome).toBe("Gone")
      expect(record).toMatchObject({
        status: "failed",
        step: 0,
        delay_ms: null,
        status_code: 410,
        error: "410 Gone: the client's webhook was turned off",
        turn_off: true
      })
    }))

  test("a failure with the schedule used up fails the delivery: no next attempt, the webhook stays on", () =>
    Effect.gen(function*() {
      const { outcome, record } = yield* attemptWith({ status: 500 }, 0.5, { schedule_step: SCHEDULE.length, attempt: 4 })
      expect(outcome).toBe("Failed")
      expect(record).toMatchObject({
        status: "failed",
        attempt: 4,
        step: SCHEDULE.length,
        delay_ms: null,
        status_code: 500,
        turn_off: false
      })
    }))

  test("a client that may no longer receive the event is failed without a request, naming why", () =>
    Effect.gen(function*() {
      const webhooks = yield* Webhooks
      const cases: Array<[Partial<ClaimedDelivery>, string]> = [
        [{ status: "disabled" }, "not sent: the client is disabled"],
        [{ webhook_enabled: false }, "not sent: the client's webhook is off"],
        [{ webhook_events: ["guest.updated"] }, "not sent: the client no longer subscribes to guest.created"],
        [{ permissions: [] }, "not sent: the client no longer holds open:guest:read"],
        [{ webhook_secret_enc: null }, "not sent: the client has no webhook secret"]
      ]
      for (const [over, error] of cases) {
        const { outcome, record } = yield* webhooks.attempt(delivery(over), "worker-1")
        expect(outcome).toBe("Refused")
        expect(record).toMatchObject({ status: "failed", delay_ms: null, status_code: null, error, turn_off: false })
      }
      expect((yield* WebhookReceiver).requests).toEqual([])
    }))

  test("during a secret rotation both secrets sign until the previous one expires, then only the current one", () =>
    Effect.gen(function*() {
      const rotating = {
        webhook_prev_secret_enc: box.seal(PREVIOUS, placeOf("clients.webhook_prev_secret_enc", "ak_receiver")),
        webhook_prev_expires_at: new Date(START + 60_000)
      }
      yield* attemptWith({ status: 200 }, 0.5, rotating)
      yield* TestClock.adjust("1 minute")
      yield* attemptWith({ status: 200 }, 0.5, rotating)
      expect((yield* WebhookReceiver).requests.map((r) => [r.sentAt, r.secrets])).toEqual([[START, [SECRET, PREVIOUS]], [START + 60_000, [
        SECRET
      ]]])
    }))

  test("a client configured for masking receives the event's phone number masked", () =>
    Effect.gen(function*() {
      yield* attemptWith({ status: 200 }, 0.5, { masking: true, data: { guest_id: 7, name: "张晓雯", phone: "13800138000" } })
      const body = JSON.parse((yield* WebhookReceiver).requests[0]!.body)
      expect(body.data.guest_id).toBe(7)
      expect(body.data.phone).not.toBe("13800138000")
    }))
})
