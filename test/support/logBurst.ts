// A process for test/logWriter.test.ts: logs COUNT numbered lines of SIZE bytes through the
// service's logging layer as fast as it can, then says on stdout that its event loop still turns
// (a timer fired), and ends as END says: `scope` (once stdin closes the program ends and the
// logging layer closes) or `exit` (process.exit at once, its lines still waiting). STDERR=nonblocking opens process.stderr
// first, which makes Node switch a pipe to non-blocking mode (writes then meet EAGAIN when it is full).
import * as Effect from "effect/Effect"

import { LoggingLive } from "../../src/logging.js"

const [count, size, end] = process.argv.slice(2).map((arg, i) => (i < 2 ? Number(arg) : arg)) as [number, number, string]
if (process.env["STDERR"] === "nonblocking") process.stderr.on("error", () => {})

const program = Effect.gen(function*() {
  const padding = "x".repeat(size)
  for (let i = 0; i < count; i++) yield* Effect.log(`line ${i} ${padding}`)
  if (end === "exit") return yield* Effect.sync(() => process.exit(0))
  yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1)))
  yield* Effect.sync(() => process.stdout.write("event loop turning\n"))
  // Ends when the test has begun to read stderr (it closes stdin): the last lines are written then.
  yield* Effect.promise(() => new Promise((resolve) => process.stdin.on("end", resolve).resume()))
})

void Effect.runPromise(program.pipe(Effect.provide(LoggingLive("burst"))))
