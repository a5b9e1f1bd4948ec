// `npm run bench` (request cost): the CPU time the compiled service spends per request beside its
// floors (bench/request-path.ts describes them), on GET /matchmakers/{id} and POST /companies. Each
// server, alone in turn, serves a fixed number of identical signed requests (32 connections, the
// same load generator) after a warm-up; its CPU time over them (every thread's time on a CPU, from
// /proc/<pid>/task/*/schedstat, less what it spends idle over as long) is divided by the count.
// Unlike throughput, this hardly depends on what else the machine runs at the time. Prints µs per
// request for each server and the service's cost against each floor's, and the throughput ratio it
// implies (floor cost / service cost; the target is ≥ 0.85 against the Effect floor).
// BENCH_COST_REQUESTS (4000 per round), BENCH_COST_ROUNDS (3; the median is kept), BENCH_SKIP as in
// request-path.ts. Linux only (it reads /proc).
import { execSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"

import { projectRoot } from "../src/root.js"
import { type LoadSpec, runLoad, type Target } from "./load.js"
import {
  benchDatabase,
  comparedServers,
  type Kind,
  KINDS,
  newClients,
  removeBenchCompanies,
  type Server,
  startServer,
  stopServer
} from "./servers.js"
import { log } from "./support.js"

if (!existsSync("/proc/self/task")) {
  process.stdout.write("\nRequest cost: skipped (it reads each server's CPU time from /proc, which this system has not)\n")
  process.exit(0)
}

const REQUESTS = Number(process.env.BENCH_COST_REQUESTS ?? 4000)
const ROUNDS = Number(process.env.BENCH_COST_ROUNDS ?? 3)
const CONNECTIONS = 32
const COMPARED = comparedServers()

const { db, url } = await benchDatabase()
await removeBenchCompanies(db)
const { rows: [{ id: matchmakerId }] } = await db.query(
  "INSERT INTO matchmakers (name, phone) VALUES ('压测红娘', '13800138000') RETURNING id"
)
const [client] = await newClients(db, 1)

if (process.env.BENCH_NO_BUILD !== "1") {
  log("bench: building the service and the floors (npm run build)…")
  execSync("npm run -s build", { cwd: projectRoot(), stdio: "inherit" })
}
const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: "Info" }

/** Nanoseconds the process's threads have spent on a CPU so far. */
const cpuNs = (pid: number): number => {
  let total = 0
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0])
    } catch {
      // the thread ended meanwhile
    }
  }
  return total
}

const CASES: ReadonlyArray<{ readonly name: string; readonly spec: Omit<LoadSpec, "targets" | "seconds" | "connections"> }> = [
  { name: "GET /matchmakers/{id}", spec: { method: "GET", path: `/api/open/v1/matchmakers/${matchmakerId}` } },
  {
    name: "POST /companies",
    spec: { method: "POST", path: "/api/open/v1/companies", body: (i) => JSON.stringify({ name: `压测公司${i}`, city: "北京" }) }
  }
]

const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** Microseconds of CPU per request of `server` on one case: the median of the rounds. */
const costOf = async (server: Server, spec: (typeof CASES)[number]["spec"]): Promise<number> => {
  const pid = server.child.pid!
  const target: Target = { ...client!, port: server.port }
  const load = (requests: number) => runLoad({ ...spec, targets: [target], connections: CONNECTIONS, seconds: 600, requests })
  await load(REQUESTS) // warm-up: the JIT, the pools, the caches
  // What the process spends doing nothing (timers, probes of its own), per nanosecond.
  const idleFrom = cpuNs(pid)
  const idleStart = process.hrtime.bigint()
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const idleRate = (cpuNs(pid) - idleFrom) / Number(process.hrtime.bigint() - idleStart)
  const costs: Array<number> = []
  for (let round = 0; round < ROUNDS; round++) {
    const before = cpuNs(pid)
    const began = process.hrtime.bigint()
    const result = await load(REQUESTS)
    const busy = cpuNs(pid) - before - idleRate * Number(process.hrtime.bigint() - began)
    const other = Object.entries(result.statuses).filter(([status]) => status !== "200")
    if (other.length > 0) throw new Error(`the ${KINDS[server.kind].label} answered ${JSON.stringify(result.statuses)}`)
    costs.push(busy / result.requests / 1000)
  }
  return median(costs)
}

const PORTS: Record<Kind, number> = { service: 18_191, raw: 18_192, effect: 18_197, fastify: 18_198 }
const cost: Record<string, Partial<Record<Kind, number>>> = {}
for (const kind of COMPARED) {
  const server = await startServer(kind, PORTS[kind], env)
  try {
    for (const c of CASES) (cost[c.name] ??= {})[kind] = await costOf(server, c.spec)
  } finally {
    await stopServer(server)
  }
  log(`bench: the ${KINDS[kind].label} measured`)
}

const us = (x: number | undefined) => (x === undefined ? "-" : Number(x.toFixed(1)))
const over = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? "-" : Number((a / b).toFixed(2)))
process.stdout.write(
  `\nRequest cost: CPU µs per request of each server process (${REQUESTS} requests × ${ROUNDS} rounds, median; ` +
    `${CONNECTIONS} connections), the service's against its floors', and the throughput ratio that implies\n`
)
console.table(CASES.map(({ name }) => {
  const of = cost[name]!
  return {
    case: name,
    service: us(of.service),
    effect_floor: us(of.effect),
    raw_floor: us(of.raw),
    fastify_floor: us(of.fastify),
    "service/effect": over(of.service, of.effect),
    "service/raw": over(of.service, of.raw),
    "implied throughput vs effect": over(of.effect, of.service),
    "implied throughput vs raw": over(of.raw, of.service)
  }
}))
await db.end()
process.exit(0)
