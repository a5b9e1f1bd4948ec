// The edge's routing answers (DECISIONS §1) on the in-memory app (test/support/memory.ts): 405
// with Allow, paths matched as sent, the favicon and the redirect of `/`, through the real router
// and edge, without a socket or a database (the app's fetch: FetchHttpClient.Fetch). What Node's
// server answers by itself (parser errors, Expect, header limits, keep-alive) and what needs
// records in PostgreSQL is in test/edge.test.ts.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"

import { createCredentials, TestServer } from "../support/harness.js"
import { memoryServerLayer } from "../support/memory.js"
import { rawRequest } from "../support/raw.js"

const BASE = "/api/open/v1"

layer(memoryServerLayer())("the HTTP edge", (it) => {
  it.effect("a path served with other methods is 405 with the Allow header and data.allow; an unknown path stays 404", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const fetch = yield* FetchHttpClient.Fetch
      const cases: Array<[string, string, Array<string>]> = [
        ["DELETE", `${BASE}/guests/1`, ["GET", "HEAD", "PUT"]],
        ["PATCH", `${BASE}/guests`, ["GET", "HEAD", "POST"]],
        ["GET", `${BASE}/follow-up/tasks/1/skip`, ["POST"]],
        ["POST", "/docs", ["GET", "HEAD"]],
        ["DELETE", "/favicon.ico", ["GET", "HEAD"]]
      ]
      for (const [method, path, allow] of cases) {
        const res = yield* Effect.promise(() => fetch(`${baseUrl}${path}`, { method }))
        const json = yield* Effect.promise(() => res.json() as Promise<{ code: number; data: { error: string; allow: Array<string> } }>)
        expect([res.status, json.code, json.data.error], `${method} ${path}`).toEqual([405, 405, "method_not_allowed"])
        expect(json.data.allow, `${method} ${path}`).toEqual(allow)
        expect(res.headers.get("allow"), `${method} ${path}`).toBe(allow.join(", "))
        expect(res.headers.get("x-request-id")).not.toBeNull()
      }
      const unknown = yield* Effect.promise(() => fetch(`${baseUrl}${BASE}/nowhere`, { method: "DELETE" }))
      expect(unknown.status).toBe(404)
    }))

  it.effect("GET /favicon.ico answers unsigned with a 16×16 icon (an ICO file) that browsers may keep for a day", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const fetch = yield* FetchHttpClient.Fetch
      const res = yield* Effect.promise(() => fetch(`${baseUrl}/favicon.ico`))
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toBe("image/x-icon")
      expect(res.headers.get("cache-control")).toBe("public, max-age=86400")
      expect(res.headers.get("x-request-id")).not.toBeNull()
      const icon = Buffer.from(yield* Effect.promise(() => res.arrayBuffer()))
      // ICONDIR: reserved 0, type 1 (icon), one image; its entry: 16×16, 32 bits, the image's size and place.
      expect([icon.readUInt16LE(0), icon.readUInt16LE(2), icon.readUInt16LE(4)]).toEqual([0, 1, 1])
      expect([icon[6], icon[7], icon.readUInt16LE(12)]).toEqual([16, 16, 32])
      expect(icon.readUInt32LE(18) + icon.readUInt32LE(14)).toBe(icon.length)
      // The bitmap: 16 wide, 32 high (the pixels and the mask), 32 bits a pixel.
      expect([icon.readInt32LE(26), icon.readInt32LE(30), icon.readUInt16LE(36)]).toEqual([16, 32, 32])
    }))

  it.effect("GET / redirects (302) to /docs", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const fetch = yield* FetchHttpClient.Fetch
      const res = yield* Effect.promise(() => fetch(`${baseUrl}/`, { redirect: "manual" }))
      expect(res.status).toBe(302)
      expect(res.headers.get("location")).toBe("/docs")
    }))

  it.effect("a path is matched as sent: `//`, a trailing slash or upper case do not reach another endpoint", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      // An empty segment is an empty id of the endpoint as sent (not PUT /work-wechats/{id} with id "status").
      for (const [method, path] of [["PUT", `${BASE}/work-wechats//status`], ["GET", `${BASE}/guests/`]] as const) {
        const empty = yield* rawRequest(baseUrl, { method, path, query: "status=disabled", credentials })
        expect([empty.status, empty.json.data.error, empty.json.data.issues[0].path], path).toEqual([400, "invalid_parameter", "id"])
      }
      for (
        const [method, path] of [
          ["GET", `${BASE}/time/`],
          ["GET", `${BASE}/GUESTS`],
          ["GET", `/API/open/v1/time`],
          ["GET", `/api/open/v1//guests`]
        ] as const
      ) {
        const res = yield* rawRequest(baseUrl, { method, path, credentials })
        expect([res.status, res.json.data.error], `${method} ${path}`).toEqual([404, "not_found"])
      }
      // An encoded `;` stays inside its segment: a path id that is not a number.
      const encoded = yield* rawRequest(baseUrl, { path: `${BASE}/work-wechats/1%3Bx=1/logs`, credentials })
      expect([encoded.status, encoded.json.data.error]).toEqual([400, "invalid_parameter"])
    }))
})
