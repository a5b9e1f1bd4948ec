// `npm run bench` (capacity): the measured inputs of docs/capacity.md. For each endpoint class, a
// fixed number of signed requests under steady load (BENCH_CAPACITY_CONNECTIONS connections, the
// load generator of bench/load.ts) against one compiled API process, after a warm-up, and per
// request:
// - the statements PostgreSQL ran (pg_stat_statements, reset before each case; transaction control
//   — BEGIN, COMMIT, SAVEPOINT, RELEASE — counted apart; without pipelining each is a round trip),
//   the transactions committed and rolled back (pg_stat_database), the rows inserted, updated and
//   deleted per table (pg_stat_user_tables), the WAL written (pg_current_wal_insert_lsn);
// - the CPU time of the API process (every thread, /proc/<pid>/task/*/schedstat) and of the whole
//   PostgreSQL cluster (the postmaster and every process it started, bench/cpu.ts), less what each
//   spends idle over as long;
// - the connections the instance holds (pg_stat_activity, sampled every 250 ms: its pool and its
//   LISTEN sessions, the most seen at once and the most busy at once);
// and then the job daemon alone (the API stopped) delivering webhooks: the same per delivery.
// The cases: GET /matchmakers/{id}; GET /guests page 1; GET /guests as a sync walk (updated_since,
// page_size 100) first page and a page BENCH_GUESTS/2 deep by its cursor; POST /companies; POST
// /guests (one company, 64 matchmakers whose counters move); PUT /matchmakers/{id} (64 of them);
// POST /companies with an Idempotency-Key, first attempts then their replays; POST /matches (a
// fresh pair of guests each, two matchmakers' counters); POST /activities; GET /events after an
// event halfway down the feed; POST /follow-up/tasks/{id}/dispatch (a fresh task each); POST
// /companies with BENCH_CAPACITY_SUBSCRIBERS webhook subscribers, then also beside 20 more LISTEN
// sessions (a NOTIFY wakes them all); a webhook delivery.
// It runs its own throwaway PostgreSQL (the embedded binaries, default durability, with
// pg_stat_statements preloaded: a server setting that only a start can give), so that every
// statement and every CPU cycle of the cluster is this run's, and removes it at the end.
// BENCH_CAPACITY_REQUESTS (500 per case), BENCH_CAPACITY_WARMUP (100), BENCH_CAPACITY_CONNECTIONS
// (16), BENCH_CAPACITY_SUBSCRIBERS (2), BENCH_GUESTS (20000), BENCH_PORT_OFFSET (0), BENCH_NO_BUILD=1
// (skip `npm run build`), BENCH_CAPACITY_CASES (only the cases whose name holds one of these words,
// comma separated), BENCH_CAPACITY_VERBOSE=1 (every statement of each case on stderr),
// BENCH_CAPACITY_LISTENERS (20: the LISTEN sessions beside the last POST case). Linux only (it reads /proc). `node --import tsx bench/capacity.ts`.
import { execSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFile, rm, stat } from "node:fs/promises"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { cpus } from "node:os"
import path from "node:path"

import pg from "pg"

import { projectRoot } from "../src/root.js"
import { ensureEmbeddedPostgres, findFreePort, makeServerTempDir } from "../src/sql/embedded.js"
import { migrateDatabase } from "../src/sql/migrateUrl.js"
import { withDatabase } from "../src/sql/urls.js"
import { clusterCpuNs, cpuNs, hasProc, idleRateOf, loadAverage, postmasterOf } from "./cpu.js"
import { type LoadResult, type LoadSpec, runLoad, signedHeaders, type Target } from "./load.js"
import { GENERATE, GUEST_INSERT } from "./seed.js"
import { JOB_DAEMON, newClients, startProcess, startServer, stopServer } from "./servers.js"
import { log } from "./support.js"

if (!hasProc()) {
  process.stdout.write("\nCapacity: skipped (it reads CPU times from /proc, which this system has not)\n")
  process.exit(0)
}

