// `npm run bench` (allocation): the bytes each server allocates per request, on the cheap requests
// of bench/request-cost.ts (GET /matchmakers/{id}, POST /companies), beside its floors. Garbage is
// part of a request's CPU (the collector's time on the main thread and its helpers, and the long
// collections behind a tail) and, unlike time, hardly depends on how busy the machine is: V8
// counts every byte it allocates (`v8.getHeapStatistics().total_allocated_bytes`), read from each
// server through bench/alloc-probe.mjs (loaded with `--import`, read on SIGUSR2) before and after
// a fixed number of signed requests (32 connections, after a warm-up). Prints KB per request and
// the service's against each floor's, then what collecting it cost each server's main thread over
// those requests (pause per request, scavenges, mark-compacts, pauses of 5 ms or more: the tail).
// BENCH_ALLOC_REQUESTS (10000), BENCH_SKIP as in request-path.ts, BENCH_NO_BUILD=1.
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"

import { projectRoot } from "../src/root.js"
import { type LoadSpec, runLoad } from "./load.js"
import { cheapRequestsSetup, comparedServers, startServer, stopServer } from "./servers.js"
import { log } from "./support.js"

const REQUESTS = Number(process.env.BENCH_ALLOC_REQUESTS ?? 10_000)
const WARMUP = 2_000
const PROBE = path.join(projectRoot(), "bench", "alloc-probe.mjs")
const dir = mkdtempSync(path.join(tmpdir(), "alloc-probe-"))

const { client, db, matchmakerId, url } = await cheapRequestsSetup()

const CASES: ReadonlyArray<{ readonly name: string; readonly spec: Omit<LoadSpec, "targets" | "seconds" | "connections"> }> = [
  { name: "GET /matchmakers/{id}", spec: { method: "GET", path: `/api/open/v1/matchmakers/${matchmakerId}` } },
  {
    name: "POST /companies",
    spec: {
      method: "POST",
      path: "/api/open/v1/companies",
      body: (i: number) => JSON.stringify({ name: `分配公司${Date.now()}-${i}`, city: "北京" })
    }
  }
]

/** What the probe reports: bytes allocated and the collections' main-thread pauses so far (the longest since its last reading). */
interface Reading {
  readonly bytes: number
  readonly gc: Record<"minor" | "major" | "incremental" | "weakcb", { readonly count: number; readonly ms: number }>
  readonly longPauses: number
  readonly longestMs: number
}

const isReading = (value: unknown): value is Reading => {
  const r = value as Reading | null
  return typeof r === "object" && r !== null && Number.isSafeInteger(r.bytes) && typeof r.gc === "object" &&
    ["minor", "major", "incremental", "weakcb"].every((k) => Number.isFinite(r.gc[k as keyof Reading["gc"]]?.ms)) &&
    Number.isInteger(r.longPauses) && Number.isFinite(r.longestMs)
}

/** The process's reading now, as its probe writes it. */
const allocated = async (pid: number): Promise<Reading> => {
  const file = path.join(dir, String(pid))
  rmSync(file, { force: true })
  process.kill(pid, "SIGUSR2")
  const deadline = Date.now() + 5_000
  while (Date.now() < deadline) {
    try {
      const reading: unknown = JSON.parse(readFileSync(file, "utf8"))
      if (isReading(reading)) return reading
    } catch {
      // not written yet
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`process ${pid} did not answer its allocation probe`)
}

const kb: Record<string, Record<string, number>> = {}
/** The collections during the measured requests: main-thread pause per request, and how they came. */
interface Collected {
  readonly pauseUs: number
  readonly scavenges: number
  readonly majors: number
  readonly longPauses: number
  readonly longestMs: number
}
const collected: Record<string, Record<string, Collected>> = {}
const kinds = comparedServers()
for (const [i, kind] of kinds.entries()) {
  const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: "Info", ALLOC_PROBE_DIR: dir, NODE_OPTIONS: `--import ${PROBE}` }
  const server = await startServer(kind, 18_591 + i, env)
  try {
    for (const c of CASES) {
      const targets = [{ ...client, port: server.port }]
      await runLoad({ ...c.spec, targets, connections: 32, seconds: 600, requests: WARMUP })
      const before = await allocated(server.child.pid!)
      const load = await runLoad({ ...c.spec, targets, connections: 32, seconds: 600, requests: REQUESTS })
      const after = await allocated(server.child.pid!)
      const failed = Object.keys(load.statuses).filter((status) => status !== "200")
      if (failed.length > 0) throw new Error(`${kind} answered ${c.name} with ${JSON.stringify(load.statuses)}`)
      ;(kb[c.name] ??= {})[kind] = (after.bytes - before.bytes) / load.requests / 1024
      const pausedMs = (["minor", "major", "incremental", "weakcb"] as const).reduce((sum, k) => sum + after.gc[k].ms - before.gc[k].ms, 0)
      ;(collected[c.name] ??= {})[kind] = {
        pauseUs: (pausedMs * 1000) / load.requests,
        scavenges: ((after.gc.minor.count - before.gc.minor.count) * 1000) / load.requests,
        majors: ((after.gc.major.count - before.gc.major.count) * 1000) / load.requests,
        longPauses: ((after.longPauses - before.longPauses) * 10_000) / load.requests,
        longestMs: after.longestMs
      }
    }
  } finally {
    await stopServer(server)
  }
  log(`bench: ${kind} measured`)
}
rmSync(dir, { recursive: true, force: true })

process.stdout.write(
  `\nAllocation: KB allocated per request by each server process (${REQUESTS} requests after ${WARMUP} of warm-up, 32 connections), and the service's against its floors'\n`
)
console.table(CASES.map(({ name }) => {
  const row = kb[name]!
  const ratio = (floor: string) => row[floor] === undefined ? "-" : Number((row["service"]! / row[floor]!).toFixed(2))
  return {
    case: name,
    ...Object.fromEntries(kinds.map((k) => [k, Number(row[k]!.toFixed(1))])),
    "service/effect": ratio("effect"),
    "service/raw": ratio("raw"),
    "service/fastify": ratio("fastify")
  }
}))
process.stdout.write(
  "\nGarbage collection during those requests, as each server's main thread was paused for it (Node's `gc` " +
    "performance entries; V8's helper threads work beside these pauses, bench/request-cost.ts counts their CPU)\n"
)
console.table(CASES.flatMap(({ name }) =>
  kinds.map((kind) => {
    const g = collected[name]![kind]!
    return {
      case: name,
      server: kind,
      "paused µs / request": Number(g.pauseUs.toFixed(1)),
      "scavenges / 1000 req": Number(g.scavenges.toFixed(2)),
      "mark-compacts / 1000 req": Number(g.majors.toFixed(2)),
      "pauses ≥ 5 ms / 10,000 req": Number(g.longPauses.toFixed(1)),
      "longest pause (ms)": Number(g.longestMs.toFixed(1))
    }
  })
))
await db.end()
process.exit(0)
