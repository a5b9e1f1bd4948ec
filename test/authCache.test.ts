// Authentication across API instances (DECISIONS §2, §10): each instance caches client rows and
// leases rate tokens locally, yet a disabled key or a reset secret takes effect on every instance
// within a second, a nonce is accepted once across instances, and the instances together stay
// within the configured rate.
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as TestClock from "effect/testing/TestClock"

import { ClientCache } from "../src/auth/ClientCache.js"
import { SecretBox } from "../src/auth/SecretBox.js"
import { newNonce } from "../src/client/Client.js"
import { createCredentials, fakeCardParser, sharedTestDatabase, TestServer, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const RATE = { rateLimitRps: 50, rateLimitBurst: 100 }

const shared = sharedTestDatabase(RATE)
const secondInstance = shared.anotherInstance

/** Real time, whatever the test clock says. */
const realNow = () => performance.now()
const pause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** Polls until `check` holds (real time); returns how long it took, or fails the test after `limitMs`. */
const within = <E, R>(limitMs: number, check: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    const started = realNow()
    while (realNow() - started < limitMs) {
      if (yield* check) return realNow() - started
      yield* pause(20)
    }
    return expect.fail(`not within ${limitMs} ms`)
  })

const errorOf = (baseUrl: string, credentials: { appKey: string; appSecret: string }) =>
  Effect.map(rawRequest(baseUrl, { path: "/api/open/v1/matchmakers", credentials }), (r) => (r.status === 200 ? "ok" : r.json.data.error))

