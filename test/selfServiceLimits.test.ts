// What a deprecated secret may do and the self-service limits (DECISIONS §13), end to end over HTTP
// with two API instances on one database and the test clock: a request signed with the previous
// secret in its grace reads and writes as before but may not rotate credentials, set the webhook or
// rotate its secret (403 deprecated_secret); a rotation retried under its Idempotency-Key with the
// secret its lost answer made deprecated still gets that answer; each limited action is refused
// past its limit with 429 rate_limited and Retry-After, on every instance, and an idempotent replay
// does not count.
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"

import { makeOpenApiClient } from "../src/client/Client.js"
import type { LimitedAction } from "../src/domain/actionLimits.js"
import { fakeCardParser, sharedTestDatabase, signedClient, TestServer, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const CONFIG = { rateLimitBurst: 1_000_000 }
const shared = sharedTestDatabase(CONFIG)

interface Credentials {
  readonly appKey: string
  readonly appSecret: string
}

/** What a signed call answered, as a test compares it. */
interface Answer {
  readonly status: number
  readonly error: string | undefined
  readonly data: Record<string, unknown>
  readonly message: string
  readonly retryAfter: string | null
  readonly replayed: boolean
  readonly deprecated: boolean
}

const call = (
  baseUrl: string,
  credentials: Credentials,
  method: string,
  path: string,
  options: { readonly body?: unknown; readonly key?: string } = {}
) =>
  Effect.map(
    rawRequest(baseUrl, {
      method,
      path: `/api/open/v1${path}`,
      credentials,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      ...(options.key !== undefined ? { headers: { "idempotency-key": options.key } } : {})
    }),
    (r): Answer => ({
      status: r.status,
      error: r.json.data?.error,
      data: r.json.data,
      message: r.json.message,
      retryAfter: r.headers.get("retry-after"),
      replayed: r.headers.get("idempotent-replayed") === "true",
      deprecated: r.headers.get("x-secret-deprecated") === "true"
    })
  )

const WEBHOOK_URL = "http://127.0.0.1:9/in"

/** The four limited calls, each as a client makes it (a rotation of credentials moves to the new secret). */
const LIMITED: ReadonlyArray<
  { readonly action: LimitedAction; readonly limit: number; readonly method: string; readonly path: string; readonly body?: unknown }
> = [
  { action: "credentials_rotate", limit: 1, method: "POST", path: "/credentials/rotate" },
  { action: "webhook_secret_rotate", limit: 1, method: "POST", path: "/webhook/rotate-secret" },
  { action: "webhook_test", limit: 10, method: "POST", path: "/webhook/test" },
  { action: "webhook_redeliver", limit: 1, method: "POST", path: "/webhook/redeliver", body: { since: "2020-01-01 00:00:00" } }
]

/** A client with its webhook set (self-service needs no permission), and its credentials as they move. */
const webhookClient = Effect.gen(function*() {
  const { baseUrl, credentials } = yield* signedClient([])
  const set = yield* call(baseUrl, credentials, "PUT", "/webhook", { body: { url: WEBHOOK_URL } })
  expect(set.status).toBe(200)
  let current: Credentials = credentials
  return {
    baseUrl,
    original: credentials,
    current: () => current,
    /** One call of `limited` on `baseUrl` with the current secret; a rotation's new secret becomes current. */
    take: (limited: (typeof LIMITED)[number], on: string = baseUrl, key?: string) =>
      Effect.map(
        call(on, current, limited.method, limited.path, {
          ...(limited.body !== undefined ? { body: limited.body } : {}),
          ...(key !== undefined ? { key } : {})
        }),
        (answer) => {
          if (answer.status === 200 && limited.action === "credentials_rotate") {
            current = { appKey: current.appKey, appSecret: answer.data.app_secret as string }
          }
          return answer
        }
      )
  }
})

/** The 429 of a self-service limit: rate_limited, Retry-After within the minute, the same in data.retry_after. */
const expectLimited = (answer: Answer, what: string) => {
  expect([answer.status, answer.error], what).toEqual([429, "rate_limited"])
  const seconds = Number(answer.retryAfter)
  expect(seconds, what).toBeGreaterThanOrEqual(1)
  expect(seconds, what).toBeLessThanOrEqual(60)
  expect(answer.data.retry_after, what).toBe(seconds)
  return seconds
}

layer(testServerLayer(CONFIG, fakeCardParser, shared.database))("deprecated secrets and self-service limits", (it) => {
  const secondInstance = Effect.map(Layer.build(Layer.fresh(shared.anotherInstance)), (ctx) => Context.get(ctx, TestServer).baseUrl)

  it.effect("signed with the previous secret in its grace, a client reads and writes as before, but rotating credentials, setting the webhook and rotating its secret are 403 deprecated_secret with a hint, and change nothing", () =>
    Effect.gen(function*() {
      const { baseUrl, credentials: old } = yield* signedClient()
      expect((yield* call(baseUrl, old, "PUT", "/webhook", { body: { url: WEBHOOK_URL } })).status).toBe(200)
      const rotated = yield* call(baseUrl, old, "POST", "/credentials/rotate")
      const current = { appKey: old.appKey, appSecret: rotated.data.app_secret as string }

      const read = yield* call(baseUrl, old, "GET", "/webhook")
      expect([read.status, read.deprecated]).toEqual([200, true])
      const write = yield* call(baseUrl, old, "POST", "/companies", { body: { name: "宽限期内的写入" } })
      expect([write.status, write.deprecated]).toEqual([200, true])

      const refused = [
        yield* call(baseUrl, old, "POST", "/credentials/rotate"),
        yield* call(baseUrl, old, "PUT", "/webhook", { body: { url: "http://127.0.0.2:9/in" } }),
        yield* call(baseUrl, old, "POST", "/webhook/rotate-secret")
      ]
      for (const answer of refused) {
        expect([answer.status, answer.error, answer.deprecated]).toEqual([403, "deprecated_secret", true])
        expect(answer.message).toMatch(/previous app_secret/)
        expect(answer.data.hint).toMatch(/sign with the current app_secret/)
      }
      // The typed client knows the reason.
      const typed = yield* makeOpenApiClient(baseUrl, old, { retries: 0 })
      expect(yield* Effect.flip(typed.selfService.rotateWebhookSecret())).toMatchObject({ _tag: "Forbidden", error: "deprecated_secret" })

      // Nothing changed: the current secret is still the one the rotation answered, the URL the first one.
      const settings = yield* call(baseUrl, current, "GET", "/webhook")
      expect([settings.status, settings.deprecated, settings.data.url]).toEqual([200, false, WEBHOOK_URL])
      // The current secret may do all three (the rotation of credentials is past its limit, not refused).
      expect((yield* call(baseUrl, current, "PUT", "/webhook", { body: { url: "http://127.0.0.2:9/in" } })).status).toBe(200)
      expect((yield* call(baseUrl, current, "POST", "/webhook/rotate-secret")).status).toBe(200)
      expectLimited(yield* call(baseUrl, current, "POST", "/credentials/rotate"), "a second rotation within the minute")
    }))

  it.effect("a rotation retried under its Idempotency-Key, signed with the secret its lost answer made deprecated, gets the recorded answer; a 403 or 429 is not kept for a key", () =>
    Effect.gen(function*() {
      const { baseUrl, credentials: s0 } = yield* signedClient([])
      const rotate = (credentials: Credentials, key: string) => call(baseUrl, credentials, "POST", "/credentials/rotate", { key })
      const first = yield* rotate(s0, "rotate-lost-answer")
      expect(first.status).toBe(200)
      const s1 = { appKey: s0.appKey, appSecret: first.data.app_secret as string }

      // The client lost the answer, so it still signs with s0, deprecated by then.
      const retry = yield* rotate(s0, "rotate-lost-answer")
      expect([retry.status, retry.replayed, retry.deprecated, retry.data.app_secret]).toEqual([200, true, true, s1.appSecret])
      // It did not run again: s1 is current, s0 still in its grace.
      const check = yield* call(baseUrl, s1, "GET", "/webhook")
      expect([check.status, check.deprecated]).toEqual([200, false])
      expect((yield* call(baseUrl, s0, "GET", "/webhook")).deprecated).toBe(true)

      // A refusal is not the request's answer: the same key runs once the refusal no longer applies.
      const refused = yield* rotate(s0, "rotate-2")
      expect([refused.status, refused.error]).toEqual([403, "deprecated_secret"])
      const limited = yield* rotate(s1, "rotate-2")
      const wait = expectLimited(limited, "the same key with the current secret, within the minute")
      expect(limited.replayed).toBe(false)
      yield* TestClock.adjust(`${wait} seconds`)
      const ran = yield* rotate(s1, "rotate-2")
      expect([ran.status, ran.replayed]).toEqual([200, false])
      expect(ran.data.app_secret).not.toBe(s1.appSecret)
      const again = yield* rotate(s1, "rotate-2")
      expect([again.status, again.replayed, again.data.app_secret]).toEqual([200, true, ran.data.app_secret])
    }))

  it.effect("each limited call is allowed up to its limit a minute per client (rotations 1, webhook tests 10, bulk redelivery 1), then 429 rate_limited with Retry-After until the window ends; another client is not held back", () =>
    Effect.gen(function*() {
      const client = yield* webhookClient
      const other = yield* webhookClient
      for (const limited of LIMITED) {
        for (let i = 0; i < limited.limit; i++) expect((yield* client.take(limited)).status, `${limited.path} #${i + 1}`).toBe(200)
        const wait = expectLimited(yield* client.take(limited), `${limited.path} past its limit`)
        expect((yield* other.take(limited)).status, `${limited.path} by another client`).toBe(200)
        yield* TestClock.adjust(`${wait - 1} seconds`)
        expectLimited(yield* client.take(limited), `${limited.path} a second before the window ends`)
        yield* TestClock.adjust("1 second")
        expect((yield* client.take(limited)).status, `${limited.path} once the window ended`).toBe(200)
      }
    }))

  it.effect("an idempotent replay does not count against a limit: 20 replays of one test event, then 9 more events, the 11th refused", () =>
    Effect.gen(function*() {
      const client = yield* webhookClient
      const test = LIMITED.find((l) => l.action === "webhook_test")!
      const first = yield* client.take(test, client.baseUrl, "test-once")
      expect(first.status).toBe(200)
      for (let i = 0; i < 20; i++) {
        const replay = yield* client.take(test, client.baseUrl, "test-once")
        expect([replay.status, replay.replayed, replay.data.event_id]).toEqual([200, true, first.data.event_id])
      }
      for (let i = 0; i < 9; i++) expect((yield* client.take(test)).status).toBe(200)
      expectLimited(yield* client.take(test), "the 11th test event")
    }))

  it.effect("the limits hold across API instances sharing the database", () =>
    Effect.gen(function*() {
      const second = yield* secondInstance
      const client = yield* webhookClient
      const [rotate, , test] = LIMITED
      expect((yield* client.take(rotate!)).status).toBe(200)
      expectLimited(yield* client.take(rotate!, second), "a rotation on the other instance")
      for (let i = 0; i < 10; i++) expect((yield* client.take(test!, i % 2 === 0 ? client.baseUrl : second)).status).toBe(200)
      expectLimited(yield* client.take(test!, second), "the 11th test event, on the second instance")
      expectLimited(yield* client.take(test!), "the 11th test event, on the first instance")
    }))
})
