// `npm run bench` (request path): the service (compiled, `node dist/src/main.js`) beside three floors
// doing the same work per request (client row, AES-GCM secret, HMAC over the canonical string, the
// nonce+rate admission statement, the endpoint's SQL, the envelope, X-Request-Id, one log line):
// - the raw floor (bench/floor: node:http + pg, no framework),
// - the Effect floor (bench/effect-floor: a minimal Effect 4 HttpApi server, NodeHttpServer + PgClient),
// - the Fastify floor (bench/fastify-floor: Fastify 5 + pg),
// all compiled, all run with the service's Node flags (src/nodeFlags.ts), each alone in turn under
// load on the same database and measured by the same signing load generator (bench/load.ts), over
// 200,000 guests; the four-server cells in BENCH_ROUNDS (3) rounds each, the servers taking turns. Every server's answers are first checked byte for byte against the service's.
// Prints throughput and p99 of the service and the raw floor and their ratios for GET
// /matchmakers/{id}, POST /companies, POST /guests (under one company and one matchmaker, whose
// guest_count every creation moves), PUT /guests/{id} (512 guests in turn, each renamed and moved
// between two matchmakers: both counters and three events per request) and GET /guests (with the raw floor also counting every row,
// as the service did before its counters), then the four servers side by side on the first two
// (service / Effect floor, service / raw floor, service / Fastify floor and each floor against the
// raw one; p99 against the raw floor's; the first three), two API processes against one with many clients, and the
// resident memory after a soak: the service and the raw floor on GET /guests, the four servers on
// GET /matchmakers/{id}, each server started fresh for it. BENCH_SECONDS (15), BENCH_SOAK_SECONDS
// (300; 0 skips the soaks), BENCH_GUESTS (200000); BENCH_SKIP=fastify (or effect, or both, comma
// separated) leaves floors out, their columns then show "-"; BENCH_ONLY=PUT /guests (parts of cell
// names, comma separated) runs only the four-server cells so named, prints them and ends.
import { execSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import path from "node:path"

import { liveSigner } from "../src/auth/Signer.js"
import { newNonce } from "../src/client/Client.js"
import { projectRoot } from "../src/root.js"
import { type LoadResult, type LoadSpec, runLoad, type Target } from "./load.js"
import { GENERATE, GUEST_INSERT } from "./seed.js"
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

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15)
const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 300)
const GUESTS = Number(process.env.BENCH_GUESTS ?? 200_000)
const root = projectRoot()

/** The four in the order they are measured and printed; a floor left out by BENCH_SKIP is not run. */
const COMPARED = comparedServers()

const { db, url } = await benchDatabase()
await removeBenchCompanies(db)

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
// POST /guests' company (every guest is created under it and the matchmaker, whose guest_count moves).
const { rows: [{ id: guestCompanyId }] } = await db.query("INSERT INTO companies (name) VALUES ('压测公司-嘉宾') RETURNING id")
// PUT /guests/{id}'s guests: PUT_GUESTS of that company, each request one of them in turn, moving it
// between the matchmaker and a second one (each move: both counters and three events), and renaming it.
const PUT_GUESTS = 512
const { rows: [{ id: otherMatchmakerId }] } = await db.query(
  "INSERT INTO matchmakers (name, phone) VALUES ('压测红娘', '13800138002') RETURNING id"
)
const { rows: putRows } = await db.query<{ id: number }>(
  `INSERT INTO guests (name, gender, company_id, matchmaker_id)
   SELECT '压测嘉宾改' || n, 'female', $1, $2 FROM generate_series(1, $3::int) AS n RETURNING id::int AS id`,
  [guestCompanyId, matchmakerId, PUT_GUESTS]
)
await db.query("UPDATE matchmakers SET guest_count = guest_count + $2 WHERE id = $1", [matchmakerId, PUT_GUESTS])
const putGuestIds = putRows.map((r) => r.id)
const [one] = await newClients(db, 1)
const many = await newClients(db, 16)
// Company scopes (DECISIONS §14): a company of its own, a matchmaker of it, and a client bound to
// it, beside an unscoped client doing the same requests (kept across runs, like the guests).
const scopeCompany = Number(
  (await db.query("SELECT id FROM companies WHERE name = '压测范围公司'")).rows[0]?.id ??
    (await db.query("INSERT INTO companies (name) VALUES ('压测范围公司') RETURNING id")).rows[0].id
)
const { rows: [{ id: scopedMatchmakerId }] } = await db.query(
  "INSERT INTO matchmakers (name, phone, company_id) VALUES ('压测范围红娘', '13800138001', $1) RETURNING id",
  [scopeCompany]
)
const { rows: [{ id: scopedGuestId }] } = await db.query(
  "INSERT INTO guests (name, gender, company_id) VALUES ('压测范围嘉宾', 'female', $1) RETURNING id",
  [scopeCompany]
)
const [scopedClient] = await newClients(db, 1)
await db.query("INSERT INTO client_companies (client_id, company_id) SELECT id, $2 FROM clients WHERE app_key = $1", [
  scopedClient!.appKey,
  scopeCompany
])
await db.query("UPDATE clients SET scoped = true WHERE app_key = $1", [scopedClient!.appKey])

