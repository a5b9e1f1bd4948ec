// `npm start`: prepares the environment once (embedded PostgreSQL, secret key), then runs the HTTP
// server and the job runner side by side and shuts everything down together.
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

import { bootstrapOrExit, projectRoot } from "../src/bootstrap.js"
import { appConfig } from "../src/Config.js"
import { errorMessage } from "../src/domain/text.js"
import { logFor, writeLog, writeStderrLine } from "../src/logging.js"
import { NODE_FLAGS } from "../src/nodeFlags.js"

const log = logFor("start")

// The children check every setting again, but the common ones are reported before the database
// starts. (The card parser's are left to them: its module takes a second and 100 MB to load.)
const { embedded } = await bootstrapOrExit("start", [appConfig])
const root = projectRoot()

// The children log JSON lines; anything else they write to stderr (a crash's stack trace, a Node
// warning) is wrapped into one, so that stderr stays one JSON object per line.
const relayStderr = (name: string, child: ChildProcess): void => {
  if (child.stderr === null) return
  createInterface({ input: child.stderr, crlfDelay: Infinity }).on("line", (line) => {
    if (line.trim() === "") return
    if (line.startsWith("{")) {
      try {
        JSON.parse(line)
        writeStderrLine(line)
        return
      } catch {
        // not JSON after all: wrapped below
      }
    }
    writeLog("Error", line, { source: name })
  })
}

interface Managed {
  readonly name: string
  readonly child: ChildProcess
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

// Compiled (npm start runs dist/scripts/start.js): the children run the compiled JavaScript too;
// from the sources (tsx) they run under tsx.
const compiled = fileURLToPath(import.meta.url).endsWith(".js")
const commandOf = (entry: string): Array<string> => [
  ...NODE_FLAGS,
  ...(compiled ? [path.join(root, "dist", entry.replace(/\.ts$/, ".js"))] : ["--import", "tsx", path.join(root, entry)])
]

const launch = (name: string, entry: string): Managed => {
  const child = spawn(process.execPath, commandOf(entry), {
    cwd: root,
    env: process.env,
    stdio: ["inherit", "inherit", "pipe"],
    // Its own process group, so that a Ctrl-C on the terminal reaches it only through this process
    // and only once: Effect's runMain stops gracefully on a first signal but dies on a second.
    detached: true
  })
  relayStderr(name, child)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    // "close" rather than "exit": the last lines of its stderr have been relayed by then.
    child.on("close", (code, signal) => resolve({ code, signal }))
    // A child that cannot be spawned at all never emits "exit".
    child.on("error", (error) => {
      log(`${name} could not be started: ${error.message}`, "Error")
      resolve({ code: 1, signal: null })
    })
  })
  return { name, child, exited }
}

const children = [launch("server", "src/main.ts"), launch("jobs", "jobs/main.ts")]

let shutdownRequested = false
let failureCode: number | undefined

const signalRunning = (signal: NodeJS.Signals) => {
  for (const { child } of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
  }
}

let firstSignalAt: number | undefined
// SIGHUP too: the children are no longer in the terminal's process group, so closing the terminal
// would not stop them otherwise.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    shutdownRequested = true
    if (firstSignalAt === undefined) {
      firstSignalAt = Date.now()
      log(`${signal} received, stopping children`)
      signalRunning(signal === "SIGHUP" ? "SIGTERM" : signal)
    } else if (Date.now() - firstSignalAt > 1000) {
      // npm passes a terminal's Ctrl-C on as well, so only a later repeat means "stop now".
      log(`${signal} received again, killing children`, "Warn")
      signalRunning("SIGKILL")
    }
  })
}

for (const { name, exited } of children) {
  void exited.then(({ code, signal }) => {
    if (shutdownRequested || failureCode !== undefined) return
    // One half of the service alone is not a working service, so the other half is stopped too.
    failureCode = code !== null && code !== 0 ? code : 1
    log(`${name} exited on its own (${signal ?? `code ${code}`}); stopping the other process`, "Error")
    signalRunning("SIGTERM")
  })
}

await Promise.all(children.map(({ exited }) => exited))

if (embedded?.startedHere === true) {
  try {
    await embedded.stop()
  } catch (error) {
    log(`stopping embedded PostgreSQL failed: ${errorMessage(error)}`, "Error")
    failureCode ??= 1
  }
}

process.exit(failureCode ?? 0)
