// Prepares the environment for `npm start` (scripts/start.ts), which passes it to the API and the
// daemon, and for the admin command line and `npm run migrate`: loads .env and, without DATABASE_URL,
// uses the project-local embedded PostgreSQL (starting it when none runs) and keeps a local secret
// key. The API and the daemon themselves only read the environment (src/runProcess.ts).
import { createHash, randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { escapeIdentifier } from "pg"

import { setting } from "./Config.js"
import { LOOPBACK_NETWORKS } from "./domain/destinations.js"
import { exitOnInvalidSettings, exitWithStartupError, logFor, logFormatConfig, logLevelConfig, writeLog } from "./logging.js"
import { projectRoot } from "./root.js"
import { ensureEmbeddedPostgres, errorCode, serverCanReach, withPgClient } from "./sql/embedded.js"
import { withDatabase } from "./sql/urls.js"

type Log = (line: string) => void
/**
 * The embedded server when one is used: where it listens (host:port), whether the call that made
 * it started it, and `stop`, which only stops it in that case.
 */
export type Embedded = { readonly address: string; readonly startedHere: boolean; readonly stop: () => Promise<void> }

/** The command that stops the embedded server, for whoever leaves it running. */
export const STOP_EMBEDDED_COMMAND = "npm run db:stop"

const DEFAULT_EMBEDDED_PORT = 54329
const DATABASE_NAME = "matchmaking"
// Names this project's folders outside the checkout (see embeddedDataDir).
const PROJECT_NAME = "matchmaking-open-api"

export { projectRoot }

/**
 * Where the embedded cluster of this project lives: `.data/pg`, or, when the postgres OS user cannot
 * reach the checkout, a symbolic link there to a folder outside it (see placeDataDir).
 */
export const embeddedDataDir = (): string => path.join(projectRoot(), ".data", "pg")

/** EMBEDDED_PG_PORT; unset or empty means 54329. */
export const embeddedPortConfig: Config.Config<number> = setting("EMBEDDED_PG_PORT", (raw) => {
  if (raw === "") return Result.succeed(DEFAULT_EMBEDDED_PORT)
  const port = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
  return port >= 1 && port <= 65535
    ? Result.succeed(port)
    : Result.fail(`expected a port number (1-65535); got ${JSON.stringify(raw)}`)
}).pipe(Config.withDefault(DEFAULT_EMBEDDED_PORT))

async function ensureDatabase(adminUrl: string, name: string, log: Log): Promise<void> {
  await withPgClient(adminUrl, async (client) => {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])
    if (found.rows.length > 0) return
    log(`creating database ${name}`)
    try {
      await client.query(`CREATE DATABASE ${escapeIdentifier(name)} ENCODING 'UTF8' TEMPLATE template0`)
    } catch (error) {
      // Another process bootstrapping at the same moment may have created it first: that shows up as
      // duplicate_database, or as unique_violation on pg_database when both inserts race.
      const code = errorCode(error)
      if (code !== "42P04" && code !== "23505") throw error
      const again = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])
      if (again.rows.length === 0) throw error
    }
  })
}

const SECRET_PATTERN = /^[0-9a-fA-F]{64}$/

async function readSecret(file: string): Promise<string | undefined> {
  let content: string
  try {
    content = await fs.readFile(file, "utf8")
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined
    throw error
  }
  const secret = content.trim()
  // A bad file is reported rather than replaced: data encrypted or signed with it would be lost.
  if (!SECRET_PATTERN.test(secret)) throw new Error(`${file} does not hold a 64-hex-character secret key`)
  return secret
}

