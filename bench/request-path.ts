// `npm run bench` (request path): the service (compiled, `node dist/src/main.js`) beside its floor
// (bench/floor/server.ts, compiled alike: raw node:http + pg doing the same work per request), each alone in turn
// on the same database and measured by the same signing load generator (bench/load.ts), over
// 200,000 guests. Prints throughput and p99 of both and their ratios for GET /matchmakers/{id},
// POST /companies and GET /guests (with the floor also counting every row, as the service did
// before its counters), two API processes against one with many clients, and the resident memory
// of both after a soak. BENCH_SECONDS (15), BENCH_SOAK_SECONDS (300), BENCH_GUESTS (200000).
import { type ChildProcess, execSync, spawn } from "node:child_process"
import { readFileSync } from "node:fs"

import pg from "pg"

import { ALL_PERMISSIONS } from "../schema/Common.js"
import { makeSecretBox } from "../src/auth/SecretBox.js"
import { liveSigner } from "../src/auth/Signer.js"
import { newNonce } from "../src/client/Client.js"
import { NODE_FLAGS } from "../src/nodeFlags.js"
import { projectRoot } from "../src/root.js"
import { migrateDatabase } from "../src/sql/migrateUrl.js"
import { type LoadResult, type LoadSpec, runLoad, type Target } from "./load.js"
import { GENERATE, GUEST_INSERT } from "./seed.js"
import { benchDatabaseUrl, log } from "./support.js"

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15)
const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 300)
const GUESTS = Number(process.env.BENCH_GUESTS ?? 200_000)
const root = projectRoot()

const url = await benchDatabaseUrl()
await migrateDatabase(url)
const db = new pg.Client({ connectionString: url })
await db.connect()

// Data: the guests (kept across runs), one matchmaker, clients that are not rate limited.
const { rows: [{ n }] } = await db.query("SELECT count(*)::int AS n FROM guests")
if (n < GUESTS) {
  log(`bench: generating ${GUESTS - n} guests (kept for later runs)…`)
  const { rows: [{ first }] } = await db.query(GENERATE)
  for (let from = n + 1; from <= GUESTS; from += 20000) await db.query(GUEST_INSERT(Number(first), from, Math.min(GUESTS, from + 19999)))
  await db.query("VACUUM ANALYZE guests")
}
const { rows: [{ id: matchmakerId }] } = await db.query(
  "INSERT INTO matchmakers (name, phone) VALUES ('压测红娘', '13800138000') RETURNING id"
)
const box = makeSecretBox(process.env.SECRET_KEY!)
const newClients = async (count: number): Promise<Array<Omit<Target, "port">>> => {
  const made: Array<Omit<Target, "port">> = []
  for (let i = 0; i < count; i++) {
    const appKey = `ak_bench_${Date.now().toString(36)}_${i}`
    const appSecret = `bench-secret-${i}-${Math.random().toString(36).slice(2)}`
    await db.query(
      `INSERT INTO clients (app_key, name, permissions, masking, secret_enc, rate_rps, rate_burst)
       VALUES ($1, 'bench', $2::text[], false, $3, 1000000, 1000000)`,
      [appKey, ALL_PERMISSIONS, box.seal(appSecret)]
    )
    made.push({ appKey, appSecret })
  }
  return made
}
const [one] = await newClients(1)
const many = await newClients(16)

// The processes.
log("bench: building the service (npm run build)…")
execSync("npm run -s build", { cwd: root, stdio: "inherit" })
const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: "Info" }
const start = (name: string, args: ReadonlyArray<string>, port: number, extra: Record<string, string> = {}) =>
  new Promise<{ name: string; child: ChildProcess; port: number }>((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: { ...env, PORT: String(port), ...extra },
      stdio: ["ignore", "ignore", "ignore"]
    })
    const deadline = Date.now() + 60_000
    const poll = () =>
      fetch(`http://127.0.0.1:${port}${name === "floor" || name === "floor-count" ? "/nowhere" : "/healthz"}`).then(
        () => resolve({ name, child, port }),
        () => (Date.now() > deadline ? reject(new Error(`${name} did not start`)) : setTimeout(poll, 200))
      )
    poll()
  })
const stop = (p: { child: ChildProcess }) =>
  new Promise<void>((resolve) => {
    p.child.once("exit", () => resolve())
    p.child.kill("SIGTERM")
  })
const rssMb = (p: { child: ChildProcess }): number => {
  const status = readFileSync(`/proc/${p.child.pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024
}

const service = await start("service", [...NODE_FLAGS, "dist/src/main.js"], 18_181)
const floor = await start("floor", ["dist/bench/floor/server.js"], 18_182)
const at = (p: { port: number }, c: Omit<Target, "port">): Target => ({ ...c, port: p.port })

// Same bytes: the service and the floor answer the same reads identically.
const sameBytes = async (path: string) => {
  const body = async (p: { port: number }) => {
    const timestamp = String(Math.floor(Date.now() / 1000))
    const nonce = newNonce()
    const signature = liveSigner.sign(one!.appSecret, {
      method: "GET",
      path,
      rawQuery: "",
      appKey: one!.appKey,
      timestamp,
      nonce,
      body: new Uint8Array(0)
    })
    const res = await fetch(`http://127.0.0.1:${p.port}${path}`, {
      headers: { "x-app-key": one!.appKey, "x-timestamp": timestamp, "x-nonce": nonce, "x-signature": signature }
    })
    return await res.text()
  }
  const [a, b] = [await body(service), await body(floor)]
  if (a !== b) throw new Error(`the floor's answer to ${path} differs from the service's:\n${a.slice(0, 400)}\n${b.slice(0, 400)}`)
}
await sameBytes(`/api/open/v1/matchmakers/${matchmakerId}`)
await sameBytes("/api/open/v1/guests")
log("bench: the floor answers byte for byte as the service does")