const REQUESTS = Number(process.env.BENCH_CAPACITY_REQUESTS ?? 500)
const WARMUP = Number(process.env.BENCH_CAPACITY_WARMUP ?? 100)
const CONNECTIONS = Number(process.env.BENCH_CAPACITY_CONNECTIONS ?? 16)
const SUBSCRIBERS = Number(process.env.BENCH_CAPACITY_SUBSCRIBERS ?? 2)
const GUESTS = Number(process.env.BENCH_GUESTS ?? 20_000)
const PORT_OFFSET = Number(process.env.BENCH_PORT_OFFSET ?? 0)
/** BENCH_CAPACITY_CASES: only the cases whose name holds one of these (comma separated), e.g. "GET /guests,webhook". */
const CASES = (process.env.BENCH_CAPACITY_CASES ?? "").split(",").map((c) => c.trim())
/** BENCH_CAPACITY_VERBOSE=1: every statement of each case, however rare, on stderr. */
const VERBOSE = process.env.BENCH_CAPACITY_VERBOSE === "1"
/** LISTEN sessions added for the case that shows what a NOTIFY costs each of them. */
const LISTENERS = Number(process.env.BENCH_CAPACITY_LISTENERS ?? 20)
const MATCHMAKERS = 64
const DATABASE = "matchmaking_capacity"
/** Marks this benchmark's own statements on the service's database, which the counts leave out. */
const MARK = "/* capacity-bench */"
const API = "/api/open/v1"

/** Per request (or delivery) of one case. */
interface Measured {
  readonly case: string
  readonly requests: number
  readonly statuses: Record<string, number>
  readonly rps: number
  readonly p99: number
  /** Statements other than transaction control, per request (pg_stat_statements, the measured requests). */
  readonly statements: number
  /** Per request of the warm-up, from the server's log: `statements` (all but transaction control), BEGIN, COMMIT, SAVEPOINT, RELEASE, ROLLBACK. */
  readonly logged: Record<string, number>
  /** Statements run less than once per 20 requests (a process's own timers), per request. */
  readonly occasional: number
  readonly commits: number
  readonly rollbacks: number
  readonly rowsWritten: number
  readonly writesByTable: Record<string, number>
  readonly walBytes: number
  readonly processUs: number
  readonly pgUs: number
  readonly pool: { readonly held: number; readonly busy: number; readonly listening: number }
  readonly loadAverage: readonly [number, number]
  /** Each statement run at least once per 20 requests: calls per request, mean execution ms, WAL bytes per call. */
  readonly perStatement: ReadonlyArray<{ readonly calls: number; readonly ms: number; readonly wal: number; readonly query: string }>
}