layer(testServerLayer(RATE, fakeCardParser, shared.database))("authentication across instances", (it) => {
  it.effect("a key disabled in the database is refused by both instances within a second", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const first = (yield* TestServer).baseUrl
      const second = Context.get(yield* Layer.build(Layer.fresh(secondInstance)), TestServer).baseUrl
      const credentials = yield* createCredentials()
      // Warm both caches (and wait until both listen: rows are cached only then).
      yield* within(
        5_000,
        Effect.map(Effect.all([errorOf(first, credentials), errorOf(second, credentials)]), (r) => r.every((e) => e === "ok"))
      )
      yield* pause(300)
      expect(yield* errorOf(first, credentials)).toBe("ok")
      expect(yield* errorOf(second, credentials)).toBe("ok")

      // Not through the service: neither instance hears of it but by NOTIFY.
      yield* sql`UPDATE clients SET status = 'disabled' WHERE app_key = ${credentials.appKey}`
      const took = yield* within(
        1_000,
        Effect.map(Effect.all([errorOf(first, credentials), errorOf(second, credentials)]), (r) => r.every((e) => e === "app_key_disabled"))
      )
      expect(took).toBeLessThan(1_000)
    }))

  it.effect("a reset secret takes effect on both instances within a second", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const box = yield* SecretBox
      const first = (yield* TestServer).baseUrl
      const second = Context.get(yield* Layer.build(Layer.fresh(secondInstance)), TestServer).baseUrl
      const old = yield* createCredentials()
      yield* within(5_000, Effect.map(Effect.all([errorOf(first, old), errorOf(second, old)]), (r) => r.every((e) => e === "ok")))
      yield* pause(300)

      const fresh = { appKey: old.appKey, appSecret: "sk_reset_by_the_operator_0123456789" }
      yield* sql`UPDATE clients SET secret_enc = ${box.seal(fresh.appSecret)} WHERE app_key = ${old.appKey}`
      yield* within(
        1_000,
        Effect.map(
          Effect.all([errorOf(first, old), errorOf(second, old), errorOf(first, fresh), errorOf(second, fresh)]),
          (r) => r.join() === "invalid_signature,invalid_signature,ok,ok"
        )
      )
    }))

  it.effect("while the cache's LISTEN connection is lost nothing is cached, and a change made meanwhile is seen", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const cache = yield* ClientCache
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      yield* within(5_000, Effect.map(errorOf(baseUrl, credentials), (e) => e === "ok" && cache.isLive()))

      yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE application_name = 'matchmaking-open-api:clients-cache' AND datname = current_database()`
      yield* within(1_000, Effect.sync(() => !cache.isLive()))
      yield* sql`UPDATE clients SET status = 'disabled' WHERE app_key = ${credentials.appKey}`
      expect(yield* errorOf(baseUrl, credentials)).toBe("app_key_disabled")
      // It reconnects on its own and caches again.
      yield* within(5_000, Effect.sync(() => cache.isLive()))
      yield* sql`UPDATE clients SET status = 'active' WHERE app_key = ${credentials.appKey}`
      yield* within(1_000, Effect.map(errorOf(baseUrl, credentials), (e) => e === "ok"))
    }))

  it.effect("a nonce used on one instance is refused on the other", () =>
    Effect.gen(function*() {
      const first = (yield* TestServer).baseUrl
      const second = Context.get(yield* Layer.build(Layer.fresh(secondInstance)), TestServer).baseUrl
      const credentials = yield* createCredentials()
      const nonce = newNonce()
      const answers = yield* Effect.all(
        [first, second, first, second].map((baseUrl) => rawRequest(baseUrl, { path: "/api/open/v1/matchmakers", credentials, nonce })),
        { concurrency: "unbounded" }
      )
      expect(answers.filter((r) => r.status === 200)).toHaveLength(1)
      expect(answers.filter((r) => r.json.data?.error === "nonce_replayed")).toHaveLength(3)
    }))

  it.effect("two instances together admit the burst within 10%, never more, and the refill after a second", () =>
    Effect.gen(function*() {
      const first = (yield* TestServer).baseUrl
      const second = Context.get(yield* Layer.build(Layer.fresh(secondInstance)), TestServer).baseUrl
      const credentials = yield* createCredentials()
      const burst = (n: number) =>
        Effect.map(
          Effect.all(
            Array.from(
              { length: n },
              (_, i) => rawRequest(i % 2 === 0 ? first : second, { path: "/api/open/v1/matchmakers", credentials })
            ),
            { concurrency: 16 }
          ),
          (answers) => {
            expect(answers.every((r) => r.status === 200 || r.json.data?.error === "rate_limited")).toBe(true)
            return answers.filter((r) => r.status === 200).length
          }
        )
      // The clock stands still (TestClock): no refill while the burst is spent.
      const admitted = yield* burst(160)
      expect(admitted).toBeLessThanOrEqual(RATE.rateLimitBurst)
      expect(admitted).toBeGreaterThanOrEqual(RATE.rateLimitBurst * 0.9)

      yield* TestClock.adjust("1 second")
      const refilled = yield* burst(100)
      // One second refills 50 tokens; each instance may still hold a few from before.
      expect(refilled).toBeGreaterThanOrEqual(RATE.rateLimitRps * 0.9)
      expect(refilled).toBeLessThanOrEqual(RATE.rateLimitRps * 1.1 + (RATE.rateLimitBurst - admitted))
    }))

  it.effect("after a crash empties the nonce record, a request seen before it cannot be replayed; fresh ones pass", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const nonce = newNonce()
      const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const seen = { path: "/api/open/v1/matchmakers", credentials, nonce, timestamp }
      expect((yield* rawRequest(baseUrl, seen)).status).toBe(200)

      // What a crash does to unlogged tables.
      yield* sql`DELETE FROM request_nonces`
      yield* sql`DELETE FROM nonce_epoch`
      yield* pause(1_100)
      const replayed = yield* rawRequest(baseUrl, seen)
      expect(replayed.status).toBe(401)
      expect(replayed.json.data.error).toBe("timestamp_out_of_window")

      yield* TestClock.setTime(Date.now() + 1_000)
      expect((yield* rawRequest(baseUrl, { path: "/api/open/v1/matchmakers", credentials })).status).toBe(200)
    }))
})
