// Runs one local PostgreSQL cluster per data folder from the binaries shipped with `embedded-postgres`,
// so development and tests need no installed database server.
import { LogLevel } from "effect"
import { execFile, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { createRequire } from "node:module"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { writeLog } from "../logging.js"

// `pg` ships no type declarations and @types/pg is not installed, so it is loaded through `require`
// and described by the few members used here.
interface PgQueryResult {
  readonly rows: ReadonlyArray<Record<string, unknown>>
}
export interface PgClient {
  connect(): Promise<void>
  query(text: string, values?: ReadonlyArray<unknown>): Promise<PgQueryResult>
  end(): Promise<void>
  on(event: "error", listener: (error: Error) => void): unknown
}
interface PgModule {
  readonly Client: new (config: {
    readonly connectionString: string
    readonly connectionTimeoutMillis?: number
  }) => PgClient
}
const pg = createRequire(import.meta.url)("pg") as PgModule

// The package is not a direct dependency (embedded-postgres picks it per platform), so it is located
// at runtime; importing `embedded-postgres` itself is avoided because it installs exit hooks that
// call process.exit on SIGINT/SIGTERM.
interface PgBinaries {
  readonly initdb: string
  readonly pg_ctl: string
  readonly postgres: string
}
let binariesPromise: Promise<PgBinaries> | undefined
const binaries = (): Promise<PgBinaries> => {
  if (binariesPromise === undefined) {
    const specifier: string = `@embedded-postgres/${process.platform}-${process.arch}`
    binariesPromise = (import(specifier) as Promise<PgBinaries>).catch((cause: unknown) => {
      binariesPromise = undefined
      throw new Error(`PostgreSQL binaries for ${process.platform}-${process.arch} are missing (${specifier}; run npm install)`, {
        cause
      })
    })
  }
  return binariesPromise
}

/** Optional detail of a log line: its level (default Info) and source (default "embedded-postgres"). */
export interface LogFields {
  readonly level?: LogLevel.LogLevel
  readonly source?: string
}
export type Log = (message: string, fields?: LogFields) => void
// JSON lines on stderr like the services' own logs; PostgreSQL's output is tagged source "postgres".
const defaultLog: Log = (message, fields) =>
  writeLog(fields?.level ?? LogLevel.Info, message, { source: fields?.source ?? "embedded-postgres" })

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const errorCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

/** Opens a short-lived `pg` client, runs `use`, and always closes the connection. */
export async function withPgClient<A>(
  url: string,
  use: (client: PgClient) => Promise<A>,
  opts?: { connectionTimeoutMillis?: number }
): Promise<A> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: opts?.connectionTimeoutMillis ?? 5000 })
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
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => {
        if (address !== null && typeof address === "object") resolve(address.port)
        else reject(new Error("could not determine a free port"))
      })
    })
  })
}

// ---------------------------------------------------------------------------------------------
// Running binaries as the `postgres` OS user

interface RunAs {
  readonly uid?: number
  readonly gid?: number
}

const execText = (file: string, args: ReadonlyArray<string>): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile(file, [...args], (error, stdout, stderr) => {
      if (error) reject(new Error(`${file} ${args.join(" ")} failed: ${stderr.trim() || error.message}`))
      else resolve(stdout)
    })
  })

let runAsPromise: Promise<RunAs> | undefined
// PostgreSQL refuses to run as root, so root hands the work to the `postgres` user (created when
// missing, like embedded-postgres's createPostgresUser); any other user runs the binaries itself.
const runAs = (log: Log): Promise<RunAs> => {
  if (runAsPromise === undefined) {
    runAsPromise = (async (): Promise<RunAs> => {
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
    })().catch((error: unknown) => {
      runAsPromise = undefined
      throw error
    })
  }
  return runAsPromise
}

interface RunResult {
  readonly code: number | null
  readonly output: string
}

const runBinary = (
  file: string,
  args: ReadonlyArray<string>,
  user: RunAs,
  log: Log
): Promise<RunResult> =>
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
    child.on("close", (code) => {
      for (const line of output.split("\n")) if (line.trim() !== "") log(line, { source: "postgres" })
      resolve({ code, output })
    })
  })

