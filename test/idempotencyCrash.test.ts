// Exactly once across crashes (DECISIONS §11, issue 24): two real API processes; a client sends
// keyed POST /guests, each key's attempts alternating between instance A and instance B and
// retrying through lost connections, 409 and 503; instance A is killed with SIGKILL at random
// moments while it serves them, and started again, several times. Whatever the moment of the kill
// (before the commit, between the commit and the answer, while answering), every key created
// exactly one guest and every answer under a key is byte for byte the first one.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import { findFreePort } from "../src/sql/embedded.js"
import { eventually } from "./support/eventually.js"
import { createCredentials, testServerLayer } from "./support/harness.js"
import { type Credentials, databaseEnv, signedHeaders, startProcess } from "./support/processes.js"

const BASE = "/api/open/v1"
/** Times instance A is killed. */
const ROUNDS = 3

interface Answer {
  readonly status: number
  readonly text: string
  readonly replayed: boolean
}

/** One signed attempt (a fresh nonce each time); status 0 when no complete answer came back. */
const post = async (port: number, credentials: Credentials, path: string, body: string, key: string): Promise<Answer> => {
  const bytes = new TextEncoder().encode(body)
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key, ...signedHeaders(credentials, "POST", path, bytes) },
      body: bytes,
      signal: AbortSignal.timeout(30_000)
    })
    return { status: res.status, text: await res.text(), replayed: res.headers.get("idempotent-replayed") === "true" }
  } catch {
    return { status: 0, text: "", replayed: false }
  }
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

layer(testServerLayer({ rateLimitBurst: 1_000_000 }), { timeout: 180_000 })("POSTs under an Idempotency-Key across crashes", (it) => {
  it.effect(
    "SIGKILL of an instance at random moments during keyed POSTs retried through another: one guest per key, every answer under a key byte-identical",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const credentials = yield* createCredentials()
        const env = { ...(yield* databaseEnv), HOST: "127.0.0.1", RATE_LIMIT_RPS: "100000", RATE_LIMIT_BURST: "1000000" }
        const [portA, portB] = [yield* Effect.promise(findFreePort), yield* Effect.promise(findFreePort)]
        const start = (port: number) => startProcess("src/main.ts", { ...env, PORT: String(port) }, "Listening on")
        let [a] = yield* Effect.all([start(portA), start(portB)], { concurrency: 2 })

        const company = JSON.parse(
          (yield* Effect.promise(() => post(portB, credentials, `${BASE}/companies`, JSON.stringify({ name: "崩溃婚介" }), "company"))).text
        ).data.id as number
        const tag = Math.random().toString(36).slice(2, 8)
        const path = `${BASE}/guests`

        // The client: workers take the next key and retry it (A first, then B, A, …) until it is
        // answered; answers are recorded per key. The pauses pace retries, they synchronise nothing.
        const answers = new Map<string, Array<Answer>>()
        const bodies = new Map<string, string>()
        let servedByA = 0
        let lost = 0
        let stop = false
        // New keys start only while A is up (the keys under way go on through B meanwhile).
        let aUp = true
        let next = 0
        const worker = async () => {
          while (!stop) {
            if (!aUp) {
              await pause(20)
              continue
            }
            const i = next++
            const key = `crash-${tag}-${i}`
            const body = JSON.stringify({ name: `崩${tag}${i}`, gender: i % 2 === 0 ? "male" : "female", company_id: company })
            bodies.set(key, body)
            const got: Array<Answer> = []
            answers.set(key, got)
            for (let attempt = 0; attempt < 200; attempt++) {
              const port = attempt % 2 === 0 ? portA : portB
              const answer = await post(port, credentials, path, body, key)
              if (answer.status === 0) lost++
              else if (port === portA) servedByA++
              if (answer.status === 200) {
                got.push(answer)
                break
              }
              // A lost answer, the first attempt still running (409) or a database fault (503): retry.
              expect([0, 409, 503], answer.text).toContain(answer.status)
              await pause(20)
            }
          }
        }
        const workers = Array.from({ length: 6 }, worker)
        yield* Effect.addFinalizer(() => Effect.sync(() => (stop = true)))

        for (let round = 0; round < ROUNDS; round++) {
          // A serves keyed POSTs; it dies at a random moment among them.
          const served = servedByA
          yield* eventually("instance A to serve keyed POSTs", Effect.sync(() => servedByA), (n) => n >= served + 5, 30_000)
          yield* Effect.promise(() => pause(Math.floor(Math.random() * 150)))
          a.child.kill("SIGKILL")
          aUp = false
          yield* Effect.promise(() => a.exited)
          a = yield* start(portA)
          aUp = true
        }
        const served = servedByA
        yield* eventually("instance A to serve again", Effect.sync(() => servedByA), (n) => n >= served + 5, 30_000)
        stop = true
        yield* Effect.promise(() => Promise.all(workers))

        // Every key was answered once and created exactly one guest.
        const keys = [...answers.keys()]
        for (const key of keys) expect(answers.get(key)!.length, key).toBe(1)
        const rows = yield* sql<{ name: string; n: number }>`SELECT name, count(*)::int AS n FROM guests
          WHERE name LIKE ${`崩${tag}%`} GROUP BY name`
        expect(rows.filter((r) => r.n !== 1)).toEqual([])
        expect(rows.length).toBe(keys.length)
        // Every repeat, on either instance, is the first answer byte for byte.
        yield* Effect.forEach(keys, (key) =>
          Effect.promise(async () => {
            const first = answers.get(key)![0]!
            for (const port of [portA, portB]) {
              const again = await post(port, credentials, path, bodies.get(key)!, key)
              expect(again.replayed, key).toBe(true)
              expect(again.text, key).toBe(first.text)
            }
          }), { concurrency: 8, discard: true })
        // The kills did land on requests in flight.
        expect(lost).toBeGreaterThan(0)
        const recovered = keys.filter((key) => answers.get(key)![0]!.replayed).length
        yield* Effect.logInfo(`crash test: ${keys.length} keys, ${lost} attempts lost to kills, ${recovered} first answers were replays`)
      }),
    { timeout: 120_000 }
  )
})
