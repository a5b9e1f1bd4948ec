// The log writer (src/logging.ts) as a real process sees it: a reader of stderr that does not keep
// up never stops the event loop (process.stderr.write would block it: it writes synchronously to a
// pipe), a pipe that Node made non-blocking is waited for rather than losing lines, and lines
// still waiting when the process exits or its logging closes are written, whole and in order.
import { spawn } from "node:child_process"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { eventually } from "./support/eventually.js"

const COUNT = 2000
const SIZE = 1000

/**
 * Runs test/support/logBurst.ts; its stderr is not read until `readFrom` says so (after the child
 * printed `event loop turning` on stdout, or at once). The lines it logged, and its exit code.
 */
const burst = (args: ReadonlyArray<string>, env: Record<string, string>, readFrom: "start" | "event loop turning") =>
  Effect.gen(function*() {
    const child = spawn(process.execPath, ["--import", "tsx", "test/support/logBurst.ts", ...args], {
      env: { ...process.env, LOG_FORMAT: "json", LOG_LEVEL: "Info", ...env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    const read = () => child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString())).resume()
    if (readFrom === "start") read()
    else {
      // Nothing reads stderr until the child shows that its event loop turned with its lines unwritten.
      child.stderr.pause()
      yield* eventually("the child's event loop to turn", Effect.sync(() => stdout), (out) => out.includes(readFrom), 60_000)
      read()
    }
    // The child may end now (`scope`: its logging closes while stderr is read).
    child.stdin.end()
    const code = yield* Effect.promise(() => exited)
    const messages = stderr.split("\n").filter((line) => line !== "").map((line) => (JSON.parse(line) as { message: string }).message)
    return { code, messages }
  })

const expectAllLines = (messages: ReadonlyArray<string>, count: number, size: number) => {
  expect(messages).toHaveLength(count)
  const padding = "x".repeat(size)
  expect(messages.every((message, i) => message === `line ${i} ${padding}`)).toBe(true)
}

describe("the log writer", () => {
  it.effect(
    "a reader that does not drain stderr does not stop the event loop; every line arrives whole and in order",
    () =>
      Effect.gen(function*() {
        const { code, messages } = yield* burst([String(COUNT), String(SIZE), "scope"], {}, "event loop turning")
        expect(code).toBe(0)
        expectAllLines(messages, COUNT, SIZE)
      }),
    120_000
  )

  it.effect("a stderr pipe that Node made non-blocking (EAGAIN when full) is waited for: no line is lost", () =>
    Effect.gen(function*() {
      const { code, messages } = yield* burst([String(COUNT), String(SIZE), "scope"], { STDERR: "nonblocking" }, "event loop turning")
      expect(code).toBe(0)
      expectAllLines(messages, COUNT, SIZE)
    }), 120_000)

  it.effect("lines still waiting when the process exits are written before it ends", () =>
    Effect.gen(function*() {
      const { code, messages } = yield* burst(["50", "100", "exit"], {}, "start")
      expect(code).toBe(0)
      expectAllLines(messages, 50, 100)
    }), 120_000)
})