// ---------------------------------------------------------------------------------------------
// What the server's OS user can reach

// Asked as that user, so permissions, ACLs and every folder above count. Node drops supplementary
// groups when it switches user, exactly as for the server itself.
const succeedsAs = (file: string, args: ReadonlyArray<string>, user: RunAs): Promise<boolean> =>
  new Promise((resolve) => {
    const child = spawn(file, [...args], { ...user, cwd: "/", stdio: "ignore" })
    child.on("error", () => resolve(false))
    child.on("close", (code) => resolve(code === 0))
  })

const canEnter = (dir: string, user: RunAs): Promise<boolean> =>
  user.uid === undefined
    ? Promise.resolve(true)
    : succeedsAs("/bin/sh", ["-c", 'test -d "$1" && test -x "$1"', "sh", dir], user)

/** Whether the OS user that runs the PostgreSQL server can pass through every folder down to `dir`. */
export async function serverCanReach(dir: string): Promise<boolean> {
  return canEnter(dir, await runAs(defaultLog))
}

const tempRoots = (): ReadonlyArray<string> => [...new Set([os.tmpdir(), "/tmp"])]

/**
 * A new empty folder for a throwaway cluster (tests): under the temp folder, owned by the server's
 * OS user (PostgreSQL wants its data folder private to itself).
 */
export async function makeServerTempDir(prefix: string): Promise<string> {
  const user = await runAs(defaultLog)
  for (const base of tempRoots()) {
    if (!(await canEnter(base, user))) continue
    const folder = await fs.mkdtemp(path.join(base, prefix))
    if (user.uid !== undefined && user.gid !== undefined) await fs.chown(folder, user.uid, user.gid)
    return folder
  }
  throw new Error(`the postgres OS user cannot reach any of ${tempRoots().join(", ")}`)
}

// ---------------------------------------------------------------------------------------------
// Binaries the server's OS user can run

const binariesIn = (native: string): PgBinaries => ({
  initdb: path.join(native, "bin", "initdb"),
  pg_ctl: path.join(native, "bin", "pg_ctl"),
  postgres: path.join(native, "bin", "postgres")
})

const MANIFEST = ".manifest.json"

interface Manifest {
  /** Size of every regular file, by path relative to the copy. */
  readonly files: Record<string, number>
  /** Target of every symbolic link, by path relative to the copy. */
  readonly links: Record<string, string>
}

const isRecordOf = <A>(u: unknown, item: (v: unknown) => v is A): u is Record<string, A> =>
  typeof u === "object" && u !== null && Object.values(u).every(item)

const readManifest = async (dir: string): Promise<Manifest | undefined> => {
  try {
    const parsed: unknown = JSON.parse(await fs.readFile(path.join(dir, MANIFEST), "utf8"))
    if (typeof parsed !== "object" || parsed === null || !("files" in parsed) || !("links" in parsed)) return undefined
    const { files, links } = parsed
    return isRecordOf(files, (v): v is number => typeof v === "number") &&
        isRecordOf(links, (v): v is string => typeof v === "string")
      ? { files, links }
      : undefined
  } catch {
    return undefined
  }
}

// A copy is trusted only when this user made it (nobody else can have changed it since) and is
// used only while complete: temp-folder cleaners delete files nobody used for a while.
async function isIntactCopy(dir: string): Promise<boolean> {
  const stat = await fs.lstat(dir).catch(() => undefined)
  if (stat === undefined) return false
  if (!stat.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0) {
    throw new Error(`${dir} was not made by this user (or others may write to it)`)
  }
  const manifest = await readManifest(dir)
  if (manifest === undefined) return false
  for (const [file, size] of Object.entries(manifest.files)) {
    const found = await fs.lstat(path.join(dir, file)).catch(() => undefined)
    if (found === undefined || !found.isFile() || found.size !== size) return false
  }
  for (const [link, target] of Object.entries(manifest.links)) {
    if ((await fs.readlink(path.join(dir, link)).catch(() => undefined)) !== target) return false
  }
  return true
}

