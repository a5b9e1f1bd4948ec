// Authentication across API instances (DECISIONS §2, §10): each instance caches client rows and
// leases rate tokens locally, yet a disabled key or a reset secret takes effect on every instance
// as soon as it hears of the change by NOTIFY (how long that took is reported, not asserted: a
// loaded machine may take longer than the usual few milliseconds), a nonce is accepted once across
// instances, and the instances together stay within the configured rate.
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as TestClock from "effect/testing/TestClock"

import { ClientCache } from "../src/auth/ClientCache.js"
import { placeOf, SecretBox } from "../src/auth/SecretBox.js"
import { newNonce } from "../src/client/Client.js"
import { eventually } from "./support/eventually.js"
import { createCredentials, fakeCardParser, sharedTestDatabase, TestServer, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const RATE = { rateLimitRps: 50, rateLimitBurst: 100 }

const shared = sharedTestDatabase(RATE)
const secondInstance = shared.anotherInstance

/** Waits (real time) until `check` holds; returns how long it took, in ms, for the log. */
const took = <E, R>(what: string, check: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    const started = performance.now()
    yield* eventually(what, check, (ok) => ok)
    return Math.round(performance.now() - started)
  })

const errorOf = (baseUrl: string, credentials: { appKey: string; appSecret: string }) =>
  Effect.map(rawRequest(baseUrl, { path: "/api/open/v1/matchmakers", credentials }), (r) => (r.status === 200 ? "ok" : r.json.data.error))

layer(testServerLayer(RATE, fakeCardParser, shared.database))("authentication across instances", (it) => {
  /** This instance and a second one (its own caches and pool) over the same database. */
  const twoInstances = Effect.gen(function*() {
    const first = (yield* TestServer).baseUrl
    const firstCache = yield* ClientCache
    const another = yield* Layer.build(Layer.fresh(secondInstance))
    const second = Context.get(another, TestServer).baseUrl
    const secondCache = Context.get(another, ClientCache)
    /** Requests on both until both instances hold the client's row (rows are cached only while they listen). */
    const cached = (credentials: { appKey: string; appSecret: string }) =>
      eventually(
        "both instances to hold the row",
        Effect.map(
          Effect.all([errorOf(first, credentials), errorOf(second, credentials)]),
          (r) => r.join() === "ok,ok" && firstCache.holds(credentials.appKey) && secondCache.holds(credentials.appKey)
        ),
        (held) => held
      )
    return { first, second, cached }
  })

  it.effect("a key disabled in the database, while both instances hold its row, is refused by both once they hear of it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { first, second, cached } = yield* twoInstances
      const credentials = yield* createCredentials()
      yield* cached(credentials)

      // Not through the service: neither instance hears of it but by NOTIFY.
      yield* sql`UPDATE clients SET status = 'disabled' WHERE app_key = ${credentials.appKey}`
      const ms = yield* took(
        "both instances to refuse the disabled key",
        Effect.map(Effect.all([errorOf(first, credentials), errorOf(second, credentials)]), (r) => r.every((e) => e === "app_key_disabled"))
      )
      console.log(`a disabled key was refused by both instances ${ms} ms after the update (reported, not asserted)`)
    }))

  it.effect("a reset secret, while both instances hold the row, takes effect on both once they hear of it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const box = yield* SecretBox
      const { first, second, cached } = yield* twoInstances
      const old = yield* createCredentials()
      yield* cached(old)

      const fresh = { appKey: old.appKey, appSecret: "sk_reset_by_the_operator_0123456789" }
      yield* sql`UPDATE clients SET secret_enc = ${
        box.seal(fresh.appSecret, placeOf("clients.secret_enc", old.appKey))
      } WHERE app_key = ${old.appKey}`
      yield* took(
        "the reset secret on both instances",
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
      yield* eventually("the row cached", errorOf(baseUrl, credentials), (e) => e === "ok" && cache.holds(credentials.appKey))

      yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE application_name = 'matchmaking-open-api:clients-cache' AND datname = current_database()`
      yield* eventually("the loss noticed", Effect.sync(() => cache.isLive()), (live) => !live)
      expect(cache.holds(credentials.appKey)).toBe(false)
      yield* sql`UPDATE clients SET status = 'disabled' WHERE app_key = ${credentials.appKey}`
      expect(yield* errorOf(baseUrl, credentials)).toBe("app_key_disabled")
      // It reconnects on its own and caches again.
      yield* eventually("the reconnection", Effect.sync(() => cache.isLive()), (live) => live)
      yield* sql`UPDATE clients SET status = 'active' WHERE app_key = ${credentials.appKey}`
      yield* eventually("the key active again", errorOf(baseUrl, credentials), (e) => e === "ok")
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

  it.effect("after a crash empties the nonce record, a request signed before it is 401 signed_before_restart (with a hint to sign again), never replayed; fresh ones pass", () =>
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
      // The database's clock past the second the request was signed in (the epoch is set from it).
      yield* eventually(
        "the database clock past the signed second",
        Effect.map(sql<{ s: number }>`SELECT floor(extract(epoch FROM clock_timestamp()))::float8 AS s`, (r) => r[0]!.s),
        (s) => s > timestamp
      )
      const replayed = yield* rawRequest(baseUrl, seen)
      expect(replayed.status).toBe(401)
      expect(replayed.json.data.error).toBe("signed_before_restart")
      expect(replayed.json.data.hint).toMatch(/sign .* again .*fresh X-Timestamp and X-Nonce/)

      yield* TestClock.setTime(Date.now() + 1_000)
      expect((yield* rawRequest(baseUrl, { path: "/api/open/v1/matchmakers", credentials })).status).toBe(200)
    }))
})