// The processes, compiled alike and run with the same Node flags.
log("bench: building the service and the floors (npm run build)…")
execSync("npm run -s build", { cwd: root, stdio: "inherit" })
for (const kind of COMPARED) {
  if (!existsSync(path.join(root, KINDS[kind].script))) {
    throw new Error(
      `${KINDS[kind].script} is missing after the build: tsconfig.build.json must include bench/floor, bench/effect-floor ` +
        `and bench/fastify-floor (BENCH_SKIP=effect,fastify leaves the last two out)`
    )
  }
}
const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: "Info" }

/** BENCH_PORT_OFFSET (0) moves every port, for a run beside another one on the same machine. */
const PORT_OFFSET = Number(process.env.BENCH_PORT_OFFSET ?? 0)
const start = (kind: Kind, port: number, extra: Record<string, string> = {}) => startServer(kind, port + PORT_OFFSET, env, extra)
const stop = stopServer
const rssMb = (p: Server): number => {
  const status = readFileSync(`/proc/${p.child.pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024
}
const at = (p: { port: number }, c: Omit<Target, "port">): Target => ({ ...c, port: p.port })

const PORTS: Record<Kind, number> = { service: 18_181, raw: 18_182, effect: 18_187, fastify: 18_188 }
const servers = new Map<Kind, Server>()
for (const kind of COMPARED) servers.set(kind, await start(kind, PORTS[kind]))
const server = (kind: Kind): Server => servers.get(kind)!
const service = server("service")
const floor = server("raw")

// Same bytes: every server answers as the service does, byte for byte (POST: but for the new row's
// id and instants), with the request id and rate-limit headers and a JSON media type.
interface Answer {
  readonly status: number
  readonly body: string
  readonly headers: Headers
}
const ask = async (p: { port: number }, method: "GET" | "POST" | "PUT", urlPath: string, body = ""): Promise<Answer> => {
  const bytes = Buffer.from(body)
  const timestamp = String(Math.floor(Date.now() / 1000))
  const nonce = newNonce()
  const signature = liveSigner.sign(one!.appSecret, {
    method,
    path: urlPath,
    rawQuery: "",
    appKey: one!.appKey,
    timestamp,
    nonce,
    body: bytes
  })
  const res = await fetch(`http://127.0.0.1:${p.port}${urlPath}`, {
    method,
    headers: {
      "x-app-key": one!.appKey,
      "x-timestamp": timestamp,
      "x-nonce": nonce,
      "x-signature": signature,
      ...(bytes.length > 0 ? { "content-type": "application/json" } : {})
    },
    ...(bytes.length > 0 ? { body: bytes } : {})
  })
  return { status: res.status, body: await res.text(), headers: res.headers }
}
const mediaType = (a: Answer) => (a.headers.get("content-type") ?? "").split(";")[0]!.trim()
const SIGNED_HEADERS = ["x-request-id", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "ratelimit-policy"]
const sameAnswers = async (
  kinds: ReadonlyArray<Kind>,
  method: "GET" | "POST" | "PUT",
  urlPath: string,
  body = "",
  normalise: (text: string) => string = (text) => text
) => {
  const want = await ask(service, method, urlPath, body)
  if (want.status !== 200) throw new Error(`the service answered ${method} ${urlPath} with ${want.status}: ${want.body.slice(0, 400)}`)
  for (const kind of kinds) {
    const got = kind === "service" ? want : await ask(server(kind), method, urlPath, body)
    const problems = [
      got.status !== want.status ? `status ${got.status}, not ${want.status}` : undefined,
      normalise(got.body) !== normalise(want.body) ? `body\n${got.body.slice(0, 400)}\nnot\n${want.body.slice(0, 400)}` : undefined,
      mediaType(got) !== mediaType(want) ? `media type ${mediaType(got)}, not ${mediaType(want)}` : undefined,
      ...SIGNED_HEADERS.filter((h) => !got.headers.has(h)).map((h) => `no ${h} header`)
    ].filter((p) => p !== undefined)
    if (problems.length > 0) {
      throw new Error(`the ${KINDS[kind].label}'s answer to ${method} ${urlPath} differs from the service's: ${problems.join("; ")}`)
    }
  }
}
/** A new company's answer without what the database assigns: its id and its instants. */
const withoutNewRow = (text: string) => text.replace(/"id":\d+/, `"id":0`).replace(/"(created_at|updated_at)":"[^"]*"/g, `"$1":""`)
await sameAnswers(COMPARED, "GET", `/api/open/v1/matchmakers/${matchmakerId}`)
await sameAnswers(COMPARED, "POST", "/api/open/v1/companies", JSON.stringify({ name: "压测公司-同答", city: "北京" }), withoutNewRow)
const newGuest = (i: number | string) =>
  JSON.stringify({ name: `压测嘉宾${i}`, gender: "female", company_id: Number(guestCompanyId), matchmaker_id: Number(matchmakerId) })