// Files become readable (and, if executable, runnable) by everyone and writable by nobody else;
// links stay links (the libraries are found through them), pointing inside the copy.
async function copyTree(from: string, to: string, root: string, manifest: Manifest, prefix = ""): Promise<void> {
  for (const entry of await fs.readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name)
    const dest = path.join(to, entry.name)
    const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`
    if (entry.isDirectory()) {
      await fs.mkdir(dest)
      await fs.chmod(dest, 0o755)
      await copyTree(source, dest, root, manifest, relative)
    } else if (entry.isSymbolicLink()) {
      const link = await fs.readlink(source)
      const target = path.isAbsolute(link) && link.startsWith(`${root}/`) ? path.relative(from, link) : link
      await fs.symlink(target, dest)
      manifest.links[relative] = target
    } else if (entry.isFile()) {
      const { mode, size } = await fs.stat(source)
      await fs.copyFile(source, dest)
      await fs.chmod(dest, (mode & 0o111) !== 0 ? 0o755 : 0o644)
      manifest.files[relative] = size
    }
  }
}

// Copies of an interrupted run (a killed process) are removed once they are surely abandoned.
async function removeAbandoned(base: string, name: string): Promise<void> {
  const entries = await fs.readdir(base).catch((): string[] => [])
  for (const entry of entries) {
    if (!entry.startsWith(`${name}.tmp-`) && !entry.startsWith(`${name}.stale-`)) continue
    const stat = await fs.lstat(path.join(base, entry)).catch(() => undefined)
    if (stat !== undefined && stat.uid === process.getuid?.() && Date.now() - stat.mtimeMs > 3_600_000) {
      await fs.rm(path.join(base, entry), { recursive: true, force: true })
    }
  }
}

// Made completely under a temporary name and renamed into place, so that concurrent processes never
// see half a copy; of two made at once, one wins and the other is discarded.
async function copyNative(native: string, target: string, log: Log): Promise<void> {
  await removeAbandoned(path.dirname(target), path.basename(target))
  log(`copying the PostgreSQL binaries to ${target}, because the postgres OS user cannot reach ${native}`)
  const staging = await fs.mkdtemp(`${target}.tmp-`)
  try {
    const manifest: Manifest = { files: {}, links: {} }
    await copyTree(native, staging, native, manifest)
    await fs.writeFile(path.join(staging, MANIFEST), JSON.stringify(manifest))
    await fs.chmod(staging, 0o755)
    try {
      await fs.rename(staging, target)
    } catch (error) {
      const code = errorCode(error)
      if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error
      if (await isIntactCopy(target)) return
      // An incomplete earlier copy is in the way: it is moved aside, then removed.
      const aside = `${target}.stale-${randomBytes(4).toString("hex")}`
      await fs.rename(target, aside).catch(() => {})
      await fs.rename(staging, target).catch(async (again: unknown) => {
        if (!(await isIntactCopy(target))) throw again
      })
      await fs.rm(aside, { recursive: true, force: true })
    }
  } finally {
    await fs.rm(staging, { recursive: true, force: true })
  }
}

/**
 * A copy of the `native` folder (bin, lib, share) that `user` can run, in the temp folder and named
 * after the package version; made once and reused by every later process.
 */
async function reachableCopy(native: string, user: RunAs, log: Log): Promise<string> {
  const pkg: unknown = JSON.parse(await fs.readFile(path.join(native, "..", "package.json"), "utf8"))
  const version = typeof pkg === "object" && pkg !== null && "version" in pkg ? String(pkg.version) : "unknown"
  const name = `embedded-postgres-${process.platform}-${process.arch}-${version}`
  const problems: string[] = []
  for (const base of tempRoots()) {
    const target = path.join(base, name)
    try {
      if (!(await isIntactCopy(target))) await copyNative(native, target, log)
      if (await succeedsAs(binariesIn(target).postgres, ["--version"], user)) return target
      problems.push(`${target}: not runnable by that user either`)
    } catch (error) {
      problems.push(`${target}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  throw new Error(
    `the postgres OS user cannot run the PostgreSQL binaries in ${native} (a folder above it is private), ` +
      `and no copy it can run could be made (${problems.join("; ")})`
  )
}

