// The envelope of every error class (DECISIONS §1): status equals code, data.error is stable,
// and details ride along in data; X-Request-Id on every response.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"

import { createCredentials, TestServer, testServerLayer } from "./support/harness.js"
import { rawRequest, type RawResponse } from "./support/raw.js"

const BASE = "/api/open/v1"

layer(testServerLayer())("error envelopes", (it) => {
  it.effect("a JSON body over 1 MiB is 413 payload_too_large", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const big = JSON.stringify({ name: "x".repeat(1024 * 1024) })
      const res = yield* rawRequest(baseUrl, { method: "POST", path: `${BASE}/companies`, body: big, credentials })
      expect(res.status).toBe(413)
      expect(res.json.data).toEqual({ error: "payload_too_large", limit: 1024 * 1024 })
      // The connection stays usable for the next request.
      expect((yield* rawRequest(baseUrl, { path: `${BASE}/time` })).status).toBe(200)
    }))

  it.effect("a body of exactly 1 MiB is read (and then judged on its content)", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const prefix = "{\"name\":\"某婚介\",\"address\":\""
      const suffix = "\"}"
      const body = prefix + "x".repeat(1024 * 1024 - Buffer.byteLength(prefix) - suffix.length) + suffix
      expect(Buffer.byteLength(body)).toBe(1024 * 1024)
      const res = yield* rawRequest(baseUrl, { method: "POST", path: `${BASE}/companies`, body, credentials })
      expect(res.status).toBe(400)
      expect(res.json.data.issues[0].path).toBe("address")
    }))
})

// Runs last in its own database: breaking a table turns SQL into defects.
layer(testServerLayer())("defects", (it) => {
  it.effect("a defect is 500 internal_error with the request id and no stack trace", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const sql = yield* SqlClient.SqlClient
      yield* sql`ALTER TABLE companies RENAME TO companies_gone`
      const res = yield* rawRequest(baseUrl, { path: `${BASE}/companies`, credentials, headers: { "x-request-id": "defect-req-1" } })
      expect(res.status).toBe(500)
      expect(res.json).toEqual({
        code: 500,
        message: expect.any(String),
        data: { error: "internal_error", request_id: "defect-req-1" }
      })
      expect(JSON.stringify(res.json)).not.toMatch(/at .*\.ts|companies_gone|relation/)
      yield* sql`ALTER TABLE companies_gone RENAME TO companies`
    }))
})

const logged: Array<Record<string, unknown>> = []
const captureLogs = Logger.layer([
  Logger.make(({ fiber, message }) => {
    const line: Record<string, unknown> = { message: Array.isArray(message) ? message.join(" ") : String(message) }
    for (const [k, v] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) line[k] = v
    logged.push(line)
  })
])

layer(testServerLayer().pipe(Layer.provide(captureLogs)))("request log", (it) => {
  it.effect("a 401 is logged with the app_key the request sent and its data.error; a success with the caller's key", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const bad = yield* rawRequest(baseUrl, { path: "/api/open/v1/guests", credentials: { ...credentials, appSecret: "0".repeat(64) } })
      expect(bad.status).toBe(401)
      const ok = yield* rawRequest(baseUrl, { path: "/api/open/v1/guests", credentials })
      expect(ok.status).toBe(200)
      const lines = logged.filter((l) => l.message === "request")
      const badLine = lines.find((l) => l.request_id === bad.headers.get("x-request-id"))
      const okLine = lines.find((l) => l.request_id === ok.headers.get("x-request-id"))
      expect(badLine).toMatchObject({ status: 401, app_key: credentials.appKey, error: "invalid_signature" })
      expect(okLine).toMatchObject({ status: 200, app_key: credentials.appKey })
      expect(okLine).not.toHaveProperty("error")
    }))

  it.effect("every error answer is logged with the reason of the error it was made of: the edge's, a handler's, one kept under an Idempotency-Key and its replay", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const register = (body: string) =>
        rawRequest(baseUrl, {
          method: "POST",
          path: `${BASE}/activities/2000000000/register`,
          body,
          credentials,
          headers: { "idempotency-key": "log-reasons-1" }
        })
      const answers = [
        // The edge's own refusals: a path it will not route, a body over the limit.
        yield* rawRequest(baseUrl, { path: `${BASE}/companies;x`, credentials }),
        yield* rawRequest(baseUrl, { method: "POST", path: `${BASE}/companies`, body: "x".repeat(2 * 1024 * 1024), credentials }),
        // A handler's refusal, answered by the signature middleware.
        yield* rawRequest(baseUrl, { path: `${BASE}/companies/2000000000`, credentials }),
        // Answered inside the Idempotency-Key (and kept), then replayed from its bytes, then refused.
        yield* register(JSON.stringify({ guest_id: 1 })),
        yield* register(JSON.stringify({ guest_id: 1 })),
        yield* register(JSON.stringify({ guest_id: 2 }))
      ]
      expect(answers.map((a) => [a.status, a.json.data.error])).toEqual([
        [400, "invalid_parameter"],
        [413, "payload_too_large"],
        [404, "not_found"],
        [404, "not_found"],
        [404, "not_found"],
        [422, "idempotency_key_reused"]
      ])
      expect(answers[4]!.headers.get("idempotent-replayed")).toBe("true")
      const lines = logged.filter((l) => l.message === "request")
      const lineOf = (answer: RawResponse) => lines.find((l) => l.request_id === answer.headers.get("x-request-id"))
      expect(answers.map((a) => [lineOf(a)?.status, lineOf(a)?.error])).toEqual(answers.map((a) => [a.status, a.json.data.error]))
    }))
})
