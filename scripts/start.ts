// `npm start`: prepares the environment once (embedded PostgreSQL, secret key), then runs the HTTP
// server and the job runner side by side and shuts everything down together.
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { bootstrapEnv, projectRoot } from "../src/bootstrap.js"

const log = (line: string) => {
  process.stderr.write(`${line}\n`)
}

const { embedded } = await bootstrapEnv({ log })
const root = projectRoot()

interface Managed {
  readonly name: string
  readonly child: ChildProcess
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const launch = (name: string, entry: string): Managed => {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(root, entry)], {
    cwd: root,
    env: process.env,
    stdio: "inherit"
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }))
    // A child that cannot be spawned at all never emits "exit".
    child.on("error", (error) => {
      log(`start: ${name} could not be started: ${error.message}`)
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

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    shutdownRequested = true
    log(`start: ${signal} received, stopping children`)
    signalRunning(signal)
  })
}

for (const { name, exited } of children) {
  void exited.then(({ code, signal }) => {
    if (shutdownRequested || failureCode !== undefined) return
    // One half of the service alone is not a working service, so the other half is stopped too.
    failureCode = code !== null && code !== 0 ? code : 1
    log(`start: ${name} exited on its own (${signal ?? `code ${code}`}); stopping the other process`)
    signalRunning("SIGTERM")
  })
}

await Promise.all(children.map(({ exited }) => exited))

if (embedded?.startedHere === true) {
  try {
    await embedded.stop()
  } catch (error) {
    log(`start: stopping embedded PostgreSQL failed: ${error instanceof Error ? error.message : String(error)}`)
    failureCode ??= 1
  }
}

process.exit(failureCode ?? 0)