await sameAnswers(COMPARED, "POST", "/api/open/v1/guests", newGuest("同答"), withoutNewRow)
// PUT: the service moves the guest to the second matchmaker, then each floor sends the same change.
const putGuest = (i: number) => `/api/open/v1/guests/${putGuestIds[i % PUT_GUESTS]}`
const guestChange = (i: number) =>
  JSON.stringify({
    name: `压测嘉宾改${i % 1000}`,
    matchmaker_id: Number(Math.floor(i / PUT_GUESTS) % 2 === 0 ? otherMatchmakerId : matchmakerId)
  })
const withoutNow = (text: string) => text.replace(/"updated_at":"[^"]*"/g, `"updated_at":""`)
await sameAnswers(COMPARED, "PUT", putGuest(0), guestChange(0), withoutNow)
await sameAnswers(["raw"], "GET", "/api/open/v1/guests")
log(
  `bench: ${
    COMPARED.filter((k) => k !== "service").map((k) => `the ${KINDS[k].label}`).join(", ")
  } answer byte for byte as the service does`
)

const measure = async (p: { port: number }, spec: Omit<LoadSpec, "targets" | "seconds">, clients = [one!]): Promise<LoadResult> => {
  const targets = clients.map((c) => at(p, c))
  await runLoad({ ...spec, targets, seconds: Math.min(3, SECONDS) })
  return runLoad({ ...spec, targets, seconds: SECONDS })
}

const ratio = (a: number, b: number) => Number((a / b).toFixed(2))
const non200 = (r: LoadResult) => Object.entries(r.statuses).filter(([k]) => k !== "200").map(([k, v]) => `${k}×${v}`).join(" ") || "-"

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
const serviceBesideFloor = (name: string, s: LoadResult, f: LoadResult) =>
  rows.push({
    case: name,
    service_rps: Math.round(s.rps),
    floor_rps: Math.round(f.rps),
    throughput_ratio: ratio(s.rps, f.rps),
    service_p99_ms: Number(s.p99.toFixed(1)),
    floor_p99_ms: Number(f.p99.toFixed(1)),
    p99_ratio: ratio(s.p99, f.p99),
    errors: `${non200(s)} / ${non200(f)}`
  })

