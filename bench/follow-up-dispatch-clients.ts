// The matching systems of bench/follow-up-dispatch.ts, in a process of their own: integrators'
// clients run elsewhere, so their signing and HTTP work must not be charged to the API's event loop.
// Reads the race (JSON) on stdin, writes its outcome (JSON) on stdout. Each client sends a signed
// POST .../dispatch per attempt (no retries, no Idempotency-Key) and counts 200 and 409.
import { randomBytes } from "node:crypto"

import { liveSigner } from "../src/auth/Signer.js"

export interface RaceInput {
  readonly baseUrl: string
  readonly credentials: ReadonlyArray<{ readonly appKey: string; readonly appSecret: string }>
  readonly taskIds: ReadonlyArray<number>
  readonly racers: number
}

export interface RaceOutcome {
  readonly ms: number
  readonly won: number
  readonly lost: number
  readonly errors: number
}

const dispatch = async (baseUrl: string, appKey: string, appSecret: string, taskId: number): Promise<number> => {
  const path = `/api/open/v1/follow-up/tasks/${taskId}/dispatch`
  const timestamp = String(Math.floor(Date.now() / 1000))
  const nonce = randomBytes(18).toString("base64url")
  const signature = liveSigner.sign(appSecret, { method: "POST", path, rawQuery: "", appKey, timestamp, nonce, body: new Uint8Array(0) })
  const res = await fetch(baseUrl + path, {
    method: "POST",
    headers: { "x-app-key": appKey, "x-timestamp": timestamp, "x-nonce": nonce, "x-signature": signature }
  })
  await res.arrayBuffer()
  return res.status
}

/** Clients in groups of `racers`; each group walks its share of the tasks in order, its clients in step. */
const race = async ({ baseUrl, credentials, racers, taskIds }: RaceInput): Promise<RaceOutcome> => {
  const groups = Math.max(1, Math.floor(credentials.length / racers))
  const t0 = performance.now()
  const counts = await Promise.all(credentials.map(async ({ appKey, appSecret }, c) => {
    const mine = { won: 0, lost: 0, errors: 0 }
    for (let t = Math.floor(c / racers) % groups; t < taskIds.length; t += groups) {
      const status = await dispatch(baseUrl, appKey, appSecret, taskIds[t]!).catch(() => 0)
      if (status === 200) mine.won++
      else if (status === 409) mine.lost++
      else mine.errors++
    }
    return mine
  }))
  const ms = performance.now() - t0
  const sum = (k: "won" | "lost" | "errors") => counts.reduce((n, r) => n + r[k], 0)
  return { ms, won: sum("won"), lost: sum("lost"), errors: sum("errors") }
}

const chunks: Array<Buffer> = []
for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
process.stdout.write(JSON.stringify(await race(JSON.parse(Buffer.concat(chunks).toString()) as RaceInput)))