const measure = async (p: { port: number }, spec: Omit<LoadSpec, "targets" | "seconds">, clients = [one!]): Promise<LoadResult> => {
  const targets = clients.map((c) => at(p, c))
  await runLoad({ ...spec, targets, seconds: Math.min(3, SECONDS) })
  return runLoad({ ...spec, targets, seconds: SECONDS })
}

interface Row {
  readonly case: string
  readonly service_rps: number
  readonly floor_rps: number
  readonly throughput_ratio: number
  readonly service_p99_ms: number
  readonly floor_p99_ms: number
  readonly p99_ratio: number
  readonly errors: string
}
const rows: Array<Row> = []
const compare = async (name: string, spec: Omit<LoadSpec, "targets" | "seconds">) => {
  const s = await measure(service, spec)
  const f = await measure(floor, spec)
  const errors = [s, f].map((r) => Object.entries(r.statuses).filter(([k]) => k !== "200").map(([k, v]) => `${k}×${v}`).join(" ") || "-")
  rows.push({
    case: name,
    service_rps: Math.round(s.rps),
    floor_rps: Math.round(f.rps),
    throughput_ratio: Number((s.rps / f.rps).toFixed(2)),
    service_p99_ms: Number(s.p99.toFixed(1)),
    floor_p99_ms: Number(f.p99.toFixed(1)),
    p99_ratio: Number((s.p99 / f.p99).toFixed(2)),
    errors: errors.join(" / ")
  })
  log(`bench: ${name} done`)
}

for (const connections of [32, 64]) {
  await compare(`GET /matchmakers/{id}, ${connections} connections`, {
    method: "GET",
    path: `/api/open/v1/matchmakers/${matchmakerId}`,
    connections
  })
  await compare(`POST /companies, ${connections} connections`, {
    method: "POST",
    path: "/api/open/v1/companies",
    body: (i) => JSON.stringify({ name: `压测公司${i}`, city: "北京" }),
    connections
  })
}
await compare("GET /guests (page 1 of 20, unfiltered), 32 connections", { method: "GET", path: "/api/open/v1/guests", connections: 32 })

// Before the counters: the floor counting every row on every page, as the service did.
await stop(floor)
const counting = await start("floor-count", ["dist/bench/floor/server.js"], 18_183, { FLOOR_EXACT_COUNT: "1" })
const guestsNow = await measure(service, { method: "GET", path: "/api/open/v1/guests", connections: 32 })
const guestsBefore = await measure(counting, { method: "GET", path: "/api/open/v1/guests", connections: 32 })
await stop(counting)

// Two API processes against one, 16 clients spread over them.
const second = await start("service-2", [...NODE_FLAGS, "dist/src/main.js"], 18_184)
const spread = { method: "GET" as const, path: `/api/open/v1/matchmakers/${matchmakerId}`, connections: 64 }
const oneProcess = await measure(service, spread, many)
await runLoad({ ...spread, targets: many.map((c, i) => at(i % 2 === 0 ? service : second, c)), seconds: 3 })
const twoProcesses = await runLoad({ ...spread, targets: many.map((c, i) => at(i % 2 === 0 ? service : second, c)), seconds: SECONDS })
await stop(second)

process.stdout.write(
  `\nRequest path: the service beside its floor (raw node:http + pg, same work), ${GUESTS} guests, ${SECONDS} s per cell\n`
)
console.table(rows)
process.stdout.write(
  `GET /guests unfiltered: service ${Math.round(guestsNow.rps)} req/s with counters; ` +
    `floor counting every row (the service's old work) ${Math.round(guestsBefore.rps)} req/s: ` +
    `${(guestsNow.rps / guestsBefore.rps).toFixed(1)}× (target ≥ 5× before)\n`
)
process.stdout.write(
  `Two API processes vs one (16 clients, 64 connections, GET /matchmakers/{id}): ${Math.round(twoProcesses.rps)} vs ` +
    `${Math.round(oneProcess.rps)} req/s: ${(twoProcesses.rps / oneProcess.rps).toFixed(2)}×\n`
)

// Memory after a soak under load: a fresh service, then a fresh floor, each started for it.
await stop(service)
if (SOAK_SECONDS > 0) {
  const soak = { method: "GET" as const, path: "/api/open/v1/guests", connections: 32, seconds: SOAK_SECONDS }
  const soaked = await start("service", [...NODE_FLAGS, "dist/src/main.js"], 18_186)
  await runLoad({ ...soak, targets: [at(soaked, one!)] })
  const serviceMb = rssMb(soaked)
  await stop(soaked)
  const floorAgain = await start("floor", ["dist/bench/floor/server.js"], 18_185)
  await runLoad({ ...soak, targets: [at(floorAgain, one!)] })
  const floorMb = rssMb(floorAgain)
  await stop(floorAgain)
  process.stdout.write(
    `Memory after ${SOAK_SECONDS} s under load (GET /guests, 32 connections): service ${serviceMb.toFixed(0)} MB RSS, ` +
      `floor ${floorMb.toFixed(0)} MB: ${(serviceMb / floorMb).toFixed(2)}× (target ≤ 2×)\n`
  )
}
await db.end()
process.exit(0)