/** Every server's result per case, for the side-by-side tables. */
const results: Array<{ readonly case: string; readonly of: Partial<Record<Kind, LoadResult>> }> = []
/**
 * Rounds of each cell: the servers take turns (each round starts with the next one), so that what
 * the machine does meanwhile falls on all of them alike, not on whichever ran during it.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
/** One server's rounds of a cell as one result: their mean throughput, the median of their p99s. */
const combined = (rounds: ReadonlyArray<LoadResult>): LoadResult => {
  const middle = <A>(xs: ReadonlyArray<A>, by: (a: A) => number) => [...xs].sort((a, b) => by(a) - by(b))[Math.floor(xs.length / 2)]!
  const statuses: Record<string, number> = {}
  for (const r of rounds) for (const [status, n] of Object.entries(r.statuses)) statuses[status] = (statuses[status] ?? 0) + n
  return {
    rps: rounds.reduce((sum, r) => sum + r.rps, 0) / rounds.length,
    p50: middle(rounds, (r) => r.p50).p50,
    p99: middle(rounds, (r) => r.p99).p99,
    requests: rounds.reduce((sum, r) => sum + r.requests, 0),
    statuses
  }
}
/**
 * BENCH_ONLY (comma separated): only the four-server cells whose name contains one of these (say
 * `PUT /guests`), then their tables, and nothing after them (a short A/B run).
 */
const ONLY = (process.env.BENCH_ONLY ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "")
const compareAll = async (name: string, spec: Omit<LoadSpec, "targets" | "seconds">) => {
  if (ONLY.length > 0 && !ONLY.some((part) => name.includes(part))) return
  const rounds = new Map<Kind, Array<LoadResult>>(COMPARED.map((kind) => [kind, []]))
  for (const kind of COMPARED) await runLoad({ ...spec, targets: [at(server(kind), one!)], seconds: Math.min(3, SECONDS) }) // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < COMPARED.length; i++) {
      const kind = COMPARED[(round + i) % COMPARED.length]!
      rounds.get(kind)!.push(await runLoad({ ...spec, targets: [at(server(kind), one!)], seconds: SECONDS / ROUNDS }))
    }
  }
  const of: Partial<Record<Kind, LoadResult>> = {}
  for (const kind of COMPARED) of[kind] = combined(rounds.get(kind)!)
  serviceBesideFloor(name, of.service!, of.raw!)
  results.push({ case: name, of })
  log(`bench: ${name} done`)
}

for (const connections of [32, 64]) {
  await compareAll(`GET /matchmakers/{id}, ${connections} connections`, {
    method: "GET",
    path: `/api/open/v1/matchmakers/${matchmakerId}`,
    connections
  })
  await compareAll(`POST /companies, ${connections} connections`, {
    method: "POST",
    path: "/api/open/v1/companies",
    body: (i) => JSON.stringify({ name: `压测公司${i}`, city: "北京" }),
    connections
  })
  await compareAll(`POST /guests, ${connections} connections`, {
    method: "POST",
    path: "/api/open/v1/guests",
    body: newGuest,
    connections
  })
  await compareAll(`PUT /guests/{id}, ${connections} connections`, {
    method: "PUT",
    path: putGuest,
    body: guestChange,
    connections
  })
}
const rps = (r: LoadResult | undefined) => (r === undefined ? "-" : Math.round(r.rps))
const p99 = (r: LoadResult | undefined) => (r === undefined ? "-" : Number(r.p99.toFixed(1)))
const over = (a: LoadResult | undefined, b: LoadResult | undefined, f: (r: LoadResult) => number) =>
  a === undefined || b === undefined ? "-" : ratio(f(a), f(b))
