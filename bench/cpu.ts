// CPU time of processes, read from /proc (Linux only), for the benchmarks that divide it by a count
// of requests (bench/request-cost.ts, bench/capacity.ts): a process's threads to the nanosecond
// (schedstat), and a whole PostgreSQL cluster: its postmaster and every process the postmaster
// started (backends, WAL writer, checkpointer, autovacuum…), those that ended included.
import { readdirSync, readFileSync } from "node:fs"

/** Whether this system has the /proc files these read. */
export const hasProc = (): boolean => {
  try {
    readdirSync("/proc/self/task")
    return true
  } catch {
    return false
  }
}

/** Nanoseconds the process's threads have spent on a CPU so far. */
export const cpuNs = (pid: number): number => {
  let total = 0
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0])
    } catch {
      // the thread ended meanwhile
    }
  }
  return total
}

/** Where a Node process's threads spend their CPU: its JavaScript, V8's helpers, libuv's pool. */
export type ThreadGroup = "main" | "v8" | "libuv" | "other"

/**
 * The group of a Node process's thread: the main thread (JavaScript, and the garbage collector's
 * own pauses; Node names it `node-MainThread`) is the task whose id is the process's; the others
 * by the name Node gives them (`/proc/<pid>/task/<tid>/comm`): `node-V8Worker` are V8's platform
 * workers (parallel scavenges, concurrent marking and sweeping, background compilation),
 * `libuv-worker` the pool of file system work and DNS lookups.
 */
export const threadGroupOf = (pid: number, tid: number, name: string): ThreadGroup =>
  tid === pid ? "main" : name.startsWith("node-V8Worker") ? "v8" : name.startsWith("libuv-worker") ? "libuv" : "other"

/** Nanoseconds the process's threads have spent on a CPU so far, by group (every group present). */
export const cpuNsByGroup = (pid: number): Record<ThreadGroup, number> => {
  const groups: Record<ThreadGroup, number> = { main: 0, v8: 0, libuv: 0, other: 0 }
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${task}/comm`, "utf8").trim()
      groups[threadGroupOf(pid, Number(task), name)] += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0])
    } catch {
      // the thread ended meanwhile
    }
  }
  return groups
}

/** The groups in the order the benchmarks print them. */
export const THREAD_GROUPS: ReadonlyArray<ThreadGroup> = ["main", "v8", "libuv", "other"]

/** What one turn of a server cost: CPU µs per request (its idle rate left out), and by thread group (idle included). */
export interface TurnCost {
  readonly us: number
  readonly byGroup: Record<ThreadGroup, number>
}

/**
 * Runs `turn` (a load that answers how many requests it made) against the process `pid` and
 * divides the process's CPU time over it by that count; `idleRate` is what the process spends
 * idle per nanosecond (`idleRateOf`), left out of the total.
 */
export const costOfTurn = async <R extends { readonly requests: number }>(
  pid: number,
  idleRate: number,
  turn: () => Promise<R>
): Promise<{ readonly result: R; readonly cost: TurnCost }> => {
  const before = cpuNs(pid)
  const groupsBefore = cpuNsByGroup(pid)
  const began = process.hrtime.bigint()
  const result = await turn()
  const busy = cpuNs(pid) - before - idleRate * Number(process.hrtime.bigint() - began)
  const groupsAfter = cpuNsByGroup(pid)
  const perRequest = (ns: number) => ns / result.requests / 1000
  const byGroup = { main: 0, v8: 0, libuv: 0, other: 0 }
  for (const g of THREAD_GROUPS) byGroup[g] = perRequest(groupsAfter[g] - groupsBefore[g])
  return { result, cost: { us: perRequest(busy), byGroup } }
}

/** What a process spends doing nothing (timers, probes of its own), per nanosecond, over `ms`. */
export const idleRateOf = async (pid: number, ms = 1000, read: (pid: number) => number = cpuNs): Promise<number> => {
  const idleFrom = read(pid)
  const idleStart = process.hrtime.bigint()
  await new Promise((resolve) => setTimeout(resolve, ms))
  return (read(pid) - idleFrom) / Number(process.hrtime.bigint() - idleStart)
}

/** The fields of a `/proc/<pid>/stat` line these benchmarks read (times in clock ticks). */
export interface ProcStat {
  readonly pid: number
  readonly ppid: number
  readonly utime: number
  readonly stime: number
  /** CPU time of the children it has waited for (ended), user and system. */
  readonly cutime: number
  readonly cstime: number
}

/**
 * Parses a `/proc/<pid>/stat` line. The command name (the second field) is in parentheses and may
 * itself hold spaces and parentheses (`postgres: user db 127.0.0.1(5432) idle` is a title, not
 * the name, but a name may be anything), so the fields are counted from the last `)`.
 */
export const parseStat = (line: string): ProcStat => {
  const close = line.lastIndexOf(")")
  if (close < 0) throw new Error(`not a /proc/<pid>/stat line: ${line.slice(0, 80)}`)
  const pid = Number(line.slice(0, line.indexOf(" ")))
  // After ") ": state(3) ppid(4) … utime(14) stime(15) cutime(16) cstime(17); index 0 is the state.
  const rest = line.slice(close + 2).trim().split(/\s+/)
  const field = (n: number) => Number(rest[n - 3])
  const stat = { pid, ppid: field(4), utime: field(14), stime: field(15), cutime: field(16), cstime: field(17) }
  if (Object.values(stat).some((v) => !Number.isFinite(v))) throw new Error(`not a /proc/<pid>/stat line: ${line.slice(0, 80)}`)
  return stat
}

/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux whatever the kernel's own HZ). */
const TICKS_PER_SECOND = 100

const readStat = (pid: number): ProcStat | undefined => {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return undefined // ended meanwhile
  }
}

/**
 * A PostgreSQL cluster's CPU time so far, in nanoseconds, from its postmaster's pid (the parent of
 * any backend: `SELECT pg_backend_pid()`, then `postmasterOf`): the postmaster and each live
 * process it started (schedstat, to the nanosecond) plus what its ended children used (its
 * `cutime + cstime`, to the tick: 10 ms, a few of them over a measurement). A process that ends
 * between two readings moves from the first sum to the second, so a difference of two readings is
 * the cluster's CPU time between them.
 */
export const clusterCpuNs = (postmasterPid: number): number => {
  const postmaster = readStat(postmasterPid)
  if (postmaster === undefined) throw new Error(`no process ${postmasterPid}: the PostgreSQL server is gone`)
  let total = cpuNs(postmasterPid) + ((postmaster.cutime + postmaster.cstime) * 1e9) / TICKS_PER_SECOND
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const stat = readStat(Number(entry))
    if (stat?.ppid !== postmasterPid) continue
    try {
      total += Number(readFileSync(`/proc/${entry}/schedstat`, "utf8").split(" ")[0])
    } catch {
      // ended meanwhile: its time is in the postmaster's cutime at the next reading
    }
  }
  return total
}

/** The parent of a process (a backend's parent is the postmaster). */
export const postmasterOf = (backendPid: number): number => {
  const stat = readStat(backendPid)
  if (stat === undefined) throw new Error(`no process ${backendPid}: is the PostgreSQL server on another machine?`)
  return stat.ppid
}

/** The load average over the last minute (/proc/loadavg's first figure). */
export const loadAverage = (): number => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0])
