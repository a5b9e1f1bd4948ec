// `npm run bench` (allocation): the bytes each server allocates per request, on the cheap requests
// of bench/request-cost.ts (GET /matchmakers/{id}, POST /companies), beside its floors. Garbage is
// part of a request's CPU (the collector's time on the main thread and its helpers, and the long
// collections behind a tail) and, unlike time, hardly depends on how busy the machine is: V8
// counts every byte it allocates (`v8.getHeapStatistics().total_allocated_bytes`), read from each
// server through bench/alloc-probe.mjs (loaded with `--import`, read on SIGUSR2) before and after
// a fixed number of signed requests (32 connections, after a warm-up). Prints KB per request and
// the service's against each floor's. BENCH_ALLOC_REQUESTS (10000), BENCH_SKIP as in
// request-path.ts, BENCH_NO_BUILD=1.
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

/** The bytes the process has allocated so far, as its probe writes them. */
const allocated = async (pid: number): Promise<number> => {
  const file = path.join(dir, String(pid))
  rmSync(file, { force: true })
  process.kill(pid, "SIGUSR2")
  const deadline = Date.now() + 5_000
  while (Date.now() < deadline) {
    try {
      const text = readFileSync(file, "utf8")
      if (/^\d+$/.test(text)) return Number(text)
    } catch {
      // not written yet
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`process ${pid} did not answer its allocation probe`)
}

const kb: Record<string, Record<string, number>> = {}
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
      ;(kb[c.name] ??= {})[kind] = (after - before) / load.requests / 1024
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
await db.end()
process.exit(0)
