// Signed requests end to end (DECISIONS §2): every authentication failure with its reason, replay
// protection shared across API instances, secret rotation, permissions and rate limits.
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"

import { Clients } from "../src/services/Clients.js"
import { createCredentials, serverLayer, signedClient, testAppLayer, TestServer, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const PATH = "/api/open/v1/companies"

layer(testServerLayer())("authentication", (it) => {
  it.effect("a correctly signed request succeeds with the envelope", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const res = yield* rawRequest(baseUrl, { path: PATH, query: "page=1&page_size=5", credentials })
      expect(res.status).toBe(200)
      expect(res.json).toEqual({ code: 200, message: "ok", data: { list: [], total: 0, next_cursor: null } })
      expect(res.headers.get("x-request-id")).toMatch(/.+/)
    }))

  it.effect("a query signed without sorting still verifies (the server sorts)", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const res = yield* rawRequest(baseUrl, { path: PATH, query: "page_size=3&page=1&keyword=a+b", credentials })
      expect(res.status).toBe(200)
    }))

  it.effect("a stale timestamp gives 401 timestamp_out_of_window with server_time", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const stale = yield* rawRequest(baseUrl, { path: PATH, credentials, timestamp: now - 301 })
      expect(stale.json.data.error).toBe("timestamp_out_of_window")
      expect(stale.json.data.server_time).toBe(now)
      const edge = yield* rawRequest(baseUrl, { path: PATH, credentials, timestamp: now - 300 })
      expect(edge.status).toBe(200)
      const future = yield* rawRequest(baseUrl, { path: PATH, credentials, timestamp: now + 301 })
      expect(future.json.data.error).toBe("timestamp_out_of_window")
    }))

  it.effect("a replayed nonce gives 401 nonce_replayed", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const first = yield* rawRequest(baseUrl, { path: PATH, credentials, nonce: "replay-nonce-000001" })
      expect(first.status).toBe(200)
      const again = yield* rawRequest(baseUrl, { path: PATH, credentials, nonce: "replay-nonce-000001" })
      expect(again.json.data.error).toBe("nonce_replayed")
    }))

  it.effect("a nonce with a bad signature is not recorded, so the honest request still passes", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const forged = yield* rawRequest(baseUrl, { path: PATH, credentials, nonce: "forged-nonce-000001", signed: { secret: "x" } })
      expect(forged.json.data.error).toBe("invalid_signature")
      const honest = yield* rawRequest(baseUrl, { path: PATH, credentials, nonce: "forged-nonce-000001" })
      expect(honest.status).toBe(200)
    }))

  it.effect("a disabled app_key gives 401 app_key_disabled, and enabling restores it", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const clients = yield* Clients
      const credentials = yield* createCredentials()
      yield* clients.setStatus(credentials.appKey, "disabled")
      const res = yield* rawRequest(baseUrl, { path: PATH, credentials })
      expect(res.json.data.error).toBe("app_key_disabled")
      yield* clients.setStatus(credentials.appKey, "active")
      expect((yield* rawRequest(baseUrl, { path: PATH, credentials })).status).toBe(200)
    }))

  it.effect("after a reset both secrets work for 7 days, the old one flagged; then only the new one", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const clients = yield* Clients
      const old = yield* createCredentials()
      const reset = yield* clients.resetSecret(old.appKey)
      const fresh = { appKey: old.appKey, appSecret: reset.app_secret }

      const withOld = yield* rawRequest(baseUrl, { path: PATH, credentials: old })
      expect(withOld.status).toBe(200)
      expect(withOld.headers.get("x-secret-deprecated")).toBe("true")
      const withNew = yield* rawRequest(baseUrl, { path: PATH, credentials: fresh })
      expect(withNew.status).toBe(200)
      expect(withNew.headers.get("x-secret-deprecated")).toBeNull()

      yield* TestClock.adjust("6 days")
      expect((yield* rawRequest(baseUrl, { path: PATH, credentials: old })).status).toBe(200)
      yield* TestClock.adjust("1 days")
      yield* TestClock.adjust("1 seconds")
      const expired = yield* rawRequest(baseUrl, { path: PATH, credentials: old })
      expect(expired.json.data.error).toBe("invalid_signature")
      expect((yield* rawRequest(baseUrl, { path: PATH, credentials: fresh })).status).toBe(200)
    }))

  it.effect("an endpoint without its permission gives 403 permission_denied naming it", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials(["open:company:read"])
      const read = yield* rawRequest(baseUrl, { path: PATH, credentials })
      expect(read.status).toBe(200)
      const write = yield* rawRequest(baseUrl, { method: "POST", path: PATH, body: JSON.stringify({ name: "某某婚介" }), credentials })
      expect(write.status).toBe(403)
      expect(write.json).toEqual({
        code: 403,
        message: expect.any(String),
        data: { error: "permission_denied", required: "open:company:manage" }
      })
      const other = yield* rawRequest(baseUrl, { path: "/api/open/v1/matchmakers", credentials })
      expect(other.json.data.required).toBe("open:matchmaker:read")
    }))

  it.effect("the typed client signs every request, JSON bodies and queries included", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const created = yield* client.companies.create({ payload: { name: "幸福婚介", city: "长沙" } })
      expect(created.status).toBe("active")
      const page = yield* client.companies.list({ query: { keyword: "幸福", city: "长沙", page: 1, page_size: 10 } })
      expect(page.list.map((c) => c.id)).toContain(created.id)
    }))
})