/**
 * A `native` folder of embedded-postgres (bin, lib, share) whose binaries the server's OS user can
 * run: `native` itself, or, when root's postgres user cannot reach it (a folder above the checkout
 * is private), a copy in the temp folder. Permissions of folders that are not this module's own
 * are never changed.
 */
export async function runnableNativeFolder(native: string, opts?: { log?: Log }): Promise<string> {
  const log = opts?.log ?? defaultLog
  const user = await runAs(log)
  if (user.uid === undefined || (await succeedsAs(binariesIn(native).postgres, ["--version"], user))) return native
  return reachableCopy(native, user, log)
}

let serverBinariesPromise: Promise<PgBinaries> | undefined
const serverBinaries = (log: Log): Promise<PgBinaries> => {
  if (serverBinariesPromise === undefined) {
    serverBinariesPromise = (async (): Promise<PgBinaries> => {
      const installed = path.dirname(path.dirname((await binaries()).postgres))
      return binariesIn(await runnableNativeFolder(installed, { log }))
    })().catch((error: unknown) => {
      serverBinariesPromise = undefined
      throw error
    })
  }
  return serverBinariesPromise
}

// ---------------------------------------------------------------------------------------------
// Folder preparation

// A data folder given as a symbolic link (bootstrap's `.data/pg` when the checkout is out of the
// postgres user's reach) is used by its real path, which is what the server is given and reports.
async function resolveDataDir(dataDir: string): Promise<string> {
  const absolute = path.resolve(dataDir)
  const link = await fs.readlink(absolute).catch(() => undefined)
  const target = link === undefined ? absolute : path.resolve(path.dirname(absolute), link)
  const parent = await fs.realpath(path.dirname(target)).catch(() => path.dirname(target))
  return path.join(parent, path.basename(target))
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file)
    return true
  } catch {
    return false
  }
}

// ---------------------------------------------------------------------------------------------
// Cross-process lock (a sibling file, because initdb wants an empty data folder)

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return errorCode(error) === "EPERM"
  }
}

const LOCK_TIMEOUT_MS = 120_000
// A lock file is created empty and filled a moment later; only an old empty file counts as stale.
const EMPTY_LOCK_GRACE_MS = 10_000

async function isStaleLock(lockFile: string): Promise<boolean> {
  try {
    const [content, stat] = await Promise.all([fs.readFile(lockFile, "utf8"), fs.stat(lockFile)])
    const pid = Number.parseInt(content, 10)
    if (Number.isInteger(pid) && pid > 0) return !isAlive(pid)
    return Date.now() - stat.mtimeMs > EMPTY_LOCK_GRACE_MS
  } catch (error) {
    if (errorCode(error) === "ENOENT") return false
    throw error
  }
}

// Breaking a stale lock is itself guarded, otherwise two waiters could both see the stale lock and
// the slower one would delete the lock the faster one had just taken.
async function breakStaleLock(lockFile: string, log: Log): Promise<void> {
  const breaker = `${lockFile}.break`
  let handle: fs.FileHandle
  try {
    handle = await fs.open(breaker, "wx")
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error
    const stat = await fs.stat(breaker).catch(() => undefined)
    if (stat !== undefined && Date.now() - stat.mtimeMs > EMPTY_LOCK_GRACE_MS) await fs.rm(breaker, { force: true })
    return
  }
  try {
    if (await isStaleLock(lockFile)) {
      log(`removing stale lock ${lockFile}`)
      await fs.rm(lockFile, { force: true })
    }
  } finally {
    await handle.close()
    await fs.rm(breaker, { force: true })
  }
}

