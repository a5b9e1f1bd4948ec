// `npm run bench` (webhooks): 10,000 events fanned out to 5 receivers, one of which answers
// after 2 s, delivered by the daemon's dispatcher (in this process, with the default bounds): the
// four fast receivers' deliveries per second and commit-to-delivery latency (p50/p99), the same
// with the slow receiver absent (the proof that it holds back no one), and beside them a floor
// measured in the same run: the same fast deliveries by a bare loop of fetch calls with the same
// per-receiver concurrency. Runs in its own throwaway database (matchmaking_bench_webhooks).
// `node --import tsx bench/webhooks.ts [events]`.
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { WebhooksJob } from "../jobs/Webhooks.js"
import { processLayer, ServicesLive } from "../src/Layers.js"
import { OutboxRepo } from "../src/repos/OutboxRepo.js"
import { Transaction } from "../src/repos/sqlHelpers.js"
import { Clients } from "../src/services/Clients.js"
import { withPgClient } from "../src/sql/embedded.js"
import { withDatabase } from "../src/sql/urls.js"
import { log, percentile, prepareBenchEnv, runWithBenchConfig } from "./support.js"

const EVENTS = Number(process.argv[2] ?? process.env.BENCH_WEBHOOK_EVENTS ?? 10_000)
const PER_TX = 10
const WRITERS = 2
const SLOW_MS = 2000
const DATABASE = "matchmaking_bench_webhooks"

interface Receiver {
  readonly url: string
  readonly server: Server
  /** Arrival time (epoch ms) per event index. */
  readonly arrivals: Map<number, number>
  open: number
  maxOpen: number
}

const startReceiver = (delayMs: number) =>
  new Promise<Receiver>((resolve) => {
    const r: Omit<Receiver, "url"> & { url: string } = { url: "", server: createServer(), arrivals: new Map(), open: 0, maxOpen: 0 }
    r.server.on("request", (req, res) => {
      r.open++
      r.maxOpen = Math.max(r.maxOpen, r.open)
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const at = Date.now()
        const answer = () => {
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data: { i: number } }
          if (!r.arrivals.has(body.data.i)) r.arrivals.set(body.data.i, at)
          res.writeHead(204).end()
        }
        if (delayMs > 0) setTimeout(answer, delayMs)
        else answer()
      })
      res.on("close", () => r.open--)
    })
    r.server.listen(0, "127.0.0.1", () => {
      r.url = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}/hook`
      resolve(r)
    })
  })

const stop = (r: Receiver) =>
  new Promise<void>((resolve) => {
    r.server.closeAllConnections()
    r.server.close(() => resolve())
  })

const freshDatabase = async (): Promise<string> => {
  await prepareBenchEnv()
  await withPgClient(process.env.DATABASE_URL!, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
    await client.query(`CREATE DATABASE ${DATABASE} ENCODING 'UTF8' TEMPLATE template0`)
  })
  return withDatabase(process.env.DATABASE_URL!, DATABASE)
}

const dropDatabase = () =>
  withPgClient(process.env.DATABASE_URL!, (client) => client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`))

const waitFor = async (done: () => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  return done()
}

interface RunResult {
  readonly deliveries: number
  readonly seconds: number
  readonly latencies: ReadonlyArray<number>
  readonly slow?: { readonly delivered: number; readonly maxOpen: number }
}

/** One run: fresh database, receivers subscribed, EVENTS written, fast receivers drained. */
/** `perSecond`: events written at this pace (10 per transaction), else as fast as two writers can. */
const serviceRun = async (withSlow: boolean, events = EVENTS, perSecond?: number): Promise<RunResult> => {
  const url = await freshDatabase()
  const fast = await Promise.all([0, 1, 2, 3].map(() => startReceiver(0)))
  const slow = withSlow ? await startReceiver(SLOW_MS) : undefined
  const receivers = slow === undefined ? fast : [...fast, slow]
  const commits = new Map<number, number>()
  const program = Effect.gen(function*() {
    const clients = yield* Clients
    for (const r of receivers) {
      const c = yield* clients.create({ name: "bench-hook", permissions: ["open:guest:read"], masking: false })
      yield* clients.webhook(c.app_key, { _tag: "Set", url: r.url, events: ["guest.created"] })
    }
    const outbox = yield* OutboxRepo
    const tx = yield* Transaction
    const t0 = Date.now()
    const batches = Array.from({ length: Math.ceil(events / PER_TX) }, (_, b) => b)
    yield* Effect.forEach(batches, (b) => {
      const items = Array.from({ length: Math.min(PER_TX, events - b * PER_TX) }, (_, k) => ({ i: b * PER_TX + k, name: "基准嘉宾" }))
      const due = perSecond === undefined ? 0 : t0 + (b * PER_TX * 1000) / perSecond - Date.now()
      return Effect.sleep(Math.max(0, due)).pipe(
        Effect.andThen(tx.run(outbox.recordMany("guest.created", "open:guest:read", items))),
        Effect.tap(() =>
          Effect.sync(() => {
            const at = Date.now()
            for (const item of items) commits.set(item.i, at)
          })
        )
      )
    }, { concurrency: perSecond === undefined ? WRITERS : 1, discard: true })
    const written = Date.now()
    const drained = yield* Effect.promise(() => waitFor(() => fast.every((r) => r.arrivals.size === events), 600_000))
    const end = Math.max(...fast.flatMap((r) => [...r.arrivals.values()]))
    if (!drained) log(`  (not drained: ${fast.map((r) => r.arrivals.size).join(", ")})`)
    log(`  ${events} events committed in ${((written - t0) / 1000).toFixed(2)} s (${PER_TX} per transaction)`)
    const latencies = fast.flatMap((r) => [...r.arrivals].map(([i, at]) => at - commits.get(i)!)).sort((a, b) => a - b)
    return {
      deliveries: fast.reduce((n, r) => n + r.arrivals.size, 0),
      seconds: (end - t0) / 1000,
      latencies,
      ...(slow === undefined ? {} : { slow: { delivered: slow.arrivals.size, maxOpen: slow.maxOpen } })
    }
  })
  try {
    return await runWithBenchConfig(url, Effect.provide(program, WebhooksJob.pipe(Layer.provideMerge(processLayer(ServicesLive)))))
  } finally {
    await Promise.all(receivers.map(stop))
    await dropDatabase()
  }
}