const byRps = (r: LoadResult) => r.rps
const byP99 = (r: LoadResult) => r.p99
const FLOOR_STACKS: Record<Kind, string> = {
  service: "",
  effect: "the Effect floor: Effect 4 HttpApi + PgClient",
  raw: "the raw floor: node:http + pg",
  fastify: "the Fastify floor: Fastify 5 + pg"
}
const printSideBySide = () => {
  process.stdout.write(
    `\nThe service beside its floors doing the same work (${
      COMPARED.filter((k) => k !== "service").map((k) => FLOOR_STACKS[k]).join("; ")
    }), ` +
      `same load, one at a time: throughput (req/s) and its ratios\n`
  )
  console.table(results.map(({ case: name, of }) => ({
    case: name,
    service: rps(of.service),
    effect_floor: rps(of.effect),
    raw_floor: rps(of.raw),
    fastify_floor: rps(of.fastify),
    "service/effect": over(of.service, of.effect, byRps),
    "service/raw": over(of.service, of.raw, byRps),
    "service/fastify": over(of.service, of.fastify, byRps),
    "effect/raw": over(of.effect, of.raw, byRps),
    "fastify/raw": over(of.fastify, of.raw, byRps),
    errors: COMPARED.map((k) => non200(of[k]!)).join(" / ")
  })))
  process.stdout.write("p99 latency (ms), against the raw floor's\n")
  console.table(results.map(({ case: name, of }) => ({
    case: name,
    service: p99(of.service),
    effect_floor: p99(of.effect),
    raw_floor: p99(of.raw),
    fastify_floor: p99(of.fastify),
    "service/raw": over(of.service, of.raw, byP99),
    "effect/raw": over(of.effect, of.raw, byP99),
    "fastify/raw": over(of.fastify, of.raw, byP99),
    "service/effect": over(of.service, of.effect, byP99)
  })))
}

if (ONLY.length > 0) {
  for (const kind of COMPARED) await stop(server(kind))
  printSideBySide()
  await db.end()
  process.exit(0)
}
{
  const spec = { method: "GET" as const, path: "/api/open/v1/guests", connections: 32 }
  serviceBesideFloor("GET /guests (page 1 of 20, unfiltered), 32 connections", await measure(service, spec), await measure(floor, spec))
  log("bench: GET /guests done")
}

// The floors are not needed any more: the rest is the service's.
for (const kind of COMPARED) if (kind !== "service") await stop(server(kind))

// A scope costs nothing measurable: the same requests signed by an unscoped client and by one
// bound to the company (its reads add `company_id = ANY (...)` to the statement), taking turns.
const scopeRows: Array<Record<string, string | number>> = []
const scopeCell = async (name: string, spec: Omit<LoadSpec, "targets" | "seconds">, floorCase?: string) => {
  const runs: Record<"unscoped" | "scoped", Array<LoadResult>> = { unscoped: [], scoped: [] }
  const client = { unscoped: one!, scoped: scopedClient! }
  for (const who of ["unscoped", "scoped"] as const) {
    await runLoad({ ...spec, targets: [at(service, client[who])], seconds: Math.min(3, SECONDS) })
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const who of round % 2 === 0 ? (["unscoped", "scoped"] as const) : (["scoped", "unscoped"] as const)) {
      runs[who].push(await runLoad({ ...spec, targets: [at(service, client[who])], seconds: SECONDS / ROUNDS }))
    }
  }
  const [u, sc] = [combined(runs.unscoped), combined(runs.scoped)]
  const raw = floorCase === undefined ? undefined : results.find((r) => r.case === floorCase)?.of.raw
  scopeRows.push({
    case: name,
    unscoped_rps: Math.round(u.rps),
    scoped_rps: Math.round(sc.rps),
    "scoped/unscoped": ratio(sc.rps, u.rps),
    raw_floor_rps: raw === undefined ? "-" : Math.round(raw.rps),
    "unscoped/raw": raw === undefined ? "-" : ratio(u.rps, raw.rps),
    "scoped/raw": raw === undefined ? "-" : ratio(sc.rps, raw.rps),
    "p99 scoped/unscoped": ratio(sc.p99, u.p99),
    errors: `${non200(u)} / ${non200(sc)}`
  })
  log(`bench: ${name}, with and without a scope, done`)
}
await scopeCell("GET /matchmakers/{id} (a company's), 32 connections", {
  method: "GET",
  path: `/api/open/v1/matchmakers/${scopedMatchmakerId}`,
  connections: 32
}, "GET /matchmakers/{id}, 32 connections")
await scopeCell("GET /guests/{id} (a company's), 32 connections", {
  method: "GET",
  path: `/api/open/v1/guests/${scopedGuestId}`,
  connections: 32
}, "GET /matchmakers/{id}, 32 connections")
await scopeCell("POST /matchmakers (company_id named), 32 connections", {
  method: "POST",
  path: "/api/open/v1/matchmakers",
  body: (i) => JSON.stringify({ name: `压测范围${i % 1000}`, company_id: scopeCompany }),
  connections: 32
})

