// Past one machine (issue 38): three API processes and two daemons reach PostgreSQL through
// Debian's PgBouncer in transaction pooling (DATABASE_POOLER=pgbouncer: no prepared statements;
// LISTEN and the migrations' lock on DATABASE_DIRECT_URL), with fewer server connections than their
// pools hold together. Writes, idempotent POSTs, the events feed, a webhook fan-out and the
// follow-up dispatch race stay exact through it; a PgBouncer restart is answered with 503s and
// Retry-After, never a 500, and every instance serves again within 5 s. Skipped, saying so, when
// PgBouncer is not installed (`.ci/run` installs it as root: apt-get install pgbouncer). PgBouncer
// runs with the pgbouncer.ini of docs/operator.md, only its addresses, files and pool size replaced.
import { execFileSync, spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"

import { ALL_PERMISSIONS } from "../schema/Permissions.js"
import { liveSigner } from "../src/auth/Signer.js"
import { newNonce } from "../src/client/Client.js"
import * as Scopes from "../src/domain/scope.js"
import { formatDate } from "../src/domain/time.js"
import { Clients } from "../src/services/Clients.js"
import { FollowUps } from "../src/services/FollowUps.js"
import { findFreePort, withPgClient } from "../src/sql/embedded.js"
import { withDatabase } from "../src/sql/urls.js"
import { databaseAdminUrl } from "./support/cluster.js"
import { eventually } from "./support/eventually.js"
import { createCredentials, TestServer, testServerLayer } from "./support/harness.js"
import { type Credentials, startDaemon, startProcess } from "./support/processes.js"
import { makeReceiver } from "./support/receiver.js"

const BASE = "/api/open/v1"
/** Server connections PgBouncer keeps per database: far fewer than the 5 pools of 10 below. */
const POOL_SIZE = 6
const INSTANCES = 3
const DAEMONS = 2
/** How long PgBouncer stays down in the restart (the fault's duration, not a synchronisation). */
const DOWN_MS = 1_500
const RECOVERY_MS = 5_000
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const PGBOUNCER = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].find((p) => existsSync(p))
if (PGBOUNCER === undefined) {
  console.warn("PgBouncer test skipped: /usr/sbin/pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it as root)")
}

// ---------------------------------------------------------------------------------------------
// PgBouncer in transaction pooling in front of the test server, on a free port of its own.

/**
 * The `pgbouncer.ini` of docs/operator.md ("Behind PgBouncer") with this machine's addresses,
 * files, authentication and pool size: every other setting as documented.
 */
const documentedIni = (replace: { readonly databases: ReadonlyArray<string>; readonly settings: Readonly<Record<string, string>> }) => {
  const doc = readFileSync(new URL("../docs/operator.md", import.meta.url), "utf8")
  const block = /```ini\n([\s\S]*?)```/.exec(doc)?.[1]
  if (block === undefined) throw new Error("docs/operator.md has no ```ini block (the pgbouncer.ini)")
  const out: Array<string> = []
  let section = ""
  for (const line of block.split("\n")) {
    const header = /^\[(\w+)\]/.exec(line)
    if (header !== null) {
      section = header[1]!
      out.push(line)
      if (section === "databases") out.push(...replace.databases)
      if (section === "pgbouncer") out.push(...Object.entries(replace.settings).map(([k, v]) => `${k} = ${v}`))
      continue
    }
    const key = /^(\w+)\s*=/.exec(line)?.[1]
    if (key !== undefined && (section === "databases" || key in replace.settings)) continue
    out.push(line)
  }
  return out.join("\n")
}

interface Bouncer {
  readonly port: number
  readonly start: () => Promise<void>
  readonly stop: () => Promise<void>
  readonly log: () => string
  /** A query on PgBouncer's admin console (SHOW POOLS, SHOW STATS, …). */
  readonly admin: <R extends Record<string, unknown>>(query: string) => Promise<ReadonlyArray<R>>
  /** A query through PgBouncer to `database`, as the service's sessions run. */
  readonly through: <R extends Record<string, unknown>>(database: string, query: string) => Promise<ReadonlyArray<R>>
}

