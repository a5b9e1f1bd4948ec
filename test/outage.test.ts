// A database outage is a 503 service_unavailable with Retry-After (DECISIONS §1), never a 500, and
// the service recovers by itself: the service reaches PostgreSQL through a proxy the test cuts.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import { createCredentials, TestServer, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"
import { databaseThroughProxy } from "./support/tcpProxy.js"

const BASE = "/api/open/v1"
const proxied = databaseThroughProxy()

const calls = [
  { method: "GET", path: `${BASE}/guests` },
  { method: "GET", path: `${BASE}/matchmakers/1` },
  { method: "GET", path: `${BASE}/work-wechats`, query: "keyword=a" },
  { method: "POST", path: `${BASE}/companies`, body: JSON.stringify({ name: "停电公司" }) }
] as const

layer(testServerLayer({}, undefined, proxied.layer), { timeout: 60_000 })("database outage", (it) => {
  it.effect("with the database unreachable every signed call answers 503 service_unavailable with Retry-After within a second; all work again after", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      expect((yield* rawRequest(baseUrl, { path: `${BASE}/guests`, credentials })).status).toBe(200)

      yield* Effect.promise(() => proxied.proxy().down())
      for (const call of calls) {
        const started = Date.now()
        const res = yield* rawRequest(baseUrl, { ...call, credentials })
        const took = Date.now() - started
        expect(res.status, call.path).toBe(503)
        expect(res.json).toMatchObject({ code: 503, data: { error: "service_unavailable" } })
        expect(Number(res.headers.get("retry-after")), call.path).toBeGreaterThanOrEqual(1)
        expect(res.headers.get("x-request-id")).toBeTruthy()
        expect(took, call.path).toBeLessThan(1000)
      }

      yield* Effect.promise(() => proxied.proxy().up())
      for (const call of calls) {
        let status = 0
        for (let attempt = 0; attempt < 20 && status !== 200 && status !== 404; attempt++) {
          if (attempt > 0) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 100)))
          status = (yield* rawRequest(baseUrl, { ...call, credentials })).status
        }
        expect([200, 404], call.path).toContain(status)
      }
    }))

  it.effect("connections killed by the server mid-flight (a restart) give 503 or a normal answer, never a 500", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const sql = yield* SqlClient.SqlClient
      const statuses: Array<number> = []
      for (let round = 0; round < 5; round++) {
        const burst = Effect.forEach(
          Array.from({ length: 8 }, (_, i) => calls[i % calls.length]!),
          (call) => Effect.map(rawRequest(baseUrl, { ...call, credentials }), (r) => r.status),
          { concurrency: 8 }
        )
        // Terminate every other backend of this database while the burst runs (as a restart does).
        const kill = Effect.ignore(sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()`)
        // (it.effect runs on the TestClock, so the pause is a real timer.)
        const pause = Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
        const [answers] = yield* Effect.all([burst, Effect.andThen(pause, kill)], { concurrency: 2 })
        statuses.push(...answers)
      }
      expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([])
      let last = 0
      for (let attempt = 0; attempt < 20 && last !== 200; attempt++) {
        if (attempt > 0) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 100)))
        last = (yield* rawRequest(baseUrl, { path: `${BASE}/guests`, credentials })).status
      }
      expect(last).toBe(200)
    }))
})
