// What a person sees of the API process: on a terminal (a pseudo-terminal from util-linux's
// `script`) readable lines, each with the platform time (and its offset) and the process name, and after "Listening
// on" the docs URL and the command that creates a client; a port in use is one line naming the
// setting, and a non-zero exit.
import { spawn } from "node:child_process"
import { createServer } from "node:net"

import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import { findFreePort } from "../src/sql/embedded.js"
import { withDatabase } from "../src/sql/urls.js"
import { databaseAdminUrl } from "./support/cluster.js"
import { nodeArgs } from "./support/entries.js"
import { eventually } from "./support/eventually.js"
import { testServerLayer } from "./support/harness.js"
import { logLines } from "./support/processes.js"

const databaseEnv = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [{ db }] = yield* sql<{ db: string }>`SELECT current_database() AS db`
  return { DATABASE_URL: withDatabase(databaseAdminUrl(), db), SECRET_KEY: "ab".repeat(32), LOG_LEVEL: "Info" }
})

/** The compiled `src/main.ts`, its stderr a terminal (`script`) or a pipe; the whole group killed at the end. */
const runApi = (env: Record<string, string>, terminal: boolean) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const command = [process.execPath, ...nodeArgs("src/main.ts")]
      const child = terminal
        ? spawn("script", ["-qfec", command.join(" "), "/dev/null"], {
          env: { ...process.env, ...env },
          stdio: ["pipe", "pipe", "pipe"],
          detached: true
        })
        : spawn(command[0]!, command.slice(1), { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"], detached: true })
      let output = ""
      child.stdout?.on("data", (c: Buffer) => (output += c.toString()))
      child.stderr!.on("data", (c: Buffer) => (output += c.toString()))
      const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
      return { child, output: () => output, exited }
    }),
    ({ child }) => Effect.sync(() => child.exitCode === null && child.signalCode === null && process.kill(-child.pid!, "SIGKILL"))
  )

layer(testServerLayer(), { timeout: 120_000 })("the API's start-up as a person sees it", (it) => {
  it.effect(
    "on a terminal: readable lines with the platform time and `api`, then the docs URL and the command that creates a client",
    () =>
      Effect.gen(function*() {
        const port = yield* Effect.promise(findFreePort)
        const api = yield* runApi(
          { ...(yield* databaseEnv), PORT: String(port), HOST: "0.0.0.0", TZ: "Asia/Shanghai", NO_COLOR: "1" },
          true
        )
        yield* eventually("the start-up lines", Effect.sync(api.output), (out) => out.includes("API reference:"), 90_000)
        const lines = api.output().split(/\r?\n/).filter((line) => line.trim() !== "")
        const listening = lines.find((line) => line.includes("Listening on"))!
        const next = lines.find((line) => line.includes("API reference:"))!
        const shape = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})([+-]\d\d:\d\d) api {3}INFO {2}(.*)$/
        expect(listening).toMatch(shape)
        expect(shape.exec(listening)![3]).toBe(`Listening on http://0.0.0.0:${port}`)
        expect(shape.exec(next)![3]).toBe(
          `API reference: http://localhost:${port}/docs · create a client to sign requests with: npm run -s admin -- clients create --name my-app --permissions all`
        )
        // The time is Shanghai's wall clock, with Shanghai's offset.
        expect(shape.exec(listening)![2]).toBe("+08:00")
        const at = Date.parse(`${shape.exec(listening)![1]!.replace(" ", "T")}+08:00`)
        expect(Math.abs(at - Date.now())).toBeLessThan(120_000)
        // No JSON on a terminal.
        expect(lines.filter((line) => line.startsWith("{"))).toEqual([])
      }),
    120_000
  )

  it.effect("a port in use: one line naming the address and PORT, and exit code 1", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(findFreePort)
      const blocker = createServer()
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve))),
        () => Effect.promise(() => new Promise<void>((resolve) => blocker.close(() => resolve())))
      )
      const api = yield* runApi({ ...(yield* databaseEnv), PORT: String(port), HOST: "127.0.0.1" }, false)
      expect(yield* Effect.promise(() => api.exited)).toBe(1)
      const fatal = logLines(api.output()).filter((line) => line.logLevel === "FATAL")
      expect(fatal).toEqual([
        expect.objectContaining({ message: `api cannot listen on 127.0.0.1:${port}: the port is in use (set PORT)`, process: "api" })
      ])
      expect(fatal[0]).not.toHaveProperty("cause")
    }), 120_000)
})