const makeBouncer = async (target: URL): Promise<Bouncer> => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "mm-pgbouncer-"))
  const port = await findFreePort()
  // PgBouncer refuses to run as root: root runs it as the postgres user (there since the test server's start).
  const asRoot = process.getuid?.() === 0
  const ini = documentedIni({
    databases: [`* = host=${target.hostname} port=${target.port}`],
    settings: {
      listen_addr: "127.0.0.1",
      listen_port: String(port),
      unix_socket_dir: "",
      auth_type: "trust",
      auth_file: `${dir}/userlist.txt`,
      default_pool_size: String(POOL_SIZE),
      pidfile: `${dir}/pgbouncer.pid`,
      admin_users: decodeURIComponent(target.username)
    }
  })
  expect(ini).toMatch(/^pool_mode = transaction$/m)
  await fs.writeFile(path.join(dir, "pgbouncer.ini"), `${ini}\n`)
  await fs.writeFile(path.join(dir, "userlist.txt"), `"${decodeURIComponent(target.username)}" ""\n`)
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
    for (const f of ["", "pgbouncer.ini", "userlist.txt"]) await fs.chown(path.join(dir, f), uid, gid)
  }
  let log = ""
  let running: { readonly exited: Promise<void>; readonly kill: () => void } | undefined
  const start = async () => {
    const child = spawn(PGBOUNCER!, [...(asRoot ? ["-u", "postgres"] : []), path.join(dir, "pgbouncer.ini")], {
      stdio: ["ignore", "ignore", "pipe"]
    })
    child.stderr!.on("data", (c: Buffer) => (log += c.toString()))
    running = { exited: new Promise((resolve) => child.on("exit", () => resolve())), kill: () => child.kill("SIGTERM") }
    await Effect.runPromise(
      eventually(
        "PgBouncer to answer",
        Effect.promise(() =>
          withPgClient(`postgres://${target.username}@127.0.0.1:${port}/${target.pathname.slice(1)}`, (c) => c.query("SELECT 1"))
            .then(() => true, () => false)
        ),
        (up) => up,
        10_000
      )
    )
  }
  const stop = async (): Promise<void> => {
    const r = running
    running = undefined
    if (r === undefined) return
    r.kill()
    await r.exited
  }
  const on = <R extends Record<string, unknown>>(database: string, query: string) =>
    withPgClient(`postgres://${target.username}@127.0.0.1:${port}/${database}`, (c) => c.query<R>(query)).then((r) => r.rows)
  return { port, start, stop, log: () => log, admin: (query) => on("pgbouncer", query), through: on }
}

// ---------------------------------------------------------------------------------------------
// Signed requests over fetch to a process's port.

interface Answer {
  readonly status: number
  readonly retryAfter: string | null
  // Test assertions read arbitrary envelope fields.
  readonly json: { code: number; message: string; data: any } | undefined // eslint-disable-line @typescript-eslint/no-explicit-any
}

const call = async (
  port: number,
  credentials: Credentials,
  method: string,
  pathname: string,
  options: { readonly body?: unknown; readonly query?: string; readonly key?: string; readonly baseUrl?: string } = {}
): Promise<Answer> => {
  const bytes = new TextEncoder().encode(options.body === undefined ? "" : JSON.stringify(options.body))
  const timestamp = String(Math.floor(Date.now() / 1000))
  const nonce = newNonce()
  const signature = liveSigner.sign(credentials.appSecret, {
    method,
    path: pathname,
    rawQuery: options.query ?? "",
    appKey: credentials.appKey,
    timestamp,
    nonce,
    body: bytes
  })
  const base = options.baseUrl ?? `http://127.0.0.1:${port}`
  try {
    const res = await fetch(`${base}${pathname}${options.query ? `?${options.query}` : ""}`, {
      method,
      headers: {
        "x-app-key": credentials.appKey,
        "x-timestamp": timestamp,
        "x-nonce": nonce,
        "x-signature": signature,
        ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
        ...(options.key !== undefined ? { "idempotency-key": options.key } : {})
      },
      ...(options.body !== undefined ? { body: bytes } : {}),
      signal: AbortSignal.timeout(30_000)
    })
    const text = await res.text()
    let json: Answer["json"] = undefined
    try {
      json = JSON.parse(text) as Answer["json"]
    } catch {
      json = undefined
    }
    return { status: res.status, retryAfter: res.headers.get("retry-after"), json }
  } catch {
    return { status: 0, retryAfter: null, json: undefined }
  }
}

// ---------------------------------------------------------------------------------------------
// The fleet: PgBouncer, three API processes and two daemons through it, for the whole suite.

class Fleet extends Context.Service<Fleet, {
  readonly bouncer: Bouncer
  readonly ports: ReadonlyArray<number>
  readonly directUrl: string
  readonly receiverUrl: string
  readonly received: () => ReadonlyArray<{ readonly path: string; readonly headers: Record<string, string> }>
}>()("Test/Fleet") {}

