// The one way a test waits for something another fiber, process or server does: poll a condition
// on a short interval until it holds, within a bound generous enough for a loaded machine (CI on
// two busy cores). The bound is a failure detector, not a timing claim: a test that needs time to
// pass drives it (TestClock, or a short configured schedule) and waits on what that time causes.
import * as Effect from "effect/Effect"

/** How long `eventually` waits by default before it fails the test (real time). */
export const EVENTUALLY_MS = 30_000

/** How often the condition is looked at. */
const POLL_MS = 50

/** Real time, whatever the fiber's Clock says (tests on the TestClock poll too). */
const realPause = (ms: number) =>
  Effect.callback<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(timer))
  })

/**
 * Runs `check` until `ok` holds of its value and returns that value; dies naming `what` and the
 * last value seen once `timeoutMs` of real time has passed.
 */
export const eventually = <A, E, R>(
  what: string,
  check: Effect.Effect<A, E, R>,
  ok: (a: A) => boolean,
  timeoutMs: number = EVENTUALLY_MS
): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    const deadline = performance.now() + timeoutMs
    for (;;) {
      const value = yield* check
      if (ok(value)) return value
      if (performance.now() > deadline) {
        return yield* Effect.die(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${show(value)}`))
      }
      yield* realPause(POLL_MS)
    }
  })

const show = (value: unknown): string => {
  try {
    const text = JSON.stringify(value) ?? String(value)
    return text.length > 2_000 ? `${text.slice(0, 2_000)}…` : text
  } catch {
    return String(value)
  }
}