layer(testServerLayer({ rateLimitRps: 1, rateLimitBurst: 3 }))("rate limiting", (it) => {
  it.effect("past the burst a client gets 429 rate_limited with Retry-After and RateLimit headers", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const statuses: Array<number> = []
      let last
      for (let i = 0; i < 4; i++) {
        last = yield* rawRequest(baseUrl, { path: PATH, credentials })
        statuses.push(last.status)
      }
      expect(statuses).toEqual([200, 200, 200, 429])
      expect(last!.json.data).toEqual({ error: "rate_limited", retry_after: 1 })
      expect(last!.headers.get("retry-after")).toBe("1")
      expect(last!.headers.get("ratelimit-limit")).toBe("3")
      expect(last!.headers.get("ratelimit-remaining")).toBe("0")
      // Tokens come back with time.
      yield* TestClock.adjust("1 seconds")
      expect((yield* rawRequest(baseUrl, { path: PATH, credentials })).status).toBe(200)
    }))

  it.effect("the operator's per-client limit replaces the default", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const clients = yield* Clients
      const credentials = yield* createCredentials()
      yield* clients.setRateLimit(credentials.appKey, 1, 5)
      const statuses: Array<number> = []
      for (let i = 0; i < 6; i++) statuses.push((yield* rawRequest(baseUrl, { path: PATH, credentials })).status)
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    }))

  it.effect("one client's limit does not throttle another client", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const a = yield* createCredentials()
      const b = yield* createCredentials()
      for (let i = 0; i < 4; i++) yield* rawRequest(baseUrl, { path: PATH, credentials: a })
      expect((yield* rawRequest(baseUrl, { path: PATH, credentials: b })).status).toBe(200)
    }))
})

// Two API instances over one database: the nonce record is shared.
layer(testAppLayer().pipe(Layer.provideMerge(FetchHttpClient.layer)))("two API instances", (it) => {
  it.effect("a nonce used on one instance is refused by the other", () =>
    Effect.gen(function*() {
      const a = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const b = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      expect(a.baseUrl).not.toBe(b.baseUrl)
      const credentials = yield* createCredentials()
      const first = yield* rawRequest(a.baseUrl, { path: PATH, credentials, nonce: "shared-nonce-0000001" })
      expect(first.status).toBe(200)
      const replay = yield* rawRequest(b.baseUrl, { path: PATH, credentials, nonce: "shared-nonce-0000001" })
      expect(replay.json.data.error).toBe("nonce_replayed")
    }))
})
