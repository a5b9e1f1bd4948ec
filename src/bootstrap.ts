// Prepares the settings of `npm start` (scripts/start.ts, which passes them to the API and the
// daemon as their environment), of the admin command line and of `npm run migrate`: the project's
// .env, and without DATABASE_URL the project-local embedded PostgreSQL (started when none runs) with
// a local secret key. Nothing is written to process.env: what is prepared reaches the process's own
// settings through a ConfigProvider. The API and the daemon only read the environment (src/runProcess.ts).
import { createHash, randomBytes } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { parseEnv } from "node:util"

import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { escapeIdentifier } from "pg"

import { setting } from "./Config.js"
import { LOOPBACK_NETWORKS } from "./domain/destinations.js"
import { errorMessage } from "./domain/text.js"
import { always, logFormatConfig, logLevelConfig, type LogOutput, plainLog } from "./logging.js"
import { projectRoot } from "./root.js"
import { ensureEmbeddedPostgres, errorCode, type Log as EmbeddedLog, serverCanReach, withPgClient } from "./sql/embedded.js"
import { withDatabase } from "./sql/urls.js"
import { checkSettings, ProcessFailure } from "./startup.js"

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
async function outsideFolder(root: string, embeddedLog: EmbeddedLog): Promise<string | undefined> {
  const name = path.basename(root).replace(/[^A-Za-z0-9._-]/g, "_")
  const key = `${name}-${createHash("sha256").update(root).digest("hex").slice(0, 12)}`
  for (const base of outsideRoots()) {
    if (!(await ownFolder(base, 0o711))) continue
    const folder = path.join(base, key)
    if (!(await ownFolder(folder, 0o711)) || !(await serverCanReach(folder, embeddedLog))) continue
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
async function placeDataDir(log: Log, embeddedLog: EmbeddedLog): Promise<void> {
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
  if (await serverCanReach(root, embeddedLog)) {
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
  const folder = await outsideFolder(root, embeddedLog)
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

/** The project's .env as read at start: its settings, or why it could not be read. */
export class ProjectEnvFile extends Context.Service<ProjectEnvFile, {
  readonly settings: Readonly<Record<string, string>>
  readonly problem: string | undefined
}>()("App/ProjectEnvFile") {}

/**
 * An .env file (Node's own parser, as `node --env-file` reads it) filling in what the environment
 * does not set: ProjectEnvFile, and a ConfigProvider that reads the environment first, then the
 * file. A file that cannot be read adds nothing; the entry point reports its problem.
 */
export const envFileLayer = (file: string): Layer.Layer<ProjectEnvFile> =>
  Layer.unwrap(
    Effect.sync((): ProjectEnvFile["Service"] => {
      try {
        const settings = existsSync(file) ? parseEnv(readFileSync(file, "utf8")) : {}
        return {
          settings: Object.fromEntries(Object.entries(settings).flatMap(([k, v]) => (v === undefined ? [] : [[k, v]]))),
          problem: undefined
        }
      } catch (error) {
        return { settings: {}, problem: `reading ${file} failed: ${errorMessage(error)}` }
      }
    }).pipe(
      Effect.map((envFile) =>
        Layer.merge(
          Layer.succeed(ProjectEnvFile, envFile),
          ConfigProvider.layerAdd(ConfigProvider.fromEnvRecord(envFile.settings))
        )
      )
    )
  )

/** The project-local .env (see envFileLayer). */
export const ProjectEnvLive: Layer.Layer<ProjectEnvFile> = Layer.suspend(() => envFileLayer(path.join(projectRoot(), ".env")))

/** What the preparation supplied: settings the configuration lacked, and the embedded server. */
export interface Prepared {
  /**
   * DATABASE_URL (the embedded database's), SECRET_KEY (the kept local key) and, for the embedded
   * quick start, WEBHOOK_ALLOWED_NETWORKS (loopback), each only where the configuration sets none.
   */
  readonly settings: Readonly<Record<string, string>>
  readonly embedded: Embedded | null
  /** WEBHOOK_ALLOWED_NETWORKS was unset (or empty) and the embedded quick start admits loopback. */
  readonly loopbackAdmitted: boolean
}

/** The preparation failed: the embedded server, the database or the key could not be had. */
export class PreparationFailed extends Data.TaggedError("PreparationFailed")<{ readonly message: string }> {}

/** A setting as text; none when unset or empty (as for the other settings). */
const optionalText = (name: string) =>
  Effect.map(Effect.orElseSucceed(Config.option(Config.String(name)), () => Option.none<string>()), Option.getOrUndefined)

/** A step of the promise-based set-up, its failure the preparation's. */
const step = <A>(run: () => Promise<A>): Effect.Effect<A, PreparationFailed> =>
  Effect.tryPromise({ try: run, catch: (error) => new PreparationFailed({ message: errorMessage(error) }) })

/**
 * Supplies DATABASE_URL and SECRET_KEY (unless SECRET_KEYS is set) where the configuration sets
 * none, and, for the embedded quick start, WEBHOOK_ALLOWED_NETWORKS (loopback, so that a receiver
 * on this machine works) when the operator did not set it. `embedded` describes the embedded server
 * when one is used; its `stop` only stops it when this call started it. Its lines follow LOG_LEVEL.
 */
export const prepareDatabase: Effect.Effect<Prepared, PreparationFailed, LogOutput> = Effect.gen(function*() {
  const write = yield* plainLog
  const log: Log = (line) => write("Info", line, { source: "bootstrap" })
  const embeddedLog: EmbeddedLog = (message, fields) =>
    write(fields?.level ?? "Info", message, { source: fields?.source ?? "embedded-postgres" })
  const settings: Record<string, string> = {}
  let embedded: Embedded | null = null

  if ((yield* optionalText("DATABASE_URL")) === undefined) {
    const port = yield* Effect.mapError(embeddedPortConfig, (e) => new PreparationFailed({ message: e.message }))
    yield* step(() => placeDataDir(log, embeddedLog))
    const server = yield* step(() => ensureEmbeddedPostgres({ dataDir: embeddedDataDir(), port, log: embeddedLog }))
    embedded = { address: new URL(server.url).host, startedHere: server.startedHere, stop: server.stop }
    yield* step(() => ensureDatabase(server.url, DATABASE_NAME, log)).pipe(Effect.tapError(() => step(server.stop).pipe(Effect.ignore)))
    settings["DATABASE_URL"] = withDatabase(server.url, DATABASE_NAME)
  }
  // Empty counts as unset, as for the other settings.
  const allowed = yield* optionalText("WEBHOOK_ALLOWED_NETWORKS")
  const loopbackAdmitted = embedded !== null && (allowed === undefined || allowed.trim() === "")
  if (loopbackAdmitted) settings["WEBHOOK_ALLOWED_NETWORKS"] = LOOPBACK_NETWORKS

  // With SECRET_KEYS the operator manages the keys: the kept key is not added (it could not be removed).
  if ((yield* optionalText("SECRET_KEY")) === undefined && (yield* optionalText("SECRET_KEYS")) === undefined) {
    if (embedded === null) {
      return yield* new PreparationFailed({ message: "SECRET_KEY (64 hex characters) or SECRET_KEYS is required when DATABASE_URL is set" })
    }
    settings["SECRET_KEY"] = yield* step(() => localSecretKey(path.join(projectRoot(), ".data", "secret_key"), log))
  }
  return { settings, embedded, loopbackAdmitted }
})

/** The configuration as `prepared` completes it: its settings first (they are only those that were missing). */
export const preparedConfig = (prepared: Prepared): Layer.Layer<never> =>
  ConfigProvider.layerAdd(ConfigProvider.fromEnvRecord(prepared.settings), { asPrimary: true })

/**
 * Says that `source` started the embedded server and leaves it running, with the command that stops
 * it (shown whatever LOG_LEVEL says: a server left behind should never go unnoticed).
 */
export const noteLeftRunning = (source: string, embedded: Embedded | null): Effect.Effect<void> =>
  embedded?.startedHere !== true ? Effect.void : always(
    Effect.logInfo(
      `${source} started the embedded PostgreSQL (${embedded.address}, .data/pg) and leaves it running; \`${STOP_EMBEDDED_COMMAND}\` stops it`
    ).pipe(Effect.annotateLogs({ source }))
  )

/**
 * The start of `npm start` and `npm run migrate` (the API and the daemon only read the environment):
 * the .env read, `settings` checked (LOG_LEVEL, LOG_FORMAT and EMBEDDED_PG_PORT always), then
 * prepareDatabase. A failure is the ProcessFailure naming what is wrong.
 */
export const prepareOrFail: (
  source: string,
  settings?: ReadonlyArray<Config.Config<unknown>>
) => Effect.Effect<Prepared, ProcessFailure, LogOutput | ProjectEnvFile> = Effect.fnUntraced(function*(
  source: string,
  settings: ReadonlyArray<Config.Config<unknown>> = []
) {
  const envFile = yield* ProjectEnvFile
  if (envFile.problem !== undefined) return yield* ProcessFailure.startup(source, envFile.problem)
  yield* checkSettings(source, [logLevelConfig, logFormatConfig, embeddedPortConfig, ...settings])
  return yield* Effect.mapError(prepareDatabase, (e) => ProcessFailure.startup(source, e.message))
})