async function withLock<A>(lockFile: string, log: Log, body: () => Promise<A>): Promise<A> {
  const deadline = Date.now() + LOCK_TIMEOUT_MS
  let waitingLogged = false
  for (;;) {
    let handle: fs.FileHandle | undefined
    try {
      handle = await fs.open(lockFile, "wx")
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw error
    }
    if (handle !== undefined) {
      try {
        await handle.writeFile(`${process.pid}\n`)
      } finally {
        await handle.close()
      }
      try {
        return await body()
      } finally {
        await fs.rm(lockFile, { force: true })
      }
    }
    if (await isStaleLock(lockFile)) {
      await breakStaleLock(lockFile, log)
      continue
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for lock ${lockFile}`)
    if (!waitingLogged) {
      log(`waiting for another process holding ${lockFile}`)
      waitingLogged = true
    }
    await sleep(100 + Math.floor(Math.random() * 100))
  }
}

// ---------------------------------------------------------------------------------------------
// Server state

interface PostmasterPid {
  readonly pid: number
  readonly port: number
}

async function readPostmasterPid(dataDir: string): Promise<PostmasterPid | undefined> {
  let content: string
  try {
    content = await fs.readFile(path.join(dataDir, "postmaster.pid"), "utf8")
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined
    throw error
  }
  // Line 1 is the postmaster's pid, line 4 its port (see pidfile.h).
  const lines = content.split("\n")
  const pid = Number.parseInt(lines[0] ?? "", 10)
  const port = Number.parseInt(lines[3] ?? "", 10)
  return Number.isInteger(pid) && pid > 0 ? { pid, port: Number.isInteger(port) ? port : 0 } : undefined
}

// After a kill -9 the pid in postmaster.pid may be a zombie or have been reused by an unrelated
// process (even another cluster's backend); signalling that one (pg_ctl stop) or treating it as our
// server would be wrong. PostgreSQL processes run with the data folder as working directory, which
// tells them apart.
async function isServerOf(pid: number, dataDir: string): Promise<boolean> {
  if (!isAlive(pid)) return false
  if (!(await exists("/proc/self/cwd"))) return true // no /proc (not Linux): liveness is all there is
  const [cwd, target] = await Promise.all([
    fs.readlink(`/proc/${pid}/cwd`).catch(() => undefined),
    fs.realpath(dataDir).catch(() => dataDir)
  ])
  return cwd === target
}

const urlFor = (port: number, database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`

type Probe = { readonly kind: "ours" } | { readonly kind: "other"; readonly dataDirectory: string } | { readonly kind: "none" }

// Identifies the server on the port by its data directory, so that another cluster listening on the
// same port is never mistaken for ours.
async function probe(port: number, dataDir: string): Promise<Probe> {
  try {
    const dataDirectory = await withPgClient(
      urlFor(port),
      async (client) => {
        const result = await client.query("SHOW data_directory")
        return String(result.rows[0]?.["data_directory"] ?? "")
      },
      { connectionTimeoutMillis: 2000 }
    )
    const [theirs, ours] = await Promise.all([
      fs.realpath(dataDirectory).catch(() => dataDirectory),
      fs.realpath(dataDir).catch(() => dataDir)
    ])
    return theirs === ours ? { kind: "ours" } : { kind: "other", dataDirectory }
  } catch {
    return { kind: "none" }
  }
}

/** The running server of `dataDir` (its port), waiting a little for one that is still starting. */
async function findRunning(dataDir: string, log: Log): Promise<number | undefined> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const pidFile = await readPostmasterPid(dataDir)
    if (pidFile === undefined || !(await isServerOf(pidFile.pid, dataDir))) return undefined
    const found = await probe(pidFile.port, dataDir)
    if (found.kind === "ours") return pidFile.port
    if (Date.now() > deadline) {
      throw new Error(
        `PostgreSQL process ${pidFile.pid} holds ${dataDir} but does not accept connections on port ${pidFile.port}`
      )
    }
    log(`server ${pidFile.pid} of ${dataDir} is not accepting connections yet; waiting`)
    await sleep(500)
  }
}

// Every PostgreSQL process (postmaster and backends) runs with the data folder as its working
// directory, which identifies the processes of this cluster without trusting postmaster.pid.
// Returns undefined where /proc is unavailable.
async function processesInDataDir(dataDir: string): Promise<number[] | undefined> {
  let entries: string[]
  try {
    entries = await fs.readdir("/proc")
  } catch {
    return undefined
  }
  const target = await fs.realpath(dataDir)
  const found: number[] = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    // Zombies and other users' processes have no readable cwd; neither can touch the cluster.
    const cwd = await fs.readlink(`/proc/${entry}/cwd`).catch(() => undefined)
    if (cwd === target) found.push(Number(entry))
  }
  return found
}