// Before the counters: the raw floor counting every row on every page, as the service did.
const counting = await start("raw", 18_183, { FLOOR_EXACT_COUNT: "1" })
const guestsNow = await measure(service, { method: "GET", path: "/api/open/v1/guests", connections: 32 })
const guestsBefore = await measure(counting, { method: "GET", path: "/api/open/v1/guests", connections: 32 })
await stop(counting)

// Two API processes against one, 16 clients spread over them.
const second = await start("service", 18_184)
const spread = { method: "GET" as const, path: `/api/open/v1/matchmakers/${matchmakerId}`, connections: 64 }
const oneProcess = await measure(service, spread, many)
await runLoad({ ...spread, targets: many.map((c, i) => at(i % 2 === 0 ? service : second, c)), seconds: 3 })
const twoProcesses = await runLoad({ ...spread, targets: many.map((c, i) => at(i % 2 === 0 ? service : second, c)), seconds: SECONDS })
await stop(second)
await stop(service)

process.stdout.write(
  `\nRequest path: the service beside its floor (raw node:http + pg, same work), ${GUESTS} guests, ${SECONDS} s per cell\n`
)
console.table(rows)
printSideBySide()

process.stdout.write(
  "\nCompany scopes: the same requests by an unscoped client and by one bound to the company (rounds taking turns), " +
    "beside the raw floor's GET /matchmakers/{id}\n"
)
console.table(scopeRows)

process.stdout.write(
  `GET /guests unfiltered: service ${Math.round(guestsNow.rps)} req/s with counters; ` +
    `floor counting every row (the service's old work) ${Math.round(guestsBefore.rps)} req/s: ` +
    `${(guestsNow.rps / guestsBefore.rps).toFixed(1)}× (target ≥ 5× before)\n`
)
process.stdout.write(
  `Two API processes vs one (16 clients, 64 connections, GET /matchmakers/{id}): ${Math.round(twoProcesses.rps)} vs ` +
    `${Math.round(oneProcess.rps)} req/s: ${(twoProcesses.rps / oneProcess.rps).toFixed(2)}×\n`
)

// Memory after a soak under load: each server started fresh for it, one after the other.
const soakedMb = async (kind: Kind, spec: Omit<LoadSpec, "targets" | "seconds">, port: number): Promise<number> => {
  const fresh = await start(kind, port)
  await runLoad({ ...spec, targets: [at(fresh, one!)], seconds: SOAK_SECONDS })
  const mb = rssMb(fresh)
  await stop(fresh)
  return mb
}
if (SOAK_SECONDS > 0) {
  const guestsSoak = { method: "GET" as const, path: "/api/open/v1/guests", connections: 32 }
  const serviceMb = await soakedMb("service", guestsSoak, 18_186)
  const floorMb = await soakedMb("raw", guestsSoak, 18_185)
  process.stdout.write(
    `Memory after ${SOAK_SECONDS} s under load (GET /guests, 32 connections): service ${serviceMb.toFixed(0)} MB RSS, ` +
      `floor ${floorMb.toFixed(0)} MB: ${(serviceMb / floorMb).toFixed(2)}× (target ≤ 2×)\n`
  )
  const matchmakerSoak = { method: "GET" as const, path: `/api/open/v1/matchmakers/${matchmakerId}`, connections: 32 }
  const mb: Partial<Record<Kind, number>> = {}
  for (const kind of COMPARED) mb[kind] = await soakedMb(kind, matchmakerSoak, 18_189)
  const versus = (kind: Kind) => (mb[kind] === undefined ? "-" : `${(mb.service! / mb[kind]).toFixed(2)}×`)
  process.stdout.write(
    `Memory after ${SOAK_SECONDS} s under load (GET /matchmakers/{id}, 32 connections), MB RSS: ` +
      COMPARED.map((k) => `${KINDS[k].label} ${mb[k]!.toFixed(0)}`).join(", ") +
      `; service / Effect floor ${versus("effect")}, service / raw floor ${versus("raw")}, service / Fastify floor ${versus("fastify")}\n`
  )
}
await db.end()
process.exit(0)
