// `npm start`: prepares the environment once (.env, embedded PostgreSQL, secret key), then runs the
// API and the job daemon side by side with it, and stops everything together, whatever stops:
// - SIGTERM, SIGINT or SIGHUP to this process (npm passes SIGTERM and SIGINT on to it);
// - its parent dying (npm killed, or ended by a signal it does not pass on): noticed by polling;
// - the API or the daemon exiting (a signal sent to it alone, a crash): the other one is stopped;
// - this process killed outright: the children see their IPC channel close (scripts/supervised.ts).
// Then the embedded PostgreSQL is stopped if this process started it. One log line per step. Its
// children get the environment it prepared; nothing is written into its own process.env.
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath, pathToFileURL } from "node:url"

import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as LogLevel from "effect/LogLevel"

import { type Embedded, preparedConfig, prepareOrFail, ProjectEnvFile, projectRoot, STOP_EMBEDDED_COMMAND } from "../src/bootstrap.js"
import { appConfig, databaseTimeoutConfig } from "../src/Config.js"
import { LOOPBACK_NETWORKS } from "../src/domain/destinations.js"
import { errorMessage } from "../src/domain/text.js"
import { LogOutput, plainLog, renderLog } from "../src/logging.js"
import { NODE_FLAGS } from "../src/nodeFlags.js"
import { runScript } from "../src/runProcess.js"

