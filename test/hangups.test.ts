// A client that hangs up never hurts another (issue 24): while two connections keep sending signed
// requests and aborting them (a reset right after the request, mid-statement, or a Content-Length
// longer than the body sent), every valid request of other clients is answered 2xx. An interrupted
// request gives its database connection back only once its statement has ended, so a cancel sent
// for it cannot land on another request's statement.
import * as net from "node:net"

import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as TestClock from "effect/testing/TestClock"

import { createCredentials, TestServer, testServerLayer } from "./support/harness.js"
import { type Credentials, signedHeaders } from "./support/processes.js"
import { rawRequest } from "./support/raw.js"
import { databaseThroughProxy } from "./support/tcpProxy.js"

const BASE = "/api/open/v1"
/** Valid requests, in all, from this many clients at once. */
const VALID_REQUESTS = 600
const VALID_CONCURRENCY = 6
/** Aborting connections, each at most this many requests (they stop when the valid load is done). */
const ABORTERS = 2
const MAX_ABORTS = 3000

type Abort = "reset" | "short-body"

/**
 * One signed request on a fresh connection, aborted: `reset` sends it whole and resets the
 * connection `delayMs` later (while the service is on it); `short-body` announces more body than it
 * sends and resets after the delay. Resolves when the connection is gone.
 */
const abortedRequest = (port: number, credentials: Credentials, i: number, kind: Abort, delayMs: number) =>
  new Promise<void>((resolve) => {
    const post = i % 2 === 0
    const path = `${BASE}/companies`
    const body = post ? new TextEncoder().encode(JSON.stringify({ name: `挂断${i}` })) : new Uint8Array(0)
    const headers = signedHeaders(credentials, post ? "POST" : "GET", path, body)
    const length = kind === "short-body" ? body.length + 64 : body.length
    const head = [
      `${post ? "POST" : "GET"} ${path} HTTP/1.1`,
      "Host: 127.0.0.1",
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ...(post || kind === "short-body" ? ["Content-Type: application/json", `Content-Length: ${length}`] : []),
      "",
      ""
    ].join("\r\n")
    const socket = net.connect(port, "127.0.0.1")
    socket.on("error", () => {})
    socket.on("close", () => resolve())
    socket.on("connect", () => {
      socket.write(head)
      socket.write(body)
      setTimeout(() => socket.resetAndDestroy(), delayMs)
    })
  })

// The service reaches its database through a proxy that counts the cancel requests it sends.
const proxied = databaseThroughProxy()

layer(testServerLayer({ rateLimitRps: 1_000_000, rateLimitBurst: 1_000_000 }, undefined, proxied.layer), { timeout: 300_000 })(
  "hang-ups",
  (it) => {
    it.effect(
      "while two connections keep aborting signed requests (reset mid-request, short body), every valid request of other clients answers 2xx",
      () =>
        TestClock.withLive(Effect.gen(function*() {
          const { baseUrl } = yield* TestServer
          const port = Number(new URL(baseUrl).port)
          const valid = yield* createCredentials()
          const aborting = yield* createCredentials(["open:company:read", "open:company:manage"], { name: "aborting" })
          const statuses: Array<{ readonly request: string; readonly status: number }> = []
          let validDone = false
          let aborts = 0

          const sql = yield* SqlClient.SqlClient
          const storm = Effect.promise(async () => {
            const loops = Array.from({ length: ABORTERS }, async (_, loop) => {
              for (let i = loop; !validDone && i < MAX_ABORTS * ABORTERS; i += ABORTERS) {
                // Resets 0 to 24 ms after the request: before, during and after its statements.
                await abortedRequest(port, aborting, i, i % 3 === 2 ? "short-body" : "reset", (i * 7) % 25)
                aborts++
              }
            })
            await Promise.all(loops)
          })

          const requests = Array.from({ length: VALID_REQUESTS }, (_, i) =>
            i % 3 === 0
              ? { method: "POST", path: `${BASE}/companies`, body: JSON.stringify({ name: `正常${i}` }) }
              : i % 3 === 1
              ? { method: "GET", path: `${BASE}/companies` }
              : { method: "GET", path: `${BASE}/guests` })
          const load = Effect.ensuring(
            Effect.forEach(requests, (r) =>
              Effect.map(rawRequest(baseUrl, { ...r, credentials: valid }), (res) => {
                statuses.push({ request: `${r.method} ${r.path}`, status: res.status })
              }), { concurrency: VALID_CONCURRENCY, discard: true }),
            Effect.sync(() => (validDone = true))
          )

          // The companies table is locked 20 ms at a time, so that statements on it are still running
          // when their client goes away: those are cancelled (the cancel requests counted below).
          const pause = (ms: number) => Effect.promise(() => new Promise((r) => setTimeout(r, ms)))
          const lockCycles = Effect.whileLoop({
            while: () => !validDone,
            body: () =>
              Effect.andThen(
                Effect.orDie(sql.withTransaction(Effect.andThen(sql`LOCK TABLE companies IN ACCESS EXCLUSIVE MODE`, pause(20)))),
                pause(10)
              ),
            step: () => {}
          })

          yield* Effect.all([storm, load, lockCycles], { concurrency: 3, discard: true })
          const cancels = proxied.proxy().cancelRequests()
          const [admitted] = yield* Effect.orDie(
            sql<{ n: number }>`SELECT count(DISTINCT nonce)::int AS n FROM request_nonces WHERE app_key = ${aborting.appKey}`
          )
          const storm_ = `${aborts} aborted, ${admitted?.n} admitted, ${cancels} statements cancelled`
          expect(statuses, storm_).toHaveLength(VALID_REQUESTS)
          expect(statuses.filter((s) => s.status < 200 || s.status > 299), storm_).toEqual([])
          // The storm overlapped the load, got past admission, and had running statements cancelled.
          expect(aborts, storm_).toBeGreaterThan(100)
          expect(admitted?.n, storm_).toBeGreaterThan(0)
          expect(cancels, storm_).toBeGreaterThan(0)
        })),
      240_000
    )
  }
)