// After a kill -9 the postmaster's lock files stay behind, naming a pid that may still be a zombie,
// be reused by an unrelated process, or have orphaned backends still attached to its shared memory.
// PostgreSQL then refuses to start; once no process of the cluster is left the files are removed.
async function clearStaleServerFiles(dataDir: string, log: Log): Promise<void> {
  const pidFile = await readPostmasterPid(dataDir)
  if (pidFile === undefined) return
  const deadline = Date.now() + 10_000
  for (;;) {
    const remaining = await processesInDataDir(dataDir)
    // Without /proc the decision is left to PostgreSQL's own checks (and the start retries).
    if (remaining === undefined) return
    if (remaining.length === 0) break
    if (Date.now() > deadline) {
      throw new Error(`processes ${remaining.join(", ")} still use ${dataDir}; is a server of it shutting down?`)
    }
    await sleep(100)
  }
  log(`removing lock files of a server of ${dataDir} that is gone (pid ${pidFile.pid})`)
  await fs.rm(path.join(dataDir, "postmaster.pid"), { force: true })
  for (const entry of await fs.readdir(dataDir)) {
    if (/^\.s\.PGSQL\.\d+(\.lock)?$/.test(entry)) await fs.rm(path.join(dataDir, entry), { force: true })
  }
}

