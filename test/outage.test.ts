// A database outage is a 503 service_unavailable with Retry-After (DECISIONS §1), never a 500, and
// the service recovers by itself: the service reaches PostgreSQL through a proxy the test cuts, or
// silences (a blackhole: no answer, no FIN, no RST), where only the service's own deadline on
// database work (DATABASE_TIMEOUT_SECONDS) ends the wait.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import { eventually } from "./support/eventually.js"
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

/** The service's deadline on database work in the silent-cut test (DATABASE_TIMEOUT_SECONDS). */
const DEADLINE_MS = 2_000
/** Room above the deadline for a busy machine (an answer later than this is a hang). */
const MARGIN_MS = 3_000
/** More calls at once than the pool has connections (10), so that some wait for one. */
const BURST = 12
const silenced = databaseThroughProxy({ timeoutSeconds: DEADLINE_MS / 1000 })

layer(testServerLayer({}, undefined, silenced.layer), { timeout: 90_000 })("silent network cut", (it) => {
  it.effect("with the path to the database silently dropping everything, each signed call answers 503 service_unavailable with Retry-After within the deadline; once the path heals the pool serves again, and every connection that carried a statement into the silence was closed unless PostgreSQL confirmed its statement cancelled", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const proxy = silenced.proxy()
      const timed = (call: (typeof calls)[number]) =>
        Effect.gen(function*() {
          const started = performance.now()
          const res = yield* rawRequest(baseUrl, { ...call, credentials })
          return { call: call.path, status: res.status, res, ms: Math.round(performance.now() - started) }
        })
      const burst = Effect.forEach(Array.from({ length: BURST }, (_, i) => calls[i % calls.length]!), timed, {
        concurrency: BURST
      })
      // The pool holds several connections before the cut.
      const warm = yield* burst
      expect(warm.filter((a) => a.status !== 200 && a.status !== 404)).toEqual([])

      yield* Effect.promise(() => proxy.blackhole())
      for (const call of calls) {
        const answer = yield* timed(call)
        expect(answer.status, call.path).toBe(503)
        expect(answer.res.json).toMatchObject({ code: 503, data: { error: "service_unavailable" } })
        expect(Number(answer.res.headers.get("retry-after")), call.path).toBeGreaterThanOrEqual(1)
        // The deadline ended the wait (no fault the service could see came first).
        expect(answer.ms, call.path).toBeGreaterThanOrEqual(DEADLINE_MS - 50)
        expect(answer.ms, call.path).toBeLessThan(DEADLINE_MS + MARGIN_MS)
      }
      // At once, beyond the pool's size: each is answered within the bound, none waits for another.
      const during = yield* burst
      expect(during.map((a) => a.status)).toEqual(during.map(() => 503))
      expect(during.filter((a) => a.ms >= DEADLINE_MS + MARGIN_MS)).toEqual([])
      expect(proxy.heldOpen().length).toBeGreaterThan(0)

      // The path heals: the service serves again (well within 5 s) and with every connection of
      // its pool at once, so none is stuck.
      yield* Effect.promise(() => proxy.up())
      const healed = performance.now()
      yield* eventually(
        "a signed call to be served after the path healed",
        Effect.map(rawRequest(baseUrl, { path: `${BASE}/guests`, credentials }), (r) => r.status),
        (status) => status === 200,
        5_000
      )
      yield* Effect.logInfo(`served again ${Math.round(performance.now() - healed)} ms after the path healed`)
      const after = yield* burst
      expect(after.filter((a) => a.status !== 200 && a.status !== 404)).toEqual([])
      // What carried a statement into the silence was given up: its connection closed (by the
      // service: a cancelled statement the server did not confirm, or one that stayed silent),
      // unless the server confirmed the statement cancelled once the path healed (57014: the
      // session is in step, and the driver may lend it again; which happens depends on whether
      // the statement or the cancel, held in the silence alike, reaches the server first).
      yield* eventually(
        "the connections held in the silence to be closed, or their statement confirmed cancelled",
        Effect.sync(() => proxy.heldOpen()),
        (held) => held.length === 0
      )
    }))
})
