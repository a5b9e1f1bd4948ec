// The API and the daemon as real processes for tests: started with a given environment, ready once
// they log a line, their stderr kept, killed (SIGKILL) when the scope ends if still running; and
// signed raw node:http requests whose body can be held back (a request in flight, on purpose).
import { type ChildProcess, spawn } from "node:child_process"
import { type Agent, request as httpRequest } from "node:http"

import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import { liveSigner } from "../../src/auth/Signer.js"
import { newNonce } from "../../src/client/Client.js"
import { withDatabase } from "../../src/sql/urls.js"
import { databaseAdminUrl } from "./cluster.js"
import { type Entry, nodeArgs } from "./entries.js"

/**
 * The environment a spawned API or daemon needs to share the test's database: its URL and the
 * SECRET_KEY the test services seal client secrets with.
 */
export const databaseEnv = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [{ db }] = yield* sql<{ db: string }>`SELECT current_database() AS db`
  return { DATABASE_URL: withDatabase(databaseAdminUrl(), db), SECRET_KEY: "ab".repeat(32), LOG_LEVEL: "Info" }
})

export interface RunningProcess {
  readonly child: ChildProcess
  /** Everything the process wrote on stderr so far. */
  readonly log: () => string
  /** Resolves with the exit code (null when killed by a signal) once the process has exited. */
  readonly exited: Promise<number | null>
}

/** Starts the compiled `entry` (test/support/entries.ts); succeeds once stderr contains `readyText`. */
export const startProcess = (entry: Entry, env: Record<string, string>, readyText: string) =>
  Effect.acquireRelease(
    Effect.callback<RunningProcess>((resume) => {
      const child = spawn(process.execPath, nodeArgs(entry), {
        env: { ...process.env, ...env },
        stdio: ["ignore", "ignore", "pipe"]
      })
      let log = ""
      let ready = false
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      child.stderr!.on("data", (c: Buffer) => {
        log += c.toString()
        if (!ready && log.includes(readyText)) {
          ready = true
          resume(Effect.succeed({ child, log: () => log, exited }))
        }
      })
      void exited.then((code) => {
        if (!ready) resume(Effect.die(new Error(`${entry} exited early (${code}): ${log.slice(-3000)}`)))
      })
    }),
    (p) => Effect.sync(() => p.child.exitCode === null && p.child.signalCode === null && p.child.kill("SIGKILL"))
  )

/** The JSON log lines of a process's stderr. */
export const logLines = (log: string): Array<{ message?: string; logLevel?: string; annotations?: Record<string, unknown> }> =>
  log.split("\n").flatMap((line) => {
    try {
      return [JSON.parse(line) as { message?: string; logLevel?: string; annotations?: Record<string, unknown> }]
    } catch {
      return []
    }
  })

export interface Credentials {
  readonly appKey: string
  readonly appSecret: string
}

export type Outcome =
  /** A complete answer. */
  | { readonly _tag: "Answered"; readonly status: number; readonly body: string }
  /** No answer began: the connection was refused or closed before any byte of a response. */
  | { readonly _tag: "NotAccepted"; readonly code: string }
  /** The answer began and was cut off. */
  | { readonly _tag: "CutOff"; readonly code: string }

/** Signed headers for a request with this exact body. */
export const signedHeaders = (credentials: Credentials, method: string, path: string, body: Uint8Array) => {
  const timestamp = String(Math.floor(Date.now() / 1000))
  const nonce = newNonce()
  return {
    "x-app-key": credentials.appKey,
    "x-timestamp": timestamp,
    "x-nonce": nonce,
    "x-signature": liveSigner.sign(credentials.appSecret, {
      method,
      path,
      rawQuery: "",
      appKey: credentials.appKey,
      timestamp,
      nonce,
      body
    })
  }
}

/**
 * A signed request over node:http. With `hold`, the headers and the first half of the body go out
 * at once (with `Expect: 100-continue`, so `accepted` resolves when the server has the request in
 * hand) and the rest only when `hold` settles.
 */
export const sendRequest = (options: {
  readonly port: number
  readonly method: string
  readonly path: string
  readonly credentials?: Credentials
  readonly body?: string
  readonly agent?: Agent
  readonly hold?: Promise<unknown>
}): { readonly accepted: Promise<void>; readonly outcome: Promise<Outcome> } => {
  const body = new TextEncoder().encode(options.body ?? "")
  let accept: () => void = () => {}
  const accepted = new Promise<void>((resolve) => (accept = resolve))
  const outcome = new Promise<Outcome>((resolve) => {
    const headers: Record<string, string> = {
      ...(options.credentials ? signedHeaders(options.credentials, options.method, options.path, body) : {}),
      ...(options.body !== undefined ? { "content-type": "application/json", "content-length": String(body.length) } : {}),
      ...(options.hold !== undefined ? { expect: "100-continue" } : {})
    }
    const req = httpRequest({
      host: "127.0.0.1",
      port: options.port,
      method: options.method,
      path: options.path,
      headers,
      ...(options.agent !== undefined ? { agent: options.agent } : { agent: false })
    })
    let responded = false
    req.on("response", (res) => {
      responded = true
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (c: string) => (text += c))
      res.on("end", () => resolve({ _tag: "Answered", status: res.statusCode ?? 0, body: text }))
      res.on("error", (e: NodeJS.ErrnoException) => resolve({ _tag: "CutOff", code: e.code ?? e.message }))
      res.on("aborted", () => resolve({ _tag: "CutOff", code: "aborted" }))
    })
    req.on(
      "error",
      (e: NodeJS.ErrnoException) =>
        resolve(responded ? { _tag: "CutOff", code: e.code ?? e.message } : { _tag: "NotAccepted", code: e.code ?? e.message })
    )
    if (options.hold === undefined) {
      req.end(body)
      accept()
    } else {
      const half = Math.floor(body.length / 2)
      req.on("continue", () => {
        accept()
        req.write(body.subarray(0, half))
        void options.hold!.then(() => req.end(body.subarray(half)))
      })
    }
  })
  return { accepted, outcome }
}

/** Starts the compiled `jobs/main.ts` as its own process; resolves once it reports ready; SIGKILLed at scope end if still running. */
export const startDaemon = (env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.callback<ChildProcess>((resume) => {
      const child = spawn(process.execPath, nodeArgs("jobs/main.ts"), {
        env: { ...process.env, ...env },
        stdio: ["ignore", "ignore", "pipe"]
      })
      let log = ""
      let ready = false
      child.stderr!.on("data", (c: Buffer) => {
        log += c.toString()
        // DEBUG_DAEMONS=1 passes the daemons' logs through, for a test that fails.
        if (process.env.DEBUG_DAEMONS) process.stderr.write(c)
        if (!ready && log.includes("job daemon ready")) {
          ready = true
          resume(Effect.succeed(child))
        }
      })
      child.on("exit", (code) => {
        if (!ready) resume(Effect.die(new Error(`daemon exited early (${code}): ${log.slice(-2000)}`)))
      })
    }),
    (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
  )