async function initialise(dataDir: string, user: RunAs, log: Log): Promise<void> {
  const { initdb } = await serverBinaries(log)
  // initdb works in a sibling folder that is renamed into place, so an interrupted initdb never
  // leaves a half-made cluster behind a PG_VERSION file.
  const staging = `${dataDir}.initdb-tmp`
  await fs.rm(staging, { recursive: true, force: true })
  await fs.mkdir(staging, { mode: 0o700 })
  if (user.uid !== undefined && user.gid !== undefined) await fs.chown(staging, user.uid, user.gid)
  log(`initialising a new cluster in ${dataDir}`)
  const result = await runBinary(
    initdb,
    ["-D", staging, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8"],
    user,
    () => {}
  )
  if (result.code !== 0) {
    await fs.rm(staging, { recursive: true, force: true })
    throw new Error(`initdb failed (exit ${result.code}): ${result.output.trim()}`)
  }
  // rename(2) replaces an empty directory, which is what a freshly created data folder is.
  await fs.rmdir(dataDir).catch((error: unknown) => {
    if (errorCode(error) !== "ENOENT") throw error
  })
  await fs.rename(staging, dataDir)
}

async function startServer(dataDir: string, port: number, user: RunAs, log: Log): Promise<void> {
  const { pg_ctl } = await serverBinaries(log)
  const logFile = path.join(path.dirname(dataDir), "postgres.log")
  // pg_ctl (running as postgres) appends to the log, and the folder holding it may belong to root.
  const handle = await fs.open(logFile, "a", 0o640)
  await handle.close()
  if (user.uid !== undefined && user.gid !== undefined) await fs.chown(logFile, user.uid, user.gid)

  // The socket lives in the data folder (private to this cluster) unless the path would exceed the
  // 107-byte limit of Unix socket paths; clients here use TCP, so sockets are then just disabled.
  const socketDir = `${dataDir}/.s.PGSQL.${port}`.length < 100 ? dataDir : ""
  const options = `-p ${port} -k "${socketDir}" -c listen_addresses=127.0.0.1`

  await clearStaleServerFiles(dataDir, log)

  log(`starting server for ${dataDir} on 127.0.0.1:${port} (log: ${logFile})`)
  // Leftovers of a killed server that the checks above cannot see (no /proc, or processes of
  // another user) make PostgreSQL refuse to start for a moment; they go away quickly, so retry.
  for (let attempt = 1; ; attempt++) {
    const last = attempt >= 4
    const result = await runBinary(
      pg_ctl,
      ["start", "-w", "-t", "60", "-D", dataDir, "-l", logFile, "-o", options],
      user,
      last || attempt === 1 ? log : () => {}
    )
    if (result.code === 0) return
    if (last) {
      const tail = (await fs.readFile(logFile, "utf8").catch(() => "")).split("\n").slice(-15).join("\n")
      throw new Error(`pg_ctl start failed (exit ${result.code}) for ${dataDir}: ${result.output.trim()}\n${tail}`)
    }
    log(`start attempt ${attempt} failed (see ${logFile}); retrying`, { level: LogLevel.Warning })
    await sleep(1000)
  }
}

async function stopServer(dataDir: string, user: RunAs, log: Log): Promise<boolean> {
  const pidFile = await readPostmasterPid(dataDir)
  if (pidFile === undefined || !(await isServerOf(pidFile.pid, dataDir))) return false
  const { pg_ctl } = await serverBinaries(log)
  log(`stopping server of ${dataDir}`)
  const result = await runBinary(pg_ctl, ["stop", "-w", "-t", "60", "-m", "fast", "-D", dataDir], user, log)
  if (result.code !== 0) throw new Error(`pg_ctl stop failed (exit ${result.code}): ${result.output.trim()}`)
  return true
}

// ---------------------------------------------------------------------------------------------
// Public API

/**
 * Makes sure the cluster of `dataDir` exists and runs on 127.0.0.1:`port`, creating and starting it
 * when needed. The server is detached: it keeps running after this process exits unless `stop` is
 * called (a no-op when the server was already running).
 */
export async function ensureEmbeddedPostgres(opts: {
  dataDir: string
  port: number
  log?: Log
}): Promise<{ url: string; startedHere: boolean; stop: () => Promise<void> }> {
  const log = opts.log ?? defaultLog
  const dataDir = await resolveDataDir(opts.dataDir)
  const user = await runAs(log)

  const reuse = (port: number) => {
    if (port !== opts.port) log(`server of ${dataDir} already runs on port ${port}, not ${opts.port}`)
    return { url: urlFor(port), startedHere: false, stop: async () => {} }
  }

  const running = await findRunning(dataDir, log)
  if (running !== undefined) return reuse(running)

  await fs.mkdir(path.dirname(dataDir), { recursive: true })
  if (!(await canEnter(path.dirname(dataDir), user))) {
    throw new Error(
      `the postgres OS user (which runs PostgreSQL for root) cannot reach ${dataDir}: a folder above it is ` +
        "private to its owner. Use a data folder that user can reach; permissions of existing folders are not changed"
    )
  }

  return withLock(`${dataDir}.lock`, log, async () => {
    // Another process may have finished starting it while this one waited for the lock.
    const runningNow = await findRunning(dataDir, log)
    if (runningNow !== undefined) return reuse(runningNow)

    if (!(await exists(path.join(dataDir, "PG_VERSION")))) await initialise(dataDir, user, log)
    if (user.uid !== undefined && user.gid !== undefined) {
      const stat = await fs.stat(dataDir)
      if (stat.uid !== user.uid) await execText("chown", ["-R", `${user.uid}:${user.gid}`, dataDir])
    }

    const occupant = await probe(opts.port, dataDir)
    if (occupant.kind === "other") {
      throw new Error(`port ${opts.port} is used by another PostgreSQL server (data directory ${occupant.dataDirectory})`)
    }
    await startServer(dataDir, opts.port, user, log)
    if ((await probe(opts.port, dataDir)).kind !== "ours") {
      throw new Error(`PostgreSQL for ${dataDir} started but does not answer on 127.0.0.1:${opts.port}`)
    }
    let stopped = false
    return {
      url: urlFor(opts.port),
      startedHere: true,
      stop: async () => {
        if (stopped) return
        stopped = true
        await stopServer(dataDir, user, log)
      }
    }
  })
}

/** Stops the server of `dataDir` if one runs; true when it stopped one. */
export async function stopEmbeddedPostgres(dataDir: string, opts?: { log?: Log }): Promise<boolean> {
  const log = opts?.log ?? defaultLog
  const resolved = await resolveDataDir(dataDir)
  if (!(await exists(path.join(resolved, "PG_VERSION")))) return false
  return stopServer(resolved, await runAs(log), log)
}