interface Managed {
  readonly name: string
  /** How the log lines name it. */
  readonly label: string
  readonly child: ChildProcess
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

// Compiled (npm start runs dist/scripts/start.js): the children run the compiled JavaScript too;
// from the sources (tsx) they run under tsx.
const root = projectRoot()
const compiled = fileURLToPath(import.meta.url).endsWith(".js")
const sourceFile = (file: string) => path.join(root, ...(compiled ? ["dist", file.replace(/\.ts$/, ".js")] : [file]))
const commandOf = (entry: string): Array<string> => [
  ...NODE_FLAGS,
  ...(compiled ? [] : ["--import", "tsx"]),
  "--import",
  pathToFileURL(sourceFile("scripts/supervised.ts")).href,
  sourceFile(entry)
]

const program = Effect.gen(function*() {
  const output = yield* LogOutput
  const envFile = yield* ProjectEnvFile
  const write = yield* plainLog
  const log = (message: string, level: LogLevel.Severity = "Info") => write(level, message, { source: "start" })

  // -------------------------------------------------------------------------------------------
  // What asks for a stop

  /** Why the whole is stopping (the first reason wins), or undefined while it runs. */
  let stopReason: string | undefined
  let failureCode: number | undefined
  const children: Array<Managed> = []
  // The API drains for at most SHUTDOWN_GRACE_SECONDS (25 until the settings are known); a child
  // still running well after that is killed.
  let graceSeconds = 25

  const signalRunning = (signal: NodeJS.Signals) => {
    for (const { child } of children) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    }
  }

  const requestStop = (reason: string, signal: NodeJS.Signals = "SIGTERM"): void => {
    if (stopReason !== undefined) return
    stopReason = reason
    const running = children.filter(({ child }) => child.exitCode === null && child.signalCode === null)
    log(running.length === 0 ? `${reason}; stopping` : `${reason}; stopping ${running.map((c) => c.label).join(" and ")}`)
    signalRunning(signal)
    const ms = (graceSeconds + 15) * 1000
    setTimeout(() => {
      const left = children.filter(({ child }) => child.exitCode === null && child.signalCode === null)
      if (left.length === 0) return
      log(`${left.map((c) => c.label).join(" and ")} still running ${ms / 1000} s after the stop; killing`, "Warn")
      signalRunning("SIGKILL")
    }, ms).unref()
  }

  let firstSignalAt: number | undefined
  // Installed before the environment is prepared, so that a stop asked for while the database starts
  // still stops it. SIGHUP too: the children are not in the terminal's process group, so closing the
  // terminal would not reach them otherwise.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (firstSignalAt === undefined) {
        firstSignalAt = Date.now()
        requestStop(`${signal} received`, signal === "SIGHUP" ? "SIGTERM" : signal)
      } else if (Date.now() - firstSignalAt > 1000) {
        // npm passes a terminal's Ctrl-C on as well, so only a later repeat means "stop now".
        log(`${signal} received again, killing the processes`, "Warn")
        signalRunning("SIGKILL")
      }
    })
  }

  // The parent's pid as it is now (process.ppid is fixed at start): an orphan is adopted by init or a
  // subreaper. Without /proc, whether the first parent still exists.
  const parentAtStart = process.ppid
  const currentParent = async (): Promise<number | undefined> => {
    const stat = await fs.readFile("/proc/self/stat", "utf8").catch(() => undefined)
    // "pid (comm) state ppid …"; comm may hold spaces and parentheses, so read after the last ")".
    if (stat !== undefined) return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    try {
      process.kill(parentAtStart, 0)
      return parentAtStart
    } catch {
      return undefined
    }
  }
  const parentWatch = setInterval(() => {
    void currentParent().then((parent) => {
      if (parent !== parentAtStart) requestStop(`the parent process (pid ${parentAtStart}) is gone`)
    })
  }, 250)

  // -------------------------------------------------------------------------------------------
  // The environment, then the two processes

  // The children check every setting again, but the common ones are reported before the database
  // starts. (The card parser's are left to them: its module takes a second and 100 MB to load.)
  const prepared = yield* prepareOrFail("start", [appConfig, databaseTimeoutConfig])
  if (prepared.loopbackAdmitted) {
    log(
      `the embedded quick start lets webhooks reach this machine (loopback: ${LOOPBACK_NETWORKS}), for a local receiver; WEBHOOK_ALLOWED_NETWORKS chooses otherwise`
    )
  }
  const config = yield* Effect.exit(Effect.provide(appConfig, preparedConfig(prepared)))
  if (Exit.isSuccess(config)) graceSeconds = config.value.shutdownGraceSeconds

  // What the children read: this process's environment, the .env where it sets nothing, and what
  // the preparation supplied; JSON lines into the pipe, which this process renders (relayStderr).
  const childEnv: NodeJS.ProcessEnv = { ...envFile.settings, ...process.env, ...prepared.settings, LOG_FORMAT: "json" }

  // The children log JSON lines, which are passed on as they are, or rendered for a person when this
  // process's own format is pretty (its stderr a terminal, or LOG_FORMAT=pretty). Anything else they
  // write to stderr (a crash's stack trace, a Node warning) becomes a line of its own in the same
  // format, under their name, so that stderr stays one entry per line.
  const relayStderr = (name: string, child: ChildProcess): void => {
    if (child.stderr === null) return
    createInterface({ input: child.stderr, crlfDelay: Infinity }).on("line", (line) => {
      if (line.trim() === "") return
      if (line.startsWith("{")) {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>
          if (output.style.format === "json") return output.writeLine(line)
          if (typeof entry["logLevel"] === "string" && typeof entry["timestamp"] === "string") {
            return output.writeLine(renderLog({
              message: entry["message"],
              level: entry["logLevel"],
              timestamp: entry["timestamp"],
              process: typeof entry["process"] === "string" ? entry["process"] : name,
              cause: typeof entry["cause"] === "string" ? entry["cause"] : undefined,
              annotations: (entry["annotations"] ?? {}) as Record<string, unknown>,
              spans: (entry["spans"] ?? {}) as Record<string, number>
            }, output.style))
          }
        } catch {
          // not JSON after all: wrapped below
        }
      }
      if (!LogLevel.isGreaterThanOrEqualTo("Error", output.level)) return
      output.write({
        message: line,
        level: "ERROR",
        timestamp: output.timestamp(new Date()),
        process: name,
        annotations: { source: name },
        spans: {}
      })
    })
  }

  const launch = (name: string, label: string, entry: string): Managed => {
    const child = spawn(process.execPath, commandOf(entry), {
      cwd: root,
      env: childEnv,
      // The IPC channel is how the child learns that this process is gone (scripts/supervised.ts).
      stdio: ["inherit", "inherit", "pipe", "ipc"],
      // Its own process group, so that a Ctrl-C on the terminal reaches it only through this process
      // and only once.
      detached: true
    })
    relayStderr(name, child)
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      // "close" rather than "exit": the last lines of its stderr have been relayed by then.
      child.on("close", (code, signal) => resolve({ code, signal }))
      // A child that cannot be spawned at all never emits "exit".
      child.on("error", (error) => {
        log(`${label} could not be started: ${error.message}`, "Error")
        resolve({ code: 1, signal: null })
      })
    })
    if (child.pid !== undefined) log(`started ${label} (pid ${child.pid})`)
    return { name, label, child, exited }
  }

  if (stopReason === undefined) {
    children.push(launch("api", "the API", "src/main.ts"), launch("jobs", "the job daemon", "jobs/main.ts"))
  }

  for (const { label, exited } of children) {
    void exited.then(({ code, signal }) => {
      const how = signal ?? `code ${code}`
      if (stopReason !== undefined) {
        log(`${label} stopped (${how})`)
        return
      }
      // One half of the service alone is not a working service, so the other half is stopped too.
      failureCode = code !== null && code !== 0 ? code : 1
      log(`${label} exited on its own (${how})`, "Error")
      requestStop(`${label} exited`)
    })
  }

  yield* Effect.promise(() => Promise.all(children.map(({ exited }) => exited)))
  clearInterval(parentWatch)

  const stopEmbedded = async (server: Embedded | null): Promise<void> => {
    if (server === null) return
    if (!server.startedHere) {
      log(`the embedded PostgreSQL (${server.address}) was running before; it is left running (\`${STOP_EMBEDDED_COMMAND}\` stops it)`)
      return
    }
    log(`stopping the embedded PostgreSQL (${server.address})`)
    try {
      await server.stop()
      log("the embedded PostgreSQL stopped")
    } catch (error) {
      log(`stopping the embedded PostgreSQL failed: ${errorMessage(error)} (\`${STOP_EMBEDDED_COMMAND}\` stops it)`, "Error")
      failureCode ??= 1
    }
  }
  yield* Effect.promise(() => stopEmbedded(prepared.embedded))

  log(`stopped${failureCode === undefined ? "" : ` (exit code ${failureCode})`}`)
  return failureCode ?? 0
})

// This script handles SIGINT, SIGTERM and SIGHUP itself (above): they are passed on to the children.
runScript("start", program, { ownSignals: true })
