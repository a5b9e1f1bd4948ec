// `npm run bench:alloc-profile` (not part of `npm run bench`): *where* each request's bytes are
// allocated, the service beside the minimal Effect 4 floor, on the cheap requests of
// bench/request-cost.ts. bench/allocation.ts counts the bytes; this names the code. Each server runs
// V8's sampling heap profiler (bench/alloc-sampler.mjs, loaded with `--import`), started after a
// warm-up and stopped after a fixed number of signed requests (32 connections); the sampled bytes,
// garbage included, are summed per request by the function that allocated them. Printed per case:
// the functions whose allocation differs most between the service and the floor (a copy of a `Map`
// shows as the builtins `next` and `set` under `Context.js`, say), then the service's bytes by the
// nearest of its own frames on the stack (src/ or schema/: which of our code paths led there).
// Sampling is statistical (an allocation every 128 bytes or so): read KB, not bytes.
// BENCH_ALLOC_PROFILE_REQUESTS (5000), BENCH_ALLOC_PROFILE_CASE (get, post or both),
// BENCH_ALLOC_PROFILE_TOP (25 rows), BENCH_NO_BUILD=1.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"

import { projectRoot } from "../src/root.js"
import { type LoadSpec, runLoad } from "./load.js"
import { cheapRequestsSetup, type Kind, startServer, stopServer } from "./servers.js"
import { log } from "./support.js"

const REQUESTS = Number(process.env.BENCH_ALLOC_PROFILE_REQUESTS ?? 5_000)
const WARMUP = 3_000
const TOP = Number(process.env.BENCH_ALLOC_PROFILE_TOP ?? 25)
const WHICH = process.env.BENCH_ALLOC_PROFILE_CASE ?? "both"
if (!["get", "post", "both"].includes(WHICH)) throw new Error(`BENCH_ALLOC_PROFILE_CASE is ${WHICH}: get, post or both`)
const SAMPLER = path.join(projectRoot(), "bench", "alloc-sampler.mjs")
const SERVERS: ReadonlyArray<Kind> = ["service", "effect"]

interface SampledNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<SampledNode>
}

/** Where a frame's code lives, short: a package's file, one of ours, or a builtin. */
const frameName = ({ functionName, lineNumber, url }: SampledNode["callFrame"]): string => {
  const file = url.replace(/^file:\/\//, "").replace(/.*\/node_modules\//, "").replace(/.*\/dist\//, "")
  return file === "" ? `${functionName || "(anonymous)"} (builtin)` : `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`
}

const isOurs = (frame: string): boolean => / (src|schema)\//.test(frame)

/** KB per request by allocating function, and by the nearest frame of ours on the stack. */
const summarise = (head: SampledNode, requests: number) => {
  const bySelf = new Map<string, number>()
  const byOurs = new Map<string, number>()
  let total = 0
  const walk = (node: SampledNode, nearestOurs: string) => {
    const frame = frameName(node.callFrame)
    const ours = isOurs(frame) ? frame : nearestOurs
    if (node.selfSize > 0) {
      const kb = node.selfSize / 1024 / requests
      total += kb
      bySelf.set(frame, (bySelf.get(frame) ?? 0) + kb)
      byOurs.set(ours, (byOurs.get(ours) ?? 0) + kb)
    }
    for (const child of node.children) walk(child, ours)
  }
  walk(head, "(none of ours)")
  return { total, bySelf, byOurs }
}

const { client, db, matchmakerId, url } = await cheapRequestsSetup()
interface Case {
  readonly key: string
  readonly name: string
  readonly spec: Omit<LoadSpec, "targets" | "seconds" | "connections">
}
const ALL_CASES: ReadonlyArray<Case> = [
  { key: "get", name: "GET /matchmakers/{id}", spec: { method: "GET", path: `/api/open/v1/matchmakers/${matchmakerId}` } },
  {
    key: "post",
    name: "POST /companies",
    spec: {
      method: "POST",
      path: "/api/open/v1/companies",
      body: (i: number) => JSON.stringify({ name: `采样公司${Date.now()}-${i}`, city: "北京" })
    }
  }
]
const CASES = ALL_CASES.filter((c) => WHICH === "both" || c.key === WHICH)

const dir = mkdtempSync(path.join(tmpdir(), "alloc-sampler-"))
const waitFor = async (file: string, what: string) => {
  const deadline = Date.now() + 60_000
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the server did not ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const results = new Map<string, ReturnType<typeof summarise>>()
try {
  for (const [i, kind] of SERVERS.entries()) {
    for (const c of CASES) {
      const file = path.join(dir, `${kind}-${c.key}.heapprofile`)
      const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: "Info", ALLOC_SAMPLER_FILE: file, NODE_OPTIONS: `--import ${SAMPLER}` }
      // A server per case, so that one case's profile holds none of the other's.
      const server = await startServer(kind, 18_620 + i, env)
      try {
        const targets = [{ ...client, port: server.port }]
        await runLoad({ ...c.spec, targets, connections: 32, seconds: 600, requests: WARMUP })
        process.kill(server.child.pid!, "SIGUSR2")
        await waitFor(`${file}.started`, "start sampling")
        const load = await runLoad({ ...c.spec, targets, connections: 32, seconds: 600, requests: REQUESTS })
        const failed = Object.keys(load.statuses).filter((status) => status !== "200")
        if (failed.length > 0) throw new Error(`${kind} answered ${c.name} with ${JSON.stringify(load.statuses)}`)
        process.kill(server.child.pid!, "SIGUSR2")
        await waitFor(file, "write its profile")
        const profile = JSON.parse(readFileSync(file, "utf8")) as { readonly head: SampledNode }
        results.set(`${kind} ${c.key}`, summarise(profile.head, load.requests))
      } finally {
        await stopServer(server)
      }
      log(`bench: ${kind} sampled on ${c.name}`)
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}

const kb = (x: number | undefined) => Number((x ?? 0).toFixed(2))
for (const c of CASES) {
  const service = results.get(`service ${c.key}`)!
  const floor = results.get(`effect ${c.key}`)!
  process.stdout.write(
    `\nAllocation by function, ${c.name} (${REQUESTS} requests, sampled): service ${service.total.toFixed(1)} KB a request, ` +
      `Effect floor ${floor.total.toFixed(1)}; the ${TOP} functions that differ most\n`
  )
  const frames = new Set([...service.bySelf.keys(), ...floor.bySelf.keys()])
  console.table(
    [...frames]
      .map((frame) => ({ frame, service: service.bySelf.get(frame) ?? 0, floor: floor.bySelf.get(frame) ?? 0 }))
      .sort((a, b) => Math.abs(b.service - b.floor) - Math.abs(a.service - a.floor))
      .slice(0, TOP)
      .map((r) => ({ function: r.frame, "service KB": kb(r.service), "Effect floor KB": kb(r.floor), difference: kb(r.service - r.floor) }))
  )
  process.stdout.write(`\nThe service's allocation on ${c.name} by the nearest frame of its own code (src/, schema/) on the stack\n`)
  console.table(
    [...service.byOurs].sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([frame, x]) => ({ "nearest own frame": frame, KB: kb(x) }))
  )
}
await db.end()
process.exit(0)