const fleetLayer = Layer.effect(
  Fleet,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [{ db }] = yield* sql<{ db: string }>`SELECT current_database() AS db`
    const admin = new URL(databaseAdminUrl())
    const bouncer = yield* Effect.acquireRelease(Effect.promise(() => makeBouncer(admin)), (b) => Effect.promise(b.stop))
    yield* Effect.promise(bouncer.start)
    const directUrl = withDatabase(admin.toString(), db)
    const pooledUrl = withDatabase(`postgres://${admin.username}@127.0.0.1:${bouncer.port}/postgres`, db)
    const receiver = yield* makeReceiver
    receiver.reply(() => ({ status: 200 }))
    const env = {
      DATABASE_URL: pooledUrl,
      DATABASE_DIRECT_URL: directUrl,
      DATABASE_POOLER: "pgbouncer",
      SECRET_KEY: "ab".repeat(32),
      LOG_LEVEL: "Info",
      HOST: "127.0.0.1",
      RATE_LIMIT_RPS: "100000",
      RATE_LIMIT_BURST: "1000000",
      WEBHOOK_ALLOWED_NETWORKS: "127.0.0.0/8",
      WEBHOOK_RETRY_SCHEDULE: "200ms,200ms,200ms",
      CARD_OCR_POOL_SIZE: "1",
      DAEMON_HEARTBEAT_SECONDS: "1"
    }
    const ports = yield* Effect.forEach(Array.from({ length: INSTANCES }), () => Effect.promise(findFreePort))
    yield* Effect.all([
      ...ports.map((port) => startProcess("src/main.ts", { ...env, PORT: String(port) }, "Listening on")),
      ...Array.from({ length: DAEMONS }, () => startDaemon(env))
    ], { concurrency: "unbounded", discard: true })
    return {
      bouncer,
      ports,
      directUrl,
      receiverUrl: receiver.url,
      received: () => receiver.received
    }
  })
)

const companyData = (a: Answer) => a.json?.data as { id: number; name: string } | undefined

