// `npm run bench:variants` (not part of `npm run bench`): what a change costs, as the CPU per
// request of builds of the service side by side. BENCH_VARIANTS names the other builds, `name=dir`
// pairs comma separated (bench/paired.ts), each dir a checkout of the project where `npm install`
// and `npm run build` have run (a `git worktree` of another commit, say); this checkout's build is
// `current` and the Effect floor runs beside them as the reference. All start at once against the
// bench database, migrated to this checkout's schema (a build of an older commit has to work on it); after a warm-up of each, every round serves a fixed number of identical signed
// requests (32 connections) from each server in turn, the order rotating; a server's CPU over its
// turn (every thread's, from /proc, less its idle rate) is divided by the count. Printed: each
// server's median µs per request, and its *paired* ratio to `current` (the median of the per-round
// ratios: servers measured seconds apart share the machine's state, which the ratio cancels) with
// the quartiles of those ratios (both sides of 1: the builds were not told apart), then the
// per-thread split of bench/request-cost.ts. Throughput runs of one build on this shared host
// differ by ±15% (docs/benchmarks.md); paired ratios over 11 rounds resolve a few percent when the
// host is quiet, not when it is busy (the quartiles tell which).
// BENCH_VARIANTS_CASE (post: POST /companies, or get: GET /matchmakers/{id}), BENCH_COST_REQUESTS
// (2000 per turn), BENCH_COST_ROUNDS (11), BENCH_NO_BUILD=1 (skips building this checkout). Linux only.
import { existsSync } from "node:fs"
import path from "node:path"

import { projectRoot } from "../src/root.js"
import { costOfTurn, hasProc, idleRateOf, THREAD_GROUPS, type ThreadGroup } from "./cpu.js"
import { runLoad } from "./load.js"
import { median, pairedQuartiles, pairedRatio, parseVariants } from "./paired.js"
import { cheapRequestsSetup, KINDS, type ProcessSpec, type Started, startProcess, stopServer } from "./servers.js"
import { log } from "./support.js"

if (!hasProc()) {
  process.stdout.write("\nVariants: skipped (they read each server's CPU time from /proc, which this system has not)\n")
  process.exit(0)
}

const REQUESTS = Number(process.env.BENCH_COST_REQUESTS ?? 2000)
const ROUNDS = Number(process.env.BENCH_COST_ROUNDS ?? 11)
const CASE = process.env.BENCH_VARIANTS_CASE ?? "post"
if (CASE !== "post" && CASE !== "get") throw new Error(`BENCH_VARIANTS_CASE is ${CASE}: post or get`)

const variants = parseVariants(process.env.BENCH_VARIANTS ?? "", process.cwd())
for (const v of variants) {
  if (!existsSync(path.join(v.dir, KINDS.service.script))) {
    throw new Error(`BENCH_VARIANTS: ${v.name} has no build in ${v.dir} (run npm install and npm run build there)`)
  }
}
const SERVERS: ReadonlyArray<{ readonly name: string; readonly spec: ProcessSpec }> = [
  { name: "current", spec: KINDS.service },
  ...variants.map((v) => ({ name: v.name, spec: { ...KINDS.service, label: v.name, script: path.join(v.dir, KINDS.service.script) } })),
  { name: "Effect floor", spec: KINDS.effect }
]

const { client, db, matchmakerId, url } = await cheapRequestsSetup()
const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: "Info" }
const spec = CASE === "get"
  ? { method: "GET" as const, path: `/api/open/v1/matchmakers/${matchmakerId}` }
  : {
    method: "POST" as const,
    path: "/api/open/v1/companies",
    body: (i: number) => JSON.stringify({ name: `压测公司${Date.now()}-${i}`, city: "北京" })
  }

const started: Array<{ readonly name: string; readonly server: Started }> = []
const costs = new Map<string, Array<number>>()
const groupCosts = new Map<string, Array<Record<ThreadGroup, number>>>()
try {
  for (const [i, s] of SERVERS.entries()) {
    started.push({ name: s.name, server: await startProcess(s.spec, 18_400 + i, env) })
    costs.set(s.name, [])
    groupCosts.set(s.name, [])
  }
  log(`bench: ${started.map((s) => s.name).join(", ")} started (${projectRoot()} is current)`)
  const load = (server: Started) =>
    runLoad({ ...spec, targets: [{ ...client, port: server.port }], connections: 32, seconds: 600, requests: REQUESTS })
  const idle = new Map<string, number>()
  for (const { name, server } of started) {
    await load(server) // warm-up: the JIT, the pools, the caches
    idle.set(name, await idleRateOf(server.child.pid!))
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < started.length; i++) {
      const { name, server } = started[(round + i) % started.length]!
      const { cost: turn, result } = await costOfTurn(server.child.pid!, idle.get(name)!, () => load(server))
      const other = Object.entries(result.statuses).filter(([status]) => status !== "200")
      if (other.length > 0) throw new Error(`${name} answered ${JSON.stringify(result.statuses)}`)
      costs.get(name)!.push(turn.us)
      groupCosts.get(name)!.push(turn.byGroup)
    }
    log(`bench: round ${round + 1} of ${ROUNDS}`)
  }
} finally {
  for (const { server } of started) await stopServer(server)
}

const current = costs.get("current")!
const us = (x: number) => Number(x.toFixed(1))
process.stdout.write(
  `\nVariants: CPU µs per request, ${CASE === "post" ? "POST /companies" : "GET /matchmakers/{id}"} ` +
    `(${REQUESTS} requests × ${ROUNDS} rounds, 32 connections), and each against current, paired round by round\n`
)
console.table(started.map(({ name }) => {
  const c = costs.get(name)!
  return {
    server: name,
    "µs / request (median)": us(median(c)),
    "against current (paired)": Number(pairedRatio(c, current).toFixed(3)),
    "quartiles": pairedQuartiles(c, current).map((q) => q.toFixed(3)).join("–"),
    "rounds (µs)": c.map((x) => x.toFixed(0)).join(" ")
  }
}))
process.stdout.write("\nBy thread (median of the rounds; idle included): main, V8's workers, libuv's pool, the rest\n")
console.table(started.map(({ name }) => {
  const rounds = groupCosts.get(name)!
  return { server: name, ...Object.fromEntries(THREAD_GROUPS.map((g) => [g, us(median(rounds.map((r) => r[g])))])) }
}))
await db.end()
process.exit(0)
