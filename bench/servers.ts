// The compiled servers the request-path benchmarks compare (the service and its three floors): how
// each is started and stopped, with the service's Node flags, and the signing clients they serve.
import { type ChildProcess, execSync, spawn } from "node:child_process"

import pg from "pg"

import { ALL_PERMISSIONS } from "../schema/Permissions.js"
import { makeSecretBox, placeOf } from "../src/auth/SecretBox.js"
import { singleKey } from "../src/auth/secretKeys.js"
import { NODE_FLAGS } from "../src/nodeFlags.js"
import { projectRoot } from "../src/root.js"
import { migrateDatabase } from "../src/sql/migrateUrl.js"
import type { Target } from "./load.js"
import { benchDatabaseUrl, log } from "./support.js"

/** The servers compared: the service and its three floors. */
export const KINDS = {
  service: { label: "service", script: "dist/src/main.js", ready: "/healthz" },
  raw: { label: "raw floor", script: "dist/bench/floor/server.js", ready: "/nowhere" },
  effect: { label: "Effect floor", script: "dist/bench/effect-floor/server.js", ready: "/nowhere" },
  fastify: { label: "Fastify floor", script: "dist/bench/fastify-floor/server.js", ready: "/nowhere" }
} as const
export type Kind = keyof typeof KINDS

/**
 * The four in the order they are measured and printed, but for the floors BENCH_SKIP leaves out
 * (fastify, effect, or both, comma separated).
 */
export const comparedServers = (): ReadonlyArray<Kind> => {
  const skipped = new Set((process.env.BENCH_SKIP ?? "").split(",").map((s) => s.trim()).filter((s) => s !== ""))
  for (const s of skipped) {
    if (s !== "effect" && s !== "fastify") throw new Error(`BENCH_SKIP names ${s}; only the effect and fastify floors can be left out`)
  }
  return (["service", "effect", "raw", "fastify"] as const).filter((k) => !skipped.has(k))
}

/** The bench database, migrated, and a connection to it. */
export const benchDatabase = async (): Promise<{ readonly url: string; readonly db: pg.Client }> => {
  const url = await benchDatabaseUrl()
  await migrateDatabase(url)
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  return { url, db }
}

/**
 * Removes what earlier runs' writes left (POST /companies' companies named 压测公司…, POST
 * /guests' and PUT /guests/{id}'s guests named 压测嘉宾… under one of them, their created and
 * updated events and the bench matchmakers' matchmaker.updated events), so that the tables do not grow run after run.
 */
export const removeBenchCompanies = async (db: pg.Client): Promise<void> => {
  await db.query("DELETE FROM events WHERE type = 'company.created' AND data->>'name' LIKE '压测公司%'")
  // POST /guests' guests (under a bench company) and their events, and the events of the
  // bench matchmakers' counters.
  await db.query("DELETE FROM events WHERE type IN ('guest.created', 'guest.updated') AND data->>'name' LIKE '压测嘉宾%'")
  await db.query("DELETE FROM events WHERE type = 'matchmaker.updated' AND data->>'name' = '压测红娘'")
  await db.query("DELETE FROM guests WHERE name LIKE '压测嘉宾%'")
  await db.query("DELETE FROM companies WHERE name LIKE '压测公司%'")
}

/** A compiled process the benchmarks start: its script and the path that answers once it is ready. */
export interface ProcessSpec {
  readonly label: string
  readonly script: string
  readonly ready: string
}

/** The job daemon (`npm run jobs`), its /healthz on JOBS_PORT. */
export const JOB_DAEMON: ProcessSpec = { label: "job daemon", script: "dist/jobs/main.js", ready: "/healthz" }

export interface Started {
  readonly child: ChildProcess
  readonly port: number
}

export interface Server extends Started {
  readonly kind: Kind
}

/** The servers started and not yet exited: a benchmark that ends early (a failed check) stops them too. */
const running = new Set<ChildProcess>()
process.once("exit", () => {
  for (const child of running) child.kill("SIGTERM")
})

/** Whether something already answers HTTP on `port` (a server left by another run would be measured instead). */
const answers = (port: number) => fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) }).then(() => true, () => false)

/**
 * Starts a compiled process on `port` with `env` (and `extra`; PORT is `port`), once its ready path
 * answers there; refuses a port already in use.
 */
export const startProcess = async (spec: ProcessSpec, port: number, env: NodeJS.ProcessEnv, extra: Record<string, string> = {}) => {
  if (await answers(port)) throw new Error(`port ${port} already answers HTTP: stop what runs there before benchmarking`)
  return new Promise<Started>((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_FLAGS, spec.script], {
      cwd: projectRoot(),
      env: { ...env, PORT: String(port), ...extra },
      stdio: ["ignore", "ignore", "ignore"]
    })
    running.add(child)
    child.once("exit", () => running.delete(child))
    const deadline = Date.now() + 60_000
    const poll = () =>
      fetch(`http://127.0.0.1:${port}${spec.ready}`).then(
        () => resolve({ child, port }),
        () => (Date.now() > deadline ? reject(new Error(`the ${spec.label} did not start`)) : setTimeout(poll, 200))
      )
    poll()
  })
}

/** Starts a compiled server on `port` with `env` (and `extra`), once it answers; refuses a port already in use. */
export const startServer = async (
  kind: Kind,
  port: number,
  env: NodeJS.ProcessEnv,
  extra: Record<string, string> = {}
): Promise<Server> => ({
  kind,
  ...(await startProcess(KINDS[kind], port, env, extra))
})

export const stopServer = (p: Started) =>
  new Promise<void>((resolve) => {
    if (p.child.exitCode !== null || p.child.signalCode !== null) return resolve()
    p.child.once("exit", () => resolve())
    p.child.kill("SIGTERM")
  })

/** `count` clients with every permission that are not rate limited (their secrets sealed with SECRET_KEY). */
export const newClients = async (db: pg.Client, count: number): Promise<Array<Omit<Target, "port">>> => {
  const box = makeSecretBox([singleKey(process.env.SECRET_KEY!)])
  const made: Array<Omit<Target, "port">> = []
  for (let i = 0; i < count; i++) {
    const appKey = `ak_bench_${Date.now().toString(36)}_${i}`
    const appSecret = `bench-secret-${i}-${Math.random().toString(36).slice(2)}`
    await db.query(
      `INSERT INTO clients (app_key, name, permissions, masking, secret_enc, rate_rps, rate_burst)
       VALUES ($1, 'bench', $2::text[], false, $3, 1000000, 1000000)`,
      [appKey, ALL_PERMISSIONS, box.seal(appSecret, placeOf("clients.secret_enc", appKey))]
    )
    made.push({ appKey, appSecret })
  }
  return made
}

/**
 * What the cheap-request benchmarks (request-cost.ts, profile.ts) start from: the bench database
 * without earlier runs' companies, a matchmaker to read, one signing client with every permission,
 * and the service and the floors compiled (`npm run build`, unless BENCH_NO_BUILD=1).
 */
export const cheapRequestsSetup = async () => {
  const { db, url } = await benchDatabase()
  await removeBenchCompanies(db)
  const { rows: [{ id: matchmakerId }] } = await db.query<{ id: string }>(
    "INSERT INTO matchmakers (name, phone) VALUES ('压测红娘', '13800138000') RETURNING id"
  )
  const [client] = await newClients(db, 1)
  if (process.env.BENCH_NO_BUILD !== "1") {
    log("bench: building the service and the floors (npm run build)…")
    execSync("npm run -s build", { cwd: projectRoot(), stdio: "inherit" })
  }
  return { db, url, matchmakerId: matchmakerId!, client: client! }
}
