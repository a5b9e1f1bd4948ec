// Service methods (src/services/common.ts `method`): a span of their own when traces are exported,
// none at all when they are not (a span, even a no-op one, costs every request about 8 µs).
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as References from "effect/References"

import { method } from "../../src/services/common.js"

/** The name of the span current inside the method, if any, and what it answered. */
const probe = method("Probe.call")(function*(n: number) {
  const span = yield* Effect.option(Effect.currentSpan)
  return { answer: n + 1, span: Option.map(span, (s) => s.name) }
})

describe("service methods", () => {
  it.effect("with tracing on, a call runs in a span named after the method", () =>
    Effect.gen(function*() {
      const result = yield* probe(1).pipe(Effect.provideService(References.TracerEnabled, true))
      expect(result).toEqual({ answer: 2, span: Option.some("Probe.call") })
    }))

  it.effect("with tracing off, a call makes no span, not even a no-op one, and answers the same", () =>
    Effect.gen(function*() {
      const result = yield* probe(1).pipe(Effect.provideService(References.TracerEnabled, false))
      expect(result).toEqual({ answer: 2, span: Option.none() })
    }))

  it.effect("a failure is the method's own either way", () =>
    Effect.gen(function*() {
      const failing = method("Probe.fail")(function*(reason: string) {
        return yield* Effect.fail(reason)
      })
      for (const enabled of [true, false]) {
        const exit = yield* Effect.flip(failing("no").pipe(Effect.provideService(References.TracerEnabled, enabled)))
        expect(exit).toBe("no")
      }
    }))
})
