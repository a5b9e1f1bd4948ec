// Self-service limits (DECISIONS §13): what a hit on a client's window of an action decides.
import { describe, expect, it } from "@effect/vitest"

import { ACTION_LIMITS, decideHit, describeLimit, type LimitedAction } from "../../src/domain/actionLimits.js"

const T = 1_800_000_000_000

describe("self-service limits", () => {
  it("the limits of DECISIONS §13: rotations 1 a minute, test events 10 a minute, bulk redelivery 1 a minute", () => {
    expect(Object.fromEntries(Object.keys(ACTION_LIMITS).map((a) => [a, describeLimit(a as LimitedAction)]))).toEqual({
      credentials_rotate: "1 a minute",
      webhook_secret_rotate: "1 a minute",
      webhook_test: "10 a minute",
      webhook_redeliver: "1 a minute"
    })
  })

  const table: ReadonlyArray<
    readonly [string, LimitedAction, { windowStartMs: number; hits: number }, number, ReturnType<typeof decideHit>]
  > = [
    ["the first hit of a window is allowed", "credentials_rotate", { windowStartMs: T, hits: 1 }, T, { _tag: "Allowed" }],
    ["a second rotation in the window is refused until the window ends", "credentials_rotate", { windowStartMs: T, hits: 2 }, T + 20_000, {
      _tag: "Refused",
      retryAfterSeconds: 40
    }],
    ["Retry-After is rounded up to whole seconds", "webhook_redeliver", { windowStartMs: T, hits: 2 }, T + 20_500, {
      _tag: "Refused",
      retryAfterSeconds: 40
    }],
    ["Retry-After is at least one second", "webhook_secret_rotate", { windowStartMs: T, hits: 2 }, T + 60_000, {
      _tag: "Refused",
      retryAfterSeconds: 1
    }],
    ["the tenth test event of a window is allowed", "webhook_test", { windowStartMs: T, hits: 10 }, T + 59_000, { _tag: "Allowed" }],
    ["the eleventh is refused", "webhook_test", { windowStartMs: T, hits: 11 }, T + 59_000, { _tag: "Refused", retryAfterSeconds: 1 }]
  ]
  for (const [rule, action, window, now, expected] of table) it(rule, () => expect(decideHit(action, window, now)).toEqual(expected))
})