async function localSecretKey(file: string, log: Log): Promise<string> {
  const existing = await readSecret(file)
  if (existing !== undefined) return existing
  await fs.mkdir(path.dirname(file), { recursive: true })
  // Written completely under a temporary name, then linked into place; link fails when the file
  // already exists, so of two concurrent generators exactly one wins and both re-read its key.
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`
  await fs.writeFile(temp, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" })
  try {
    await fs.link(temp, file)
    log(`generated a new secret key in ${file}`)
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error
  } finally {
    await fs.rm(temp, { force: true })
  }
  const secret = await readSecret(file)
  if (secret === undefined) throw new Error(`${file} vanished right after it was written`)
  return secret
}

// ---------------------------------------------------------------------------------------------
// Where the cluster lives when the postgres OS user cannot reach the checkout

// Folders outside the checkout that may hold the cluster, most durable first: /var/lib survives
// reboots and temp-folder cleaners; the temp folder is the fallback when /var/lib is unusable.
const outsideRoots = (): ReadonlyArray<string> => [
  ...new Set([
    path.join("/var/lib", PROJECT_NAME),
    path.join(os.tmpdir(), `${PROJECT_NAME}-data`),
    path.join("/tmp", `${PROJECT_NAME}-data`)
  ])
]

// A folder this process creates, or created on an earlier run; one that another user owns or may
// write to is not trusted with the cluster (a shared temp folder could hold a planted one).
async function ownFolder(dir: string, mode: number): Promise<boolean> {
  try {
    await fs.mkdir(dir, { mode })
    // mkdir's mode is narrowed by the umask; the postgres user needs the search bit.
    await fs.chmod(dir, mode)
    return true
  } catch (error) {
    if (errorCode(error) !== "EEXIST") return false
  }
  const stat = await fs.lstat(dir)
  return stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o022) === 0
}

/**
 * The folder outside the checkout that holds this checkout's cluster: `<root>/<name>-<hash of the
 * checkout's path>`, so that each checkout keeps its own cluster across restarts.
 */
async function outsideFolder(root: string): Promise<string | undefined> {
  const name = path.basename(root).replace(/[^A-Za-z0-9._-]/g, "_")
  const key = `${name}-${createHash("sha256").update(root).digest("hex").slice(0, 12)}`
  for (const base of outsideRoots()) {
    if (!(await ownFolder(base, 0o711))) continue
    const folder = path.join(base, key)
    if (!(await ownFolder(folder, 0o711)) || !(await serverCanReach(folder))) continue
    // Tells an operator which checkout the folder belongs to.
    await fs.writeFile(path.join(folder, "project"), `${root}\n`)
    return folder
  }
  return undefined
}

/**
 * Makes `.data/pg` usable by the PostgreSQL server. As root, the server runs as the postgres OS
 * user; when a folder above the checkout is private to its owner, that user cannot reach `.data/pg`,
 * and rather than changing permissions of folders that are not the project's, the cluster is kept
 * outside the checkout and `.data/pg` becomes a symbolic link to it.
 */
async function placeDataDir(log: Log): Promise<void> {
  const local = embeddedDataDir()
  const dataRoot = path.dirname(local)
  // Search permission for others: the postgres user has to pass through to .data/pg.
  await fs.mkdir(dataRoot, { recursive: true, mode: 0o711 })

  const linked = await fs.readlink(local).catch(() => undefined)
  if (linked !== undefined) {
    if (existsSync(path.dirname(path.resolve(dataRoot, linked)))) return
    // Its folder is gone (a temp folder cleared on reboot): start over with a new one.
    log(`the folder of the embedded cluster that .data/pg linked to (${linked}) is gone; a new cluster is made`)
    await fs.rm(local, { force: true })
  }

  const root = await fs.realpath(projectRoot())
  if (await serverCanReach(root)) {
    // .data is the project's own folder (unless it links elsewhere); a umask of 077 may have made
    // it private.
    const stat = await fs.lstat(dataRoot)
    if (process.getuid?.() === 0 && stat.isDirectory() && (stat.mode & 0o001) === 0) {
      await fs.chmod(dataRoot, (stat.mode & 0o7777) | 0o001)
    }
    return
  }

  const unreachable = `the postgres OS user (which runs PostgreSQL for root) cannot pass through a private folder above ${root}`
  // An empty folder left by an earlier run gives way to the link; a cluster is never moved silently.
  await fs.rmdir(local).catch((error: unknown) => {
    if (errorCode(error) === "ENOENT") return
    throw new Error(
      `${local} holds a cluster that PostgreSQL cannot use: ${unreachable}. Move the checkout, or set DATABASE_URL`,
      { cause: error }
    )
  })
  const folder = await outsideFolder(root)
  if (folder === undefined) {
    throw new Error(`${unreachable}, and none of ${outsideRoots().join(", ")} could take its cluster; set DATABASE_URL`)
  }
  const target = path.join(folder, "pg")
  await fs.symlink(target, local).catch((error: unknown) => {
    // Another process starting at the same moment placed the same link.
    if (errorCode(error) !== "EEXIST") throw error
  })
  log(`${unreachable}, so the embedded cluster lives in ${target} (.data/pg links to it)`)
}

// ---------------------------------------------------------------------------------------------
// Entry points

let envFileLoaded = false
// A project-local .env fills in what the environment does not already set.
const loadProjectEnv = (): void => {
  if (envFileLoaded) return
  const envFile = path.join(projectRoot(), ".env")
  if (existsSync(envFile)) process.loadEnvFile(envFile)
  envFileLoaded = true
}

/** What bootstrapEnv prepared: the embedded server, and whether it admitted loopback for webhooks. */
export interface Bootstrapped {
  readonly embedded: Embedded | null
  /** WEBHOOK_ALLOWED_NETWORKS was unset (or empty) and the embedded quick start set it to loopback. */
  readonly loopbackAdmitted: boolean
}

/**
 * Fills in DATABASE_URL and SECRET_KEY (unless SECRET_KEYS is set) in process.env, and, for the
 * embedded quick start, WEBHOOK_ALLOWED_NETWORKS (loopback, so that a receiver on this machine works)
 * when the operator did not set it. `embedded` describes the embedded server when one is used; `stop`
 * only stops it when this call started it.
 */
export async function bootstrapEnv(opts?: { log?: Log }): Promise<Bootstrapped> {
  // JSON lines on stderr like every other log line; stdout is reserved for the JSON admin prints.
  const log = opts?.log ?? logFor("bootstrap")
  loadProjectEnv()
  let embedded: Embedded | null = null

  const databaseUrl = process.env["DATABASE_URL"]
  if (databaseUrl === undefined || databaseUrl === "") {
    // Read from the environment as it is now (effect's default provider keeps a copy of it).
    const port = Effect.runSync(embeddedPortConfig.parse(ConfigProvider.fromEnv()))
    await placeDataDir(log)
    const server = await ensureEmbeddedPostgres({ dataDir: embeddedDataDir(), port, log: opts?.log })
    embedded = { address: new URL(server.url).host, startedHere: server.startedHere, stop: server.stop }
    try {
      await ensureDatabase(server.url, DATABASE_NAME, log)
    } catch (error) {
      await server.stop()
      throw error
    }
    process.env["DATABASE_URL"] = withDatabase(server.url, DATABASE_NAME)
  }
  // Empty counts as unset, as for the other settings.
  const allowed = process.env["WEBHOOK_ALLOWED_NETWORKS"]
  const loopbackAdmitted = embedded !== null && (allowed === undefined || allowed.trim() === "")
  if (loopbackAdmitted) process.env["WEBHOOK_ALLOWED_NETWORKS"] = LOOPBACK_NETWORKS

  // With SECRET_KEYS the operator manages the keys: the kept key is not added (it could not be removed).
  const unset = (name: string) => process.env[name] === undefined || process.env[name] === ""
  if (unset("SECRET_KEY") && unset("SECRET_KEYS")) {
    if (embedded === null) {
      throw new Error("SECRET_KEY (64 hex characters) or SECRET_KEYS is required when DATABASE_URL is set")
    }
    process.env["SECRET_KEY"] = await localSecretKey(path.join(projectRoot(), ".data", "secret_key"), log)
  }

  return { embedded, loopbackAdmitted }
}

/**
 * Says that `source` started the embedded server and leaves it running, with the command that stops
 * it (shown whatever LOG_LEVEL says: a server left behind should never go unnoticed).
 */
export const noteLeftRunning = (source: string, embedded: Embedded | null): void => {
  if (embedded?.startedHere !== true) return
  writeLog(
    "Info",
    `${source} started the embedded PostgreSQL (${embedded.address}, .data/pg) and leaves it running; \`${STOP_EMBEDDED_COMMAND}\` stops it`,
    { source },
    { always: true }
  )
}

/**
 * The start of `npm start` and `npm run migrate` (the API and the daemon only read the environment):
 * loads .env, checks `settings` (LOG_LEVEL, LOG_FORMAT and EMBEDDED_PG_PORT are always checked) and runs
 * bootstrapEnv. A failure is reported as one JSON line on stderr naming
 * what is wrong, and the process exits with code 1.
 */
export async function bootstrapOrExit(
  source: string,
  settings: ReadonlyArray<Config.Config<unknown>> = []
): Promise<Bootstrapped> {
  try {
    loadProjectEnv()
  } catch (error) {
    exitWithStartupError(source, error)
  }
  exitOnInvalidSettings(source, [logLevelConfig, logFormatConfig, embeddedPortConfig, ...settings])
  try {
    return await bootstrapEnv()
  } catch (error) {
    return exitWithStartupError(source, error)
  }
}