/** The floor: the same fast deliveries by bare fetch calls, 4 at a time per receiver. */
const floorRun = async (perReceiver: number): Promise<RunResult> => {
  const fast = await Promise.all([0, 1, 2, 3].map(() => startReceiver(0)))
  const t0 = Date.now()
  const latencies: Array<number> = []
  await Promise.all(fast.flatMap((r) =>
    Array.from({ length: perReceiver }, async (_, lane) => {
      for (let i = lane; i < EVENTS; i += perReceiver) {
        const s = Date.now()
        const body = JSON.stringify({ id: `evt_${i}`, type: "guest.created", created_at: "", data: { i, name: "基准嘉宾" } })
        const res = await fetch(r.url, { method: "POST", headers: { "content-type": "application/json" }, body })
        await res.arrayBuffer()
        latencies.push(Date.now() - s)
      }
    })
  ))
  const seconds = (Date.now() - t0) / 1000
  await Promise.all(fast.map(stop))
  return { deliveries: fast.reduce((n, r) => n + r.arrivals.size, 0), seconds, latencies: latencies.sort((a, b) => a - b) }
}

const rate = (r: RunResult) => r.deliveries / r.seconds
const lat = (r: RunResult) => `p50 ${percentile(r.latencies, 50)} ms, p99 ${percentile(r.latencies, 99)} ms`

log(`webhooks: ${EVENTS} events, subscribers each get every one; slow receiver answers after ${SLOW_MS} ms`)
// Warm-up (JIT, connections, caches), not measured.
await serviceRun(false, Math.min(EVENTS, 2000))
const withSlow = await serviceRun(true)
log(
  `  service, 4 fast + 1 slow: fast ${withSlow.deliveries} deliveries in ${withSlow.seconds.toFixed(2)} s = ${
    rate(withSlow).toFixed(0)
  }/s, commit-to-delivery ${lat(withSlow)}; slow receiver meanwhile ${withSlow.slow!.delivered} delivered, at most ${
    withSlow.slow!.maxOpen
  } open at once`
)
const withoutSlow = await serviceRun(false)
log(
  `  service, 4 fast alone:      fast ${withoutSlow.deliveries} deliveries in ${withoutSlow.seconds.toFixed(2)} s = ${
    rate(withoutSlow).toFixed(0)
  }/s, commit-to-delivery ${lat(withoutSlow)}`
)
const PACE = 100
const paced = await serviceRun(true, Math.min(EVENTS, 30 * PACE), PACE)
log(
  `  service at ${PACE} events/s (${paced.deliveries / 4} events), 4 fast + 1 slow: commit-to-delivery ${
    lat(paced)
  }; slow receiver meanwhile ${paced.slow!.delivered} delivered, at most ${paced.slow!.maxOpen} open at once`
)
const floor = await floorRun(4)
log(
  `  floor (bare fetch loop, 4 per receiver): ${floor.deliveries} deliveries in ${floor.seconds.toFixed(2)} s = ${
    rate(floor).toFixed(0)
  }/s, per request ${lat(floor)}`
)
log(
  `  ratio service/floor: ${(rate(withSlow) / rate(floor)).toFixed(2)} with the slow receiver, ${
    (rate(withoutSlow) / rate(floor)).toFixed(2)
  } without; fast throughput with/without the slow receiver: ${(rate(withSlow) / rate(withoutSlow)).toFixed(2)}`
)
