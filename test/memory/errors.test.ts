// The error envelope of DECISIONS §1 for what the contract refuses (decoding, media types, unknown
// ids and routes) and the request id, on the in-memory app (test/support/memory.ts): the real
// HttpApi, edge and handlers over the fakes, no socket and no database. Body limits (read by the
// Node transport), defects from SQL and the request log are in test/errors.test.ts.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { createCredentials, TestServer } from "../support/harness.js"
import { memoryServerLayer } from "../support/memory.js"
import { rawRequest } from "../support/raw.js"

const BASE = "/api/open/v1"

layer(memoryServerLayer())("error envelopes", (it) => {
  it.effect("a decode failure is 400 invalid_parameter with every issue and its path", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const res = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/matchmakers`,
        body: JSON.stringify({ name: "", phone: "1381234567", level: "platinum", years_exp: "3" }),
        credentials
      })
      expect(res.status).toBe(400)
      expect(res.json.code).toBe(400)
      expect(res.json.data.error).toBe("invalid_parameter")
      const paths = (res.json.data.issues as Array<{ path: string }>).map((i) => i.path).sort()
      expect(paths).toEqual(["level", "name", "phone", "years_exp"])
    }))

  it.effect("a bad query parameter is 400 invalid_parameter naming it", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      for (const query of ["page=0", "page=abc", "page_size=-1", "page=1.5", "has_guests=yes"]) {
        const res = yield* rawRequest(baseUrl, { path: `${BASE}/matchmakers`, query, credentials })
        expect(res.status, query).toBe(400)
        expect(res.json.data.issues[0].path, query).toBe(query.split("=")[0])
      }
    }))

  it.effect("a non-integer path id is 400 invalid_parameter", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const res = yield* rawRequest(baseUrl, { path: `${BASE}/matchmakers/abc`, credentials })
      expect(res.status).toBe(400)
      expect(res.json.data.issues[0].path).toBe("id")
    }))

  it.effect("malformed JSON is 400 invalid_parameter, not a 500", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const res = yield* rawRequest(baseUrl, { method: "POST", path: `${BASE}/companies`, body: "{\"name\": ", credentials })
      expect(res.status).toBe(400)
      expect(res.json.data.error).toBe("invalid_parameter")
      expect(res.json.data.issues[0].path).toBe("body")
      const array = yield* rawRequest(baseUrl, { method: "POST", path: `${BASE}/companies`, body: "[1]", credentials })
      expect(array.status).toBe(400)
    }))

  it.effect("an unknown id is 404 not_found with the resource", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const res = yield* rawRequest(baseUrl, { path: `${BASE}/companies/999999`, credentials })
      expect(res.status).toBe(404)
      expect(res.json).toEqual({ code: 404, message: expect.any(String), data: { error: "not_found", resource: "company" } })
    }))

  it.effect("an unknown route is a 404 envelope", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const res = yield* rawRequest(baseUrl, { path: `${BASE}/nothing-here` })
      expect(res.status).toBe(404)
      expect(res.json.data.error).toBe("not_found")
      expect(res.headers.get("x-request-id")).toBeTruthy()
    }))

  it.effect("a wrong Content-Type is 415 unsupported_media_type", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const res = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/companies`,
        body: "name=x",
        contentType: "application/x-www-form-urlencoded",
        credentials
      })
      expect(res.status).toBe(415)
      expect(res.json.data).toEqual({ error: "unsupported_media_type", expected: "application/json" })
    }))

  it.effect("the client's X-Request-Id is echoed", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const res = yield* rawRequest(baseUrl, { path: `${BASE}/time`, headers: { "x-request-id": "req-abc-123" } })
      expect(res.headers.get("x-request-id")).toBe("req-abc-123")
    }))

  it.effect("GET /time needs no signature and gives Unix seconds and platform time", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const res = yield* rawRequest(baseUrl, { path: `${BASE}/time` })
      expect(res.status).toBe(200)
      expect(res.json.data.timestamp).toEqual(expect.any(Number))
      expect(res.json.data.time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      const shanghai = new Date((res.json.data.timestamp + 8 * 3600) * 1000).toISOString().slice(0, 19).replace("T", " ")
      expect(res.json.data.time).toBe(shanghai)
    }))
})
