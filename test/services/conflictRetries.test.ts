// How a transaction that PostgreSQL ended with a serialization failure or deadlock is run again
// (retryConflicts, a Schedule): the waits between runs on the TestClock, how many runs, and which
// failures are never run again. The same with a real deadlock is in test/databaseFaults.test.ts.
import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as SqlError from "effect/sql/SqlError"
import * as TestClock from "effect/testing/TestClock"

import { CONFLICT_RETRIES, retryConflicts } from "../../src/repos/sqlHelpers.js"

const deadlock = () =>
  new SqlError.SqlError({
    reason: new SqlError.DeadlockError({ cause: Object.assign(new Error("deadlock detected"), { code: "40P01" }), operation: "query" })
  })

const syntaxError = () =>
  new SqlError.SqlError({
    reason: new SqlError.SqlSyntaxError({ cause: Object.assign(new Error("syntax"), { code: "42601" }), operation: "query" })
  })

/**
 * Runs a unit that always dies with `error` under retryConflicts, moving the test clock a
 * millisecond at a time past the longest the waits can add up to (1.2 × 35 ms); the clock's time
 * at each run, and the exit.
 */
const runsOf = (error: () => SqlError.SqlError) =>
  Effect.gen(function*() {
    const at: Array<number> = []
    const unit = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      at.push(now)
      return Effect.die(error())
    })
    const fiber = yield* Effect.forkChild(Effect.exit(retryConflicts(unit)))
    for (let ms = 0; ms < 60; ms++) yield* TestClock.adjust("1 millis")
    return { at, exit: yield* Fiber.join(fiber) }
  })

const gaps = (at: ReadonlyArray<number>) => at.slice(1).map((t, i) => t - at[i]!)

describe("a transaction that conflicts", () => {
  it.effect("runs again after about 5, 10 and 20 ms (each give or take 20%), then its last conflict is left as it was", () =>
    Effect.gen(function*() {
      const { at, exit } = yield* runsOf(deadlock)
      expect(at).toHaveLength(1 + CONFLICT_RETRIES)
      const [first, second, third] = gaps(at)
      // The clock moves in whole milliseconds, so a wait of 4.2 ms is seen as 5.
      expect(first).toBeGreaterThanOrEqual(4)
      expect(first).toBeLessThanOrEqual(7)
      expect(second).toBeGreaterThanOrEqual(8)
      expect(second).toBeLessThanOrEqual(13)
      expect(third).toBeGreaterThanOrEqual(16)
      expect(third).toBeLessThanOrEqual(25)
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(exit.cause.reasons).toEqual([expect.objectContaining({ _tag: "Die", defect: expect.any(SqlError.SqlError) })])
      }
    }))

  it.effect("the waits are jittered: two losers that met once do not keep meeting", () =>
    Effect.gen(function*() {
      const seen = new Set<string>()
      for (let i = 0; i < 10; i++) seen.add(gaps((yield* runsOf(deadlock)).at).join(","))
      expect(seen.size).toBeGreaterThan(1)
    }))

  it.effect("any other database error is not run again", () =>
    Effect.gen(function*() {
      const { at, exit } = yield* runsOf(syntaxError)
      expect(at).toHaveLength(1)
      expect(Exit.isFailure(exit)).toBe(true)
    }))
})
