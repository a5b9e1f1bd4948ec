// `npm run bench` (request cost): the CPU time the compiled service spends per request beside its
// floors (bench/request-path.ts describes them), on GET /matchmakers/{id} and POST /companies. The
// servers run side by side; each round one of them serves a fixed number of identical signed
// requests (32 connections, the same load generator), the rounds alternating between the servers
// after a warm-up of each; a server's CPU time over its round (every thread's time on a CPU, from
// /proc/<pid>/task/*/schedstat, less what it spends idle over as long) is divided by the count.
// Unlike throughput, this hardly depends on the load generator's speed. Prints µs per request for
// each server (the median of its rounds) and the service's cost against each floor's, and the
// throughput ratio it implies (floor cost / service cost; the target is ≥ 0.85 against the Effect
// floor). BENCH_COST_REQUESTS (4000 per round), BENCH_COST_ROUNDS (5; rounds per server),
// BENCH_SKIP as in request-path.ts. Linux only (it reads /proc).
import { costOfTurn, hasProc, idleRateOf, THREAD_GROUPS, type ThreadGroup } from "./cpu.js"
import { type LoadSpec, runLoad } from "./load.js"
import { median } from "./paired.js"
import { cheapRequestsSetup, comparedServers, type Kind, KINDS, type Server, startServer, stopServer } from "./servers.js"
import { log } from "./support.js"

if (!hasProc()) {
  process.stdout.write("\nRequest cost: skipped (it reads each server's CPU time from /proc, which this system has not)\n")
  process.exit(0)
}

const REQUESTS = Number(process.env.BENCH_COST_REQUESTS ?? 4000)
const ROUNDS = Number(process.env.BENCH_COST_ROUNDS ?? 5)
const CONNECTIONS = 32
const COMPARED = comparedServers()

const { client, db, matchmakerId, url } = await cheapRequestsSetup()
const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: "Info" }

const CASES: ReadonlyArray<{ readonly name: string; readonly spec: Omit<LoadSpec, "targets" | "seconds" | "connections"> }> = [
  { name: "GET /matchmakers/{id}", spec: { method: "GET", path: `/api/open/v1/matchmakers/${matchmakerId}` } },
  {
    name: "POST /companies",
    spec: { method: "POST", path: "/api/open/v1/companies", body: (i) => JSON.stringify({ name: `压测公司${i}`, city: "北京" }) }
  }
]

const PORTS: Record<Kind, number> = { service: 18_191, raw: 18_192, effect: 18_197, fastify: 18_198 }
const cost: Record<string, Partial<Record<Kind, number>>> = {}
/** µs per request on each group of threads (the median of the rounds; idle not subtracted, a few µs). */
const byGroup: Record<string, Partial<Record<Kind, Record<ThreadGroup, number>>>> = {}
// All servers run at once (an idle one costs the others nothing), and the rounds alternate between
// them, each round starting with the next server in turn: what the machine does meanwhile (its
// noise moves a round's cost by ±15% here) falls on every server alike, not on whichever one
// happened to be measured during it.
const servers: Array<Server> = []
try {
  for (const kind of COMPARED) servers.push(await startServer(kind, PORTS[kind], env))
  for (const c of CASES) {
    const load = (server: Server) =>
      runLoad({ ...c.spec, targets: [{ ...client, port: server.port }], connections: CONNECTIONS, seconds: 600, requests: REQUESTS })
    const idle = new Map<Server, number>()
    for (const server of servers) {
      await load(server) // warm-up: the JIT, the pools, the caches
      idle.set(server, await idleRateOf(server.child.pid!))
    }
    const costs = new Map<Server, Array<number>>(servers.map((server) => [server, []]))
    const groupCosts = new Map<Server, Array<Record<ThreadGroup, number>>>(servers.map((server) => [server, []]))
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < servers.length; i++) {
        const server = servers[(round + i) % servers.length]!
        const { cost: turn, result } = await costOfTurn(server.child.pid!, idle.get(server)!, () => load(server))
        const other = Object.entries(result.statuses).filter(([status]) => status !== "200")
        if (other.length > 0) throw new Error(`the ${KINDS[server.kind].label} answered ${JSON.stringify(result.statuses)}`)
        costs.get(server)!.push(turn.us)
        groupCosts.get(server)!.push(turn.byGroup)
      }
    }
    for (const server of servers) {
      ;(cost[c.name] ??= {})[server.kind] = median(costs.get(server)!)
      const rounds = groupCosts.get(server)!
      ;(byGroup[c.name] ??= {})[server.kind] = Object.fromEntries(
        THREAD_GROUPS.map((g) => [g, median(rounds.map((r) => r[g]))])
      ) as Record<ThreadGroup, number>
    }
    log(`bench: ${c.name} measured`)
  }
} finally {
  for (const server of servers) await stopServer(server)
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
process.stdout.write(
  "\nWhere it goes: CPU µs per request by thread (median of the rounds; idle included): the main thread " +
    "(JavaScript and the collector's pauses), V8's workers (parallel scavenges, concurrent marking, " +
    "background compilation), libuv's pool (file writes, DNS), the rest\n"
)
console.table(CASES.flatMap(({ name }) =>
  COMPARED.map((kind) => {
    const g = byGroup[name]![kind]!
    return { case: name, server: kind, main: us(g.main), v8_workers: us(g.v8), libuv: us(g.libuv), other: us(g.other) }
  })
))
await db.end()
process.exit(0)
