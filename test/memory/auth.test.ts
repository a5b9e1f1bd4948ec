// Signed requests refused at the edge (DECISIONS §2), on the in-memory app (test/support/memory.ts):
// the real HttpApi, edge, signing middleware, authenticator and client cache over the fake clients
// and replay repositories, no socket and no database. A refusal comes before any handler, so the
// endpoint asked for is only a target. What needs an accepted request on a database's endpoint
// (replays, rotations, rate limits, two instances) is in test/auth.test.ts.
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

import { createCredentials, TestServer } from "../support/harness.js"
import { memoryServerLayer } from "../support/memory.js"
import { rawRequest } from "../support/raw.js"

const PATH = "/api/open/v1/companies"

layer(memoryServerLayer())("authentication", (it) => {
  it.effect("missing signing headers give 401 missing_credentials", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const res = yield* rawRequest(baseUrl, { path: PATH })
      expect(res.status).toBe(401)
      expect(res.json.code).toBe(401)
      expect(res.json.data.error).toBe("missing_credentials")
    }))

  it.effect("an unknown app_key gives 401 unknown_app_key", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const res = yield* rawRequest(baseUrl, { path: PATH, credentials: { appKey: "ak_nope", appSecret: "x" } })
      expect(res.json.data.error).toBe("unknown_app_key")
    }))

  it.effect("a wrong secret gives 401 invalid_signature with the server's string_to_sign", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const res = yield* rawRequest(baseUrl, {
        path: PATH,
        query: "keyword=%E5%BC%A0&page=1",
        credentials,
        nonce: "nonce-wrong-secret-0001",
        signed: { secret: "not-the-secret" }
      })
      expect(res.status).toBe(401)
      expect(res.json.data.error).toBe("invalid_signature")
      const lines = (res.json.data.string_to_sign as string).split("\n")
      expect(lines).toEqual([
        "GET",
        PATH,
        "keyword=%E5%BC%A0&page=1",
        credentials.appKey,
        res.json.data.string_to_sign.split("\n")[4],
        "nonce-wrong-secret-0001",
        "d41d8cd98f00b204e9800998ecf8427e"
      ])
      expect(JSON.stringify(res.json)).not.toContain(credentials.appSecret)
    }))

  it.effect("a body changed after signing gives 401 invalid_signature", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const res = yield* rawRequest(baseUrl, {
        method: "POST",
        path: PATH,
        body: JSON.stringify({ name: "红娘之家" }),
        signed: { body: JSON.stringify({ name: "红娘之家 " }) },
        credentials
      })
      expect(res.json.data.error).toBe("invalid_signature")
    }))

  it.effect("a query changed after signing gives 401 invalid_signature", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const res = yield* rawRequest(baseUrl, { path: PATH, query: "page=2", signed: { query: "page=1" }, credentials })
      expect(res.json.data.error).toBe("invalid_signature")
    }))

  it.effect("a millisecond timestamp is answered with a hint", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const res = yield* rawRequest(baseUrl, { path: PATH, credentials, timestamp: (yield* Clock.currentTimeMillis) })
      expect(res.json.data.error).toBe("timestamp_out_of_window")
      expect(res.json.data.hint).toMatch(/milliseconds/)
    }))
})