describe.skipIf(PGBOUNCER === undefined)("behind PgBouncer in transaction pooling", () => {
  layer(fleetLayer.pipe(Layer.provideMerge(testServerLayer({ rateLimitBurst: 1_000_000, rateLimitRps: 1_000_000 }))), {
    timeout: 120_000
  })("three API processes and two daemons", (it) => {
    it.effect(
      "writes and idempotent POSTs through PgBouncer are exact: every count, every event once in the feed, the same answers as a direct connection",
      () =>
        Effect.gen(function*() {
          const { ports } = yield* Fleet
          const { baseUrl } = yield* TestServer
          const sql = yield* SqlClient.SqlClient
          const credentials = yield* createCredentials(ALL_PERMISSIONS, { name: "pooled" })
          const tag = Math.random().toString(36).slice(2, 8)
          const WRITERS = 6
          const EACH = 10
          // Each writer creates companies (half of them under an Idempotency-Key sent to two
          // instances at once) and renames each once, spread over the three instances.
          const results = yield* Effect.forEach(Array.from({ length: WRITERS }, (_, w) => w), (w) =>
            Effect.promise(async () => {
              const mine: Array<{ id: number; name: string }> = []
              for (let i = 0; i < EACH; i++) {
                const port = ports[(w + i) % INSTANCES]!
                const name = `池${tag}-${w}-${i}`
                if (i % 2 === 0) {
                  const key = `k-${tag}-${w}-${i}`
                  const [a, b] = await Promise.all([
                    call(port, credentials, "POST", `${BASE}/companies`, { body: { name }, key }),
                    call(ports[(w + i + 1) % INSTANCES]!, credentials, "POST", `${BASE}/companies`, { body: { name }, key })
                  ])
                  expect([a.status, b.status], JSON.stringify([a.json, b.json])).toEqual([200, 200])
                  expect(companyData(b)).toEqual(companyData(a))
                  mine.push(companyData(a)!)
                } else {
                  const a = await call(port, credentials, "POST", `${BASE}/companies`, { body: { name } })
                  expect(a.status, JSON.stringify(a.json)).toBe(200)
                  mine.push(companyData(a)!)
                }
                const last = mine[mine.length - 1]!
                const renamed = await call(ports[(w + i + 2) % INSTANCES]!, credentials, "PUT", `${BASE}/companies/${last.id}`, {
                  body: { name: `${name}改` }
                })
                expect(renamed.status, JSON.stringify(renamed.json)).toBe(200)
              }
              return mine
            }), { concurrency: "unbounded" })
          const created = results.flat()
          const ids = created.map((c) => c.id)
          expect(new Set(ids).size).toBe(WRITERS * EACH)
          const [{ n }] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM companies WHERE name LIKE ${`池${tag}-%`}`
          expect(n).toBe(WRITERS * EACH)

          // The feed read through a pooled instance: every event once, in one order, all of them.
          // The feed lists an event once every older transaction has settled (a daemon's
          // partition pass at start-up is one), so it is read again until it holds them all.
          const [{ events }] = yield* sql<{ events: number }>`SELECT count(*)::int AS events FROM events
            WHERE type IN ('company.created', 'company.updated')`
          const readFeed = Effect.promise(async () => {
            const read: Array<{ id: string; type: string; data: { id?: number } }> = []
            let after: string | undefined = undefined
            for (;;) {
              const page = await call(ports[read.length % INSTANCES]!, credentials, "GET", `${BASE}/events`, {
                query: `page_size=1000&types=company.created,company.updated${after === undefined ? "" : `&after=${after}`}`
              })
              expect(page.status, JSON.stringify(page.json)).toBe(200)
              const list = page.json!.data.list as typeof read
              if (list.length === 0) return read
              read.push(...list)
              after = page.json!.data.next_after as string
            }
          })
          const feed = yield* eventually("the feed to list every event written", readFeed, (read) => read.length >= events)
          expect(new Set(feed.map((e) => e.id)).size).toBe(feed.length)
          const ours = feed.filter((e) => ids.includes(e.data.id!))
          expect(ours.filter((e) => e.type === "company.created").map((e) => e.data.id).sort()).toEqual([...ids].sort())
          expect(ours.filter((e) => e.type === "company.updated").map((e) => e.data.id).sort()).toEqual([...ids].sort())
          expect(feed).toHaveLength(events)

          // It all went through PgBouncer, over at most POOL_SIZE server connections, and its
          // sessions end a transaction left idle (the role's default the migrator set).
          const { bouncer } = yield* Fleet
          const [{ db }] = yield* sql<{ db: string }>`SELECT current_database() AS db`
          const pools = yield* Effect.promise(() =>
            bouncer.admin<{ database: string; sv_active: string; sv_idle: string; sv_used: string }>("SHOW POOLS")
          )
          const pool = pools.find((p) => p.database === db)!
          expect(Number(pool.sv_active) + Number(pool.sv_idle) + Number(pool.sv_used)).toBeLessThanOrEqual(POOL_SIZE)
          const stats = yield* Effect.promise(() => bouncer.admin<{ database: string; total_xact_count: string }>("SHOW STATS"))
          expect(Number(stats.find((s) => s.database === db)!.total_xact_count)).toBeGreaterThan(WRITERS * EACH * 3)
          const [timeout] = yield* Effect.promise(() =>
            bouncer.through<{ idle_in_transaction_session_timeout: string }>(db, "SHOW idle_in_transaction_session_timeout")
          )
          expect(timeout!.idle_in_transaction_session_timeout).toBe("1min")

          // The mirror: the last event of each company is what a pooled and a direct instance read.
          for (const id of ids.slice(0, 12)) {
            const pooled = yield* Effect.promise(() => call(ports[id % INSTANCES]!, credentials, "GET", `${BASE}/companies/${id}`))
            const direct = yield* Effect.promise(() => call(0, credentials, "GET", `${BASE}/companies/${id}`, { baseUrl }))
            expect(pooled.json).toEqual(direct.json)
            const { changed_fields: _, ...mirrored } = ours.filter((e) => e.data.id === id).at(-1)!.data as Record<string, unknown>
            expect(mirrored).toEqual(pooled.json!.data)
          }
        }),
      { timeout: 90_000 }
    )

    it.effect(
      "a webhook fan-out through PgBouncer: two daemons deliver every event to every subscriber once, each in one attempt",
      () =>
        Effect.gen(function*() {
          const { ports, receiverUrl, received } = yield* Fleet
          const sql = yield* SqlClient.SqlClient
          const clients = yield* Clients
          const hooks = ["a", "b", "c"]
          const subscribers = yield* Effect.forEach(hooks, (h) =>
            Effect.gen(function*() {
              const created = yield* Effect.orDie(clients.create({ name: `hook-${h}`, permissions: ALL_PERMISSIONS, masking: false }))
              yield* Effect.orDie(
                clients.webhook(created.app_key, { _tag: "Set", url: `${receiverUrl}/${h}`, events: ["guest.created"] })
              )
              return created
            }))
          const writer = yield* createCredentials(ALL_PERMISSIONS, { name: "fan-out" })
          const company = yield* Effect.promise(() => call(ports[0]!, writer, "POST", `${BASE}/companies`, { body: { name: "扇出婚介" } }))
          const GUESTS = 30
          const guests = yield* Effect.forEach(Array.from({ length: GUESTS }, (_, i) => i), (i) =>
            Effect.promise(async () => {
              const a = await call(ports[i % INSTANCES]!, writer, "POST", `${BASE}/guests`, {
                body: { name: `扇出${i}`, gender: i % 2 === 0 ? "female" : "male", company_id: companyData(company)!.id }
              })
              expect(a.status, JSON.stringify(a.json)).toBe(200)
              return (a.json!.data as { id: number }).id
            }), { concurrency: 6 })
          const eventIds = (yield* sql<{ event_id: string }>`SELECT event_id FROM events
          WHERE type = 'guest.created' AND (data->>'id')::bigint IN ${sql.in(guests)}`).map((r) => r.event_id)
          expect(eventIds).toHaveLength(GUESTS)
          const delivered = sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
          WHERE d.status = 'succeeded' AND e.event_id IN ${sql.in(eventIds)}`.pipe(Effect.map((r) => r[0]!.n), Effect.orDie)
          yield* eventually("every delivery", delivered, (n) => n === GUESTS * hooks.length, 60_000)
          for (const h of hooks) {
            const got = received().filter((r) => r.path === `/${h}`).map((r) => r.headers["webhook-id"])
            expect(got.sort()).toEqual([...eventIds].sort())
          }
          const attempts = yield* sql<{ attempts: number; n: number }>`SELECT d.attempt_count AS attempts, count(*)::int AS n
          FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
          WHERE e.event_id IN ${sql.in(eventIds)} GROUP BY d.attempt_count`
          expect(attempts).toEqual([{ attempts: 1, n: GUESTS * hooks.length }])
          const workers = yield* sql<{ daemon: string }>`SELECT DISTINCT split_part(worker, ':', 2) AS daemon FROM webhook_attempts`
          expect(workers.length).toBeGreaterThanOrEqual(1)
          void subscribers
        }),
      { timeout: 90_000 }
    )

    it.effect(
      "the follow-up dispatch race through PgBouncer: every task one holder, every loser 409 task_locked naming it, no 5xx",
      () =>
        Effect.gen(function*() {
          const { ports } = yield* Fleet
          const sql = yield* SqlClient.SqlClient
          const TASKS = 60
          const RACERS = 3
          const [{ company }] = yield* sql<{ company: number }>`INSERT INTO companies (name) VALUES ('池竞争') RETURNING id::int AS company`
          const [{ guest }] = yield* sql<{ guest: number }>`INSERT INTO guests (name, gender, company_id)
          VALUES ('池竞争嘉宾', 'female', ${company}) RETURNING id::int AS guest`
          const today = formatDate(new Date(), "Asia/Shanghai")
          const plan = yield* Effect.flatMap(FollowUps, (f) =>
            f.createPlan(Scopes.all, {
              guestId: guest,
              taskType: "recommend",
              days: Array.from({ length: TASKS }, (_, d) => d + 1),
              startDate: formatDate(new Date(Date.parse(`${today}T00:00:00Z`) - (TASKS - 1) * 86400_000), "UTC")
            }))
          const tasks = (yield* sql<{ id: number }>`SELECT id::int AS id FROM follow_up_tasks WHERE plan_id = ${plan.id} ORDER BY id`)
            .map((r) => r.id)
          expect(tasks).toHaveLength(TASKS)
          const racers = yield* Effect.forEach(
            Array.from({ length: RACERS }),
            (_, i) => createCredentials(["open:follow-up:write"], { name: `racer-${i}` })
          )
          // Each racer on its own instance asks for every task; the racers ask for a task at the same moment.
          const outcomes = yield* Effect.forEach(tasks, (task) =>
            Effect.promise(() =>
              Promise.all(racers.map(async (credentials, r) => {
                const a = await call(ports[r % INSTANCES]!, credentials, "POST", `${BASE}/follow-up/tasks/${task}/dispatch`)
                return {
                  task,
                  caller: credentials.appKey,
                  status: a.status,
                  error: a.json?.data?.error,
                  holder: a.json?.data?.dispatched_to
                }
              }))
            ), { concurrency: 8 })
          const all = outcomes.flat()
          expect(all.filter((o) => o.status !== 200 && o.status !== 409)).toEqual([])
          const winners = new Map<number, string>()
          for (const o of all.filter((o) => o.status === 200)) {
            expect(winners.has(o.task), `task ${o.task} dispatched twice`).toBe(false)
            winners.set(o.task, o.caller)
          }
          expect(winners.size).toBe(TASKS)
          for (const o of all.filter((o) => o.status === 409)) expect([o.error, o.holder]).toEqual(["task_locked", winners.get(o.task)])
          const held = yield* sql<{ id: number; dispatched_to: string }>`SELECT id::int AS id, dispatched_to FROM follow_up_tasks
          WHERE plan_id = ${plan.id}`
          for (const row of held) expect(row.dispatched_to).toBe(winners.get(row.id))
        }),
      { timeout: 90_000 }
    )

    it.effect(
      "PgBouncer restarted under load: 503 with Retry-After while it is down, never a 500, every instance serving again within 5 s",
      () =>
        Effect.gen(function*() {
          const { bouncer, ports } = yield* Fleet
          const credentials = yield* createCredentials(ALL_PERMISSIONS, { name: "restart" })
          const answers: Array<{ port: number; phase: string; status: number; retryAfter: string | null; error: unknown }> = []
          let phase = "before"
          let running = true
          const load = Promise.all(ports.map(async (port, w) => {
            for (let i = 0; running; i++) {
              const a = i % 2 === 0
                ? await call(port, credentials, "GET", `${BASE}/companies`, { query: "page_size=5" })
                : await call(port, credentials, "POST", `${BASE}/companies`, { body: { name: `重启-${w}-${i}` } })
              answers.push({ port, phase, status: a.status, retryAfter: a.retryAfter, error: a.json?.data?.error })
              await pause(20)
            }
          }))
          yield* eventually(
            "every instance to serve the load before the restart",
            Effect.sync(() => new Set(answers.filter((a) => a.phase === "before" && a.status === 200).map((a) => a.port)).size),
            (serving) => serving === ports.length
          )
          phase = "down"
          yield* Effect.promise(bouncer.stop)
          // The outage's duration (not a synchronisation: nothing waits for it to pass).
          yield* Effect.promise(() => pause(DOWN_MS))
          yield* Effect.promise(bouncer.start)
          phase = "recovery"
          const restarted = performance.now()
          const recovered = yield* Effect.forEach(ports, (port) =>
            eventually(
              `instance on ${port} to read and write again`,
              Effect.promise(async () => {
                const read = await call(port, credentials, "GET", `${BASE}/companies`, { query: "page_size=1" })
                return read.status === 200
                  ? (await call(port, credentials, "POST", `${BASE}/companies`, { body: { name: "恢复" } })).status
                  : read.status
              }),
              (status) => status === 200,
              RECOVERY_MS + 5_000
            ).pipe(Effect.map(() => performance.now() - restarted)), { concurrency: "unbounded" })
          running = false
          yield* Effect.promise(() => load)
          const down = answers.filter((a) => a.phase === "down")
          const counts = (phase: string) => {
            const by = new Map<number, number>()
            for (const a of answers) if (a.phase === phase) by.set(a.status, (by.get(a.status) ?? 0) + 1)
            return [...by].map(([status, n]) => `${status}×${n}`).join(" ")
          }
          const summary = `PgBouncer restart: before [${counts("before")}], down [${counts("down")}], recovery [${
            counts("recovery")
          }]; instances serving again after ${recovered.map(Math.round).join(", ")} ms`
          yield* Effect.sync(() => console.info(summary))
          // Only 200 and the documented 503 (with Retry-After), whatever the phase.
          expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([])
          expect(answers.filter((a) => a.status === 503 && (a.error !== "service_unavailable" || a.retryAfter === null))).toEqual([])
          expect(down.filter((a) => a.status === 503).length, "no 503 while PgBouncer was down").toBeGreaterThan(0)
          expect(Math.max(...recovered), `recovered after ${recovered.map(Math.round).join(", ")} ms`).toBeLessThanOrEqual(RECOVERY_MS)
        }),
      { timeout: 60_000 }
    )
  })
})