const main = async () => {
  // The server: throwaway, its own folder and a free port, pg_stat_statements loaded.
  const folder = await makeServerTempDir("mm-capacity-pg-", log)
  const cleanups: Array<() => Promise<unknown>> = [() => rm(folder, { recursive: true, force: true })]
  try {
    const server = await ensureEmbeddedPostgres({
      dataDir: path.join(folder, "pg"),
      port: await findFreePort(),
      log: () => {},
      // No checkpoint during the run (1 h, 8 GB of WAL apart), so no full-page image: WAL per request
      // is the records' own bytes, the same in every case.
      settings: { shared_preload_libraries: "pg_stat_statements", checkpoint_timeout: "3600", max_wal_size: "8192" }
    })
    cleanups.unshift(() => server.stop())
    // The monitor works in the `postgres` database: its own reads count in neither the service
    // database's transactions nor (by dbid) its statements.
    const monitor = new pg.Client({ connectionString: server.url })
    await monitor.connect()
    cleanups.unshift(() => monitor.end())
    await monitor.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    // Log lines name their database, so that the statements of the service's can be counted.
    await monitor.query("ALTER SYSTEM SET log_line_prefix = '%m [%p] %d '")
    await monitor.query("SELECT pg_reload_conf()")
    const serverLog = path.join(folder, "postgres.log")
    await monitor.query(`CREATE DATABASE ${DATABASE} ENCODING 'UTF8' TEMPLATE template0`)
    const url = withDatabase(server.url, DATABASE)
    await migrateDatabase(url)
    const { rows: [{ oid: dbid }] } = await monitor.query<{ oid: number }>("SELECT oid FROM pg_database WHERE datname = $1", [DATABASE])
    const { rows: [{ pid: backend }] } = await monitor.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")
    const postmaster = postmasterOf(backend)

    // The service's database, through a connection whose statements the counts leave out (MARK)
    // and whose transactions in a measurement window are counted here and subtracted.
    const db = new pg.Client({ connectionString: url })
    await db.connect()
    cleanups.unshift(() => db.end())
    let ownTransactions = 0
    const own = async <R extends pg.QueryResultRow>(text: string, values: ReadonlyArray<unknown> = []) => {
      ownTransactions++
      return db.query<R>(`${MARK} ${text}`, [...values])
    }

    // A master key for this run only (the database is thrown away with it).
    process.env.SECRET_KEY = randomBytes(32).toString("hex")
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: url, LOG_LEVEL: "Info", WEBHOOK_ALLOWED_NETWORKS: "127.0.0.0/8" }
    for (const name of ["SECRET_KEYS", "DATABASE_DIRECT_URL", "DATABASE_POOLER", "JOBS_PORT"]) delete env[name]

    // Data: guests, a company with matchmakers, follow-up tasks, clients that are not rate limited.
    log(`capacity: seeding ${GUESTS} guests…`)
    const { rows: [{ first }] } = await own<{ first: string }>(GENERATE)
    for (let from = 1; from <= GUESTS; from += 20000) await own(GUEST_INSERT(Number(first), from, Math.min(GUESTS, from + 19999)))
    await own("VACUUM ANALYZE")
    const { rows: [{ id: company }] } = await own<{ id: string }>("INSERT INTO companies (name) VALUES ('压测公司-容量') RETURNING id")
    const { rows: matchmakerRows } = await own<{ id: string }>(
      `INSERT INTO matchmakers (name, phone, company_id)
       SELECT '压测红娘' || g, '138' || lpad(g::text, 8, '0'), $1 FROM generate_series(1, ${MATCHMAKERS}) g RETURNING id`,
      [company]
    )
    const matchmakers = matchmakerRows.map((r) => Number(r.id))
    const { rows: [{ id: guest }] } = await own<{ id: string }>(
      "INSERT INTO guests (name, gender, company_id) VALUES ('派单嘉宾', 'female', $1) RETURNING id",
      [company]
    )
    const { rows: taskRows } = await own<{ id: string }>(
      `WITH p AS (
         INSERT INTO follow_up_plans (guest_id, task_type, start_date, days) VALUES ($1, 'recommend', current_date - 1, ARRAY[1])
         RETURNING id)
       INSERT INTO follow_up_tasks (plan_id, guest_id, company_id, task_type, task_day, scheduled_date)
       SELECT p.id, $1, $2, 'recommend', g, current_date - 1 FROM p, generate_series(1, $3::int) g RETURNING id`,
      [guest, company, WARMUP + REQUESTS]
    )
    const tasks = taskRows.map((r) => Number(r.id))
    // POST /matches: a fresh pair of guests each (a pair has one open match), of the company's
    // matchmakers, so that every match moves two matchmakers' counters.
    const { rows: pairRows } = await own<{ id: string }>(
      `INSERT INTO guests (name, gender, company_id, matchmaker_id)
       SELECT '配对嘉宾' || g, CASE WHEN g % 2 = 0 THEN 'male' ELSE 'female' END, $1, ($2::bigint[])[1 + g % cardinality($2::bigint[])]
       FROM generate_series(0, $3::int - 1) g ORDER BY g RETURNING id`,
      [company, matchmakers, 2 * (WARMUP + REQUESTS)]
    )
    const paired = pairRows.map((r) => Number(r.id))
    const [client, ...subscribers] = await newClients(db, 1 + SUBSCRIBERS)
    ownTransactions = 0

    if (process.env.BENCH_NO_BUILD !== "1") {
      log("capacity: building the service (npm run build)…")
      execSync("npm run -s build", { cwd: projectRoot(), stdio: "inherit" })
    }

    // --- Measuring --------------------------------------------------------------------------------

    /**
     * Every statement the service's database runs while `during` runs, counted from the server's
     * log (`log_statement = all`, on only meanwhile): pg_stat_statements counts a prepared utility
     * statement only when it is parsed, so the driver's prepared BEGIN and COMMIT, parsed once per
     * connection, would go uncounted. A setting takes effect from a backend's next command after
     * the reload, so with the load stopped on either side the count is exact. Each kind of
     * transaction control apart, the other statements together.
     */
    const logged = async <A>(during: () => Promise<A>) => {
      const setLogging = async (on: boolean) => {
        await monitor.query(on ? "ALTER SYSTEM SET log_statement = 'all'" : "ALTER SYSTEM RESET log_statement")
        await monitor.query("SELECT pg_reload_conf()")
        await new Promise((resolve) => setTimeout(resolve, 300))
      }
      const from = (await stat(serverLog)).size
      await setLogging(true)
      const result = await during()
      await setLogging(false)
      const text = (await readFile(serverLog)).subarray(from).toString("utf8")
      const counts: Record<string, number> = {}
      const line = new RegExp(` ${DATABASE} LOG:  (?:statement|execute [^:]*): (.*)$`)
      for (const l of text.split("\n")) {
        const found = line.exec(l)
        if (found === null || found[1]!.includes("capacity-bench")) continue
        const control = CONTROL.exec(found[1]!)
        const kind = control === null ? "statements" : control[1]!.toUpperCase()
        counts[kind] = (counts[kind] ?? 0) + 1
      }
      return { result, counts }
    }

    /**
     * Waits until every backend has published its statistics: one that published less than a second
     * before going idle publishes again only after 10 s (PostgreSQL's PGSTAT_IDLE_INTERVAL), so
     * 10.5 s, then until the database's transaction counters stand still for 1.2 s (6 s at most: a
     * daemon's timers keep them moving a little).
     */
    const flushed = async () => {
      await new Promise((resolve) => setTimeout(resolve, 10_500))
      const read = async () =>
        (await monitor.query<{ n: string }>("SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = $1", [
          DATABASE
        ])).rows[0]!.n
      let last = await read()
      for (let i = 0; i < 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, 1200))
        const now = await read()
        if (now === last) return
        last = now
      }
    }
    /** What the statistics views say so far, and how many of the benchmark's own transactions they hold. */
    interface Stats {
      readonly commits: number
      readonly rollbacks: number
      readonly own: number
      readonly tables: Map<string, number>
    }
    const stats = async (): Promise<Stats> => {
      const { rows: [s] } = await monitor.query<{ c: number; r: number }>(
        "SELECT xact_commit::float8 AS c, xact_rollback::float8 AS r FROM pg_stat_database WHERE datname = $1",
        [DATABASE]
      )
      // Counted from here: this read is the window's first own transaction.
      const ownSoFar = ownTransactions
      const { rows: tables } = await own<{ relname: string; n: number }>(
        // A partition's rows count as its table's (events, deliveries… partitioned by time).
        `SELECT coalesce(p.relname, s.relname) AS relname, sum(s.n_tup_ins + s.n_tup_upd + s.n_tup_del)::float8 AS n
         FROM pg_stat_user_tables s LEFT JOIN pg_inherits i ON i.inhrelid = s.relid LEFT JOIN pg_class p ON p.oid = i.inhparent
         GROUP BY 1`
      )
      return { commits: s!.c, rollbacks: s!.r, own: ownSoFar, tables: new Map(tables.map((t) => [t.relname, t.n])) }
    }
    /** The most connections of the service's database seen at once while `during` runs: pool, busy, LISTEN. */
    const sampleConnections = async <A>(during: Promise<A>) => {
      const most = { held: 0, busy: 0, listening: 0 }
      let done = false
      const sampling = (async () => {
        while (!done) {
          const { rows } = await monitor.query<{ application_name: string; state: string | null; n: number }>(
            `SELECT application_name, state, count(*)::int AS n FROM pg_stat_activity
             WHERE datname = $1 AND application_name LIKE 'matchmaking-open-api%' GROUP BY 1, 2`,
            [DATABASE]
          )
          const sum = (f: (r: (typeof rows)[number]) => boolean) => rows.filter(f).reduce((n, r) => n + r.n, 0)
          most.held = Math.max(most.held, sum((r) => r.application_name === "matchmaking-open-api"))
          most.busy = Math.max(most.busy, sum((r) => r.application_name === "matchmaking-open-api" && r.state !== "idle"))
          most.listening = Math.max(most.listening, sum((r) => r.application_name.startsWith("matchmaking-open-api:")))
          await new Promise((resolve) => setTimeout(resolve, 250))
        }
      })()
      const result = await during
      done = true
      await sampling
      return { result, most }
    }
    const lsnBytes = (lsn: string) => {
      const [hi, lo] = lsn.split("/")
      return Number.parseInt(hi!, 16) * 2 ** 32 + Number.parseInt(lo!, 16)
    }
    const CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|START TRANSACTION|END)\b/i
    const pgIdle = await idleRateOf(postmaster, 2000, clusterCpuNs)

    /**
     * Measures `count` units of work (requests or deliveries) done by `work`, in the process `pid`
     * (idle at `idleRate` CPU ns per ns), after `warm` (a warm-up of the same requests). CPU,
     * statements, WAL and connections are of `work` alone; the statistics views (transactions,
     * rows), which backends publish late, of `warm` and `work` together, from the last reading
     * (`fresh`: a new one) to one taken once every backend has published; `ownRows` are rows this
     * benchmark wrote meanwhile.
     */
    let lastStats: Stats | undefined
    const measure = async (
      name: string,
      pid: number,
      idleRate: number,
      options: {
        readonly fresh?: boolean
        readonly warm?: () => Promise<number>
        readonly work: () => Promise<{ readonly count: number; readonly load?: LoadResult; readonly ownRows?: Record<string, number> }>
      }
    ): Promise<Measured> => {
      if (lastStats === undefined || options.fresh === true) {
        await flushed()
        lastStats = await stats()
      }
      const before = lastStats
      const { counts: loggedCounts, result: warmed } = await logged(async () => (await options.warm?.()) ?? 0)
      await monitor.query("SELECT pg_stat_statements_reset()")
      const loadFrom = loadAverage()
      const { rows: [{ lsn: walFrom }] } = await monitor.query<{ lsn: string }>("SELECT pg_current_wal_insert_lsn()::text AS lsn")
      const [processFrom, pgFrom, began] = [cpuNs(pid), clusterCpuNs(postmaster), process.hrtime.bigint()]
      const { most, result } = await sampleConnections(options.work())
      const elapsed = Number(process.hrtime.bigint() - began)
      const processNs = cpuNs(pid) - processFrom - idleRate * elapsed
      const pgNs = clusterCpuNs(postmaster) - pgFrom - pgIdle * elapsed
      const { rows: [{ lsn: walTo }] } = await monitor.query<{ lsn: string }>("SELECT pg_current_wal_insert_lsn()::text AS lsn")
      const loadTo = loadAverage()
      const { rows: statements } = await monitor.query<{ query: string; calls: number; ms: number; wal: number }>(
        `SELECT query, calls::float8 AS calls, total_exec_time AS ms, wal_bytes::float8 AS wal FROM pg_stat_statements
         WHERE dbid = $1 AND query NOT LIKE '%capacity-bench%' ORDER BY calls DESC, query`,
        [dbid]
      )
      await flushed()
      const after = await stats()
      lastStats = after
      const n = result.count
      const all = warmed + n
      const frequent = statements.filter((s) => s.calls >= n / 20)
      const perRequest = (xs: typeof statements) => xs.reduce((sum, s) => sum + s.calls, 0) / n
      const writesByTable: Record<string, number> = {}
      for (const [table, rows] of after.tables) {
        const written = rows - (before.tables.get(table) ?? 0) - (result.ownRows?.[table] ?? 0)
        if (written > 0) writesByTable[table] = written / all
      }
      if (VERBOSE) {
        for (const s of statements) log(`  ${s.calls}× ${s.query.replace(/\s+/g, " ").slice(0, 200)}`)
      }
      const measured: Measured = {
        case: name,
        requests: n,
        statuses: result.load?.statuses ?? {},
        rps: result.load?.rps ?? 0,
        p99: result.load?.p99 ?? 0,
        statements: perRequest(frequent.filter((s) => !CONTROL.test(s.query))),
        logged: Object.fromEntries(Object.entries(loggedCounts).map(([kind, count]) => [kind, count / warmed])),
        occasional: perRequest(statements.filter((s) => s.calls < n / 20)),
        commits: (after.commits - before.commits - (after.own - before.own)) / all,
        rollbacks: (after.rollbacks - before.rollbacks) / all,
        rowsWritten: Object.values(writesByTable).reduce((a, b) => a + b, 0),
        writesByTable,
        walBytes: (lsnBytes(walTo) - lsnBytes(walFrom)) / n,
        processUs: processNs / n / 1000,
        pgUs: pgNs / n / 1000,
        pool: most,
        loadAverage: [loadFrom, loadTo],
        perStatement: frequent.map((s) => ({ calls: s.calls / n, ms: s.ms / s.calls, wal: s.wal / s.calls, query: s.query }))
      }
      log(`capacity: ${name}: ${JSON.stringify({ ...measured, perStatement: undefined })}`)
      return measured
    }

    // The floor: what PostgreSQL spends on a bare statement (a prepared `SELECT $1`, one round trip),
    // sent as the service sends its statements: a pool of 10 connections, CONNECTIONS callers.
    const floorUs = await (async () => {
      const pool = new pg.Pool({ connectionString: url, max: 10 })
      const bare = (i: number) => pool.query({ name: "capacity-floor", text: `${MARK} SELECT $1::int AS n`, values: [i] })
      const callers = async (count: number) => {
        let next = 0
        await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
          while (next < count) await bare(next++)
        }))
      }
      await callers(WARMUP)
      const from = clusterCpuNs(postmaster)
      const began = process.hrtime.bigint()
      await callers(REQUESTS * 4)
      const ns = clusterCpuNs(postmaster) - from - pgIdle * Number(process.hrtime.bigint() - began)
      await pool.end()
      return ns / (REQUESTS * 4) / 1000
    })()
    log(`capacity: PostgreSQL's CPU per bare statement: ${floorUs.toFixed(1)} µs`)

    // --- The API ------------------------------------------------------------------------------------
    const api = await startServer("service", 18_381 + PORT_OFFSET, env)
    cleanups.unshift(() => stopServer(api))
    const target: Target = { ...client!, port: api.port }

    /** One signed request by `who`; the envelope's data, or a failure naming the answer. */
    const call = async (who: Omit<Target, "port">, method: string, urlPath: string, query = "", body?: unknown) => {
      const bytes = Buffer.from(body === undefined ? "" : JSON.stringify(body))
      const { "content-length": _length, ...headers } = signedHeaders(who, { method, path: urlPath, rawQuery: query, body: bytes })
      const res = await fetch(`http://127.0.0.1:${api.port}${urlPath}${query === "" ? "" : `?${query}`}`, {
        method,
        headers,
        ...(bytes.length > 0 ? { body: bytes } : {})
      })
      const text = await res.text()
      if (res.status !== 200) throw new Error(`${method} ${urlPath} answered ${res.status}: ${text.slice(0, 300)}`)
      return (JSON.parse(text) as { data: Record<string, unknown> }).data
    }

    // A sync walk's deep cursor: BENCH_GUESTS/2 guests down, 100 a page.
    const syncQuery = (cursor?: string) =>
      new URLSearchParams({ updated_since: "2000-01-01 00:00:00", page_size: "100", ...(cursor === undefined ? {} : { cursor }) })
        .toString()
    let cursor: string | undefined
    for (let depth = 0; depth < GUESTS / 2; depth += 100) {
      const next = (await call(client!, "GET", `${API}/guests`, syncQuery(cursor))).next_cursor
      if (typeof next !== "string") throw new Error(`the sync walk ended ${depth} guests down`)
      cursor = next
    }

    type Phase = "warm" | "measured"
    type Case = {
      readonly name: string
      readonly spec: (phase: Phase) => Omit<LoadSpec, "targets" | "seconds" | "connections" | "requests">
    }
    const run = async (phase: Phase, spec: Omit<LoadSpec, "targets" | "seconds" | "connections" | "requests">) => {
      const requests = phase === "warm" ? WARMUP : REQUESTS
      const load = await runLoad({ ...spec, targets: [target], connections: CONNECTIONS, seconds: 3600, requests })
      const failed = Object.entries(load.statuses).filter(([status]) => status !== "200")
      if (failed.length > 0) {
        throw new Error(
          `${spec.method} ${typeof spec.path === "string" ? spec.path : spec.path(0)} answered ${JSON.stringify(load.statuses)}`
        )
      }
      return load
    }
    let apiIdle: number | undefined
    const results: Array<Measured> = []
    const measureCase = async (c: Case, fresh = false) => {
      if (!CASES.some((filter) => c.name.includes(filter))) return
      if (apiIdle === undefined) {
        await run("warm", c.spec("warm"))
        await new Promise((resolve) => setTimeout(resolve, 500))
        apiIdle = await idleRateOf(api.child.pid!, 5000)
      }
      results.push(
        await measure(c.name, api.child.pid!, apiIdle, {
          fresh,
          warm: async () => (await run("warm", c.spec("warm"))).requests,
          work: async () => {
            const load = await run("measured", c.spec("measured"))
            return { count: load.requests, load }
          }
        })
      )
    }

    const newCompany = (phase: string) => (i: number) => JSON.stringify({ name: `压测公司${phase}${i}`, city: "北京" })
    const idempotent = (phase: Phase) => ({
      method: "POST" as const,
      path: `${API}/companies`,
      body: (i: number) => JSON.stringify({ name: `压测幂等${phase}${i}`, city: "北京" }),
      headers: (i: number) => ({ "idempotency-key": `capacity-${phase}-${i}` })
    })
    const cases: ReadonlyArray<Case> = [
      { name: "GET /matchmakers/{id}", spec: () => ({ method: "GET", path: `${API}/matchmakers/${matchmakers[0]}` }) },
      { name: "GET /guests (page 1 of 20)", spec: () => ({ method: "GET", path: `${API}/guests` }) },
      { name: "GET /guests sync, first page of 100", spec: () => ({ method: "GET", path: `${API}/guests`, query: syncQuery() }) },
      {
        name: `GET /guests sync, page of 100 ${GUESTS / 2} deep`,
        spec: () => ({ method: "GET", path: `${API}/guests`, query: syncQuery(cursor) })
      },
      { name: "POST /companies", spec: (phase) => ({ method: "POST", path: `${API}/companies`, body: newCompany(phase) }) },
      {
        name: "POST /guests (matchmaker's counter)",
        spec: (phase) => ({
          method: "POST",
          path: `${API}/guests`,
          body: (i) =>
            JSON.stringify({
              name: `压测嘉宾${phase}${i}`,
              gender: "female",
              company_id: Number(company),
              matchmaker_id: matchmakers[i % MATCHMAKERS]
            })
        })
      },
      {
        name: "PUT /matchmakers/{id}",
        spec: (phase) => ({
          method: "PUT",
          path: (i) => `${API}/matchmakers/${matchmakers[i % MATCHMAKERS]}`,
          body: (i) => JSON.stringify({ intro: `简介${phase}${i}` })
        })
      },
      { name: "POST /companies, Idempotency-Key, first", spec: idempotent },
      { name: "POST /companies, Idempotency-Key, replay", spec: idempotent },
      {
        name: "POST /matches (two matchmakers' counters)",
        spec: (phase) => ({
          method: "POST",
          path: `${API}/matches`,
          body: (i) => {
            const pair = phase === "warm" ? i : WARMUP + i
            return JSON.stringify({
              guest_a_id: paired[2 * pair],
              guest_b_id: paired[2 * pair + 1],
              guest_a_matchmaker_id: null,
              guest_b_matchmaker_id: null
            })
          }
        })
      },
      {
        name: "POST /activities",
        spec: (phase) => ({
          method: "POST",
          path: `${API}/activities`,
          body: (i) =>
            JSON.stringify({
              title: `压测活动${phase}${i}`,
              address: "北京市朝阳区",
              start_time: "2027-06-01 14:00:00",
              end_time: "2027-06-01 17:00:00",
              company_id: Number(company),
              description: null,
              cover_url: null,
              male_quota: 20,
              female_quota: 20
            })
        })
      },
      {
        name: "POST /follow-up/tasks/{id}/dispatch",
        spec: (phase) => ({
          method: "POST",
          path: (i) => `${API}/follow-up/tasks/${tasks[phase === "warm" ? i : WARMUP + i]}/dispatch`
        })
      }
    ]
    for (const c of cases) await measureCase(c)

    // The events feed: a page of 100 after an event halfway down it.
    const { rows: [halfway] } = await own<{ event_id: string }>(
      "SELECT event_id FROM events ORDER BY tx_id, id OFFSET (SELECT count(*) / 2 FROM events) LIMIT 1"
    )
    const middle = halfway?.event_id ?? "evt_000000000000000000000000"
    await measureCase({
      name: "GET /events (100 after one halfway)",
      spec: () => ({ method: "GET", path: `${API}/events`, query: new URLSearchParams({ after: middle!, page_size: "100" }).toString() })
    })

    // Webhooks: subscribers of company.created, each a receiver of its own that answers 204.
    let received = 0
    const receiver = createServer((req, res) => {
      req.resume()
      req.on("end", () => {
        received++
        res.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    cleanups.unshift(() => new Promise((resolve) => receiver.close(resolve)))
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    for (const s of subscribers) await call(s, "PUT", `${API}/webhook`, "", { url: hook, events: ["company.created"], enabled: true })
    await measureCase({
      name: `POST /companies, ${SUBSCRIBERS} webhook subscribers`,
      spec: (phase) => ({ method: "POST", path: `${API}/companies`, body: newCompany(phase === "warm" ? "warm-hook" : "hook") })
    }, true)
    // The same beside LISTENERS more LISTEN sessions in the database, as many instances and daemons
    // hold: a NOTIFY wakes every listening backend of the database, whatever its channel, and each
    // reads the notification queue in a transaction of its own.
    const listeners = await Promise.all(Array.from({ length: LISTENERS }, async () => {
      const listener = new pg.Client({ connectionString: url, application_name: "capacity-listener" })
      await listener.connect()
      await listener.query(`LISTEN capacity_elsewhere`)
      return listener
    }))
    await measureCase({
      name: `POST /companies, ${SUBSCRIBERS} webhook subscribers, ${LISTENERS} more listeners`,
      spec: (phase) => ({ method: "POST", path: `${API}/companies`, body: newCompany(phase === "warm" ? "warm-listen" : "listen") })
    })
    await Promise.all(listeners.map((l) => l.end()))
    await stopServer(api)

    // The daemon alone delivers what that case left: parked first (due tomorrow), the daemon
    // started and idle, then every delivery made due at once and woken.
    const { rowCount: parked } = await own(
      "UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 day' WHERE status = 'pending'"
    )
    const daemon = await startProcess(JOB_DAEMON, 18_391 + PORT_OFFSET, env, { JOBS_PORT: String(18_391 + PORT_OFFSET) })
    cleanups.unshift(() => stopServer(daemon))
    // Its start-up work (each job's first turn) done, what it spends idle (heartbeats, polls).
    await new Promise((resolve) => setTimeout(resolve, 3000))
    const daemonIdle = await idleRateOf(daemon.child.pid!, 5000)
    received = 0
    /** Makes `count` parked deliveries due (the oldest; all when not given), wakes the daemons, waits until they are done. */
    const deliver = async (count?: number) => {
      const { rows: [{ n }] } = await own<{ n: number }>(
        `WITH r AS (UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id IN (
           SELECT id FROM webhook_deliveries WHERE status = 'pending' ORDER BY id ${count === undefined ? "" : `LIMIT ${count}`})
         RETURNING 1)
         SELECT count(*)::int AS n, pg_notify('webhook_deliveries', 'due') FROM r`
      )
      const target = received + n!
      const deadline = Date.now() + 600_000
      for (;;) {
        if (received >= target) {
          const { rows: [{ due }] } = await own<{ due: number }>(
            "SELECT count(*)::int AS due FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at < now() + interval '1 hour'"
          )
          if (due === 0) return n!
        }
        if (Date.now() > deadline) throw new Error(`the daemon delivered ${received} of ${target} in 10 minutes`)
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    }
    const warmDeliveries = Math.min(WARMUP, Math.floor(parked! / 4))
    if (parked! > 0 && CASES.some((filter) => "webhook delivery".includes(filter))) {
      results.push(
        await measure("webhook delivery (the daemon, per delivery)", daemon.child.pid!, daemonIdle, {
          fresh: true,
          warm: () => deliver(warmDeliveries),
          work: async () => {
            const count = await deliver()
            // The releases' updates (of the warm-up's deliveries and of these) are this benchmark's.
            return { count, ownRows: { webhook_deliveries: parked! } }
          }
        })
      )
    }
    await stopServer(daemon)

    // --- Report ---------------------------------------------------------------------------------------
    const round = (x: number, digits = 2) => Number(x.toFixed(digits))
    process.stdout.write(
      `\nCapacity inputs: per request (webhook: per delivery), ${REQUESTS} requests per case after ${WARMUP} of warm-up, ` +
        `${CONNECTIONS} connections, one API process (pool of 10), ${GUESTS} guests; ${cpus().length} cores\n`
    )
    process.stdout.write(
      `The floor: PostgreSQL's CPU per bare statement (a prepared SELECT $1 from a pool of 10, ${CONNECTIONS} callers): ` +
        `${floorUs.toFixed(1)} µs; "PG/floor" is a case's PostgreSQL CPU per request in bare statements\n`
    )
    console.table(results.map((r) => ({
      case: r.case,
      "statements (pgss)": round(r.statements),
      "statements (log)": round(r.logged.statements ?? 0),
      "BEGIN/COMMIT": `${round(r.logged.BEGIN ?? 0)}/${round(r.logged.COMMIT ?? 0)}`,
      "SAVEPOINT/RELEASE/ROLLBACK": `${round(r.logged.SAVEPOINT ?? 0)}/${round(r.logged.RELEASE ?? 0)}/${round(r.logged.ROLLBACK ?? 0)}`,
      "round trips": round(Object.values(r.logged).reduce((a, b) => a + b, 0)),
      commits: round(r.commits),
      rollbacks: round(r.rollbacks),
      "rows written": round(r.rowsWritten),
      "WAL bytes": Math.round(r.walBytes),
      "process µs": Math.round(r.processUs),
      "PG µs": Math.round(r.pgUs),
      "PG/process": round(r.pgUs / r.processUs),
      "PG/floor": round(r.pgUs / floorUs, 1),
      "pool held/busy": `${r.pool.held}/${r.pool.busy}`,
      LISTEN: r.pool.listening,
      "req/s": Math.round(r.rps),
      "load avg": `${r.loadAverage[0].toFixed(1)}→${r.loadAverage[1].toFixed(1)}`
    })))
    process.stdout.write(
      "\nStatements per request (each run at least once per 20), mean execution ms, WAL bytes per call; rows written per table\n"
    )
    for (const r of results) {
      process.stdout.write(`\n${r.case} (occasional statements: ${round(r.occasional, 3)} per request)\n`)
      for (const s of r.perStatement) {
        process.stdout.write(
          `  ${round(s.calls, 3)}× ${s.ms.toFixed(3)} ms ${Math.round(s.wal)} B  ${s.query.replace(/\s+/g, " ").slice(0, 160)}\n`
        )
      }
      process.stdout.write(
        `  rows written: ${Object.entries(r.writesByTable).map(([t, n]) => `${t} ${round(n, 3)}`).join(", ") || "none"}\n`
      )
    }
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => {})
  }
}

await main()
process.exit(0)
