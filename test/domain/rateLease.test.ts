// The local share of the rate limit (DECISIONS §10): how many tokens an instance leases at once,
// and how it spends, refunds and reports them.
import { describe, expect, it } from "@effect/vitest"

import { leaseSize, LocalTokens } from "../../src/domain/rateLease.js"

describe("leaseSize", () => {
  it.each([
    { rps: 50, burst: 100, size: 2, why: "the default: 5% of a second's rate" },
    { rps: 1, burst: 3, size: 1, why: "at least one token" },
    { rps: 1000, burst: 20, size: 1, why: "a small burst bounds it" },
    { rps: 400, burst: 1000, size: 20, why: "5% of the rate" },
    { rps: 1_000_000, burst: 1_000_000, size: 1000, why: "at most 1,000" },
    { rps: 0.5, burst: 10, size: 1, why: "fractional rates still lease one" }
  ])("rps $rps, burst $burst leases $size ($why)", ({ burst, rps, size }) => {
    expect(leaseSize(rps, burst)).toBe(size)
  })

  it("two instances each holding one lease hold at most 10% of a second's rate (rates of 20/s and more)", () => {
    for (const rps of [20, 50, 100, 1000, 10_000]) expect(2 * leaseSize(rps, 2 * rps)).toBeLessThanOrEqual(rps * 0.1)
  })
})

describe("LocalTokens", () => {
  it("spends only what a lease kept, then asks for a lease again", () => {
    const held = new LocalTokens()
    expect(held.take("ak")).toBe(false)
    held.keep("ak", 2, 40)
    expect(held.take("ak")).toBe(true)
    expect(held.take("ak")).toBe(true)
    expect(held.take("ak")).toBe(false)
  })

  it("a refunded token can be spent again", () => {
    const held = new LocalTokens()
    held.keep("ak", 1, 0)
    expect(held.take("ak")).toBe(true)
    held.refund("ak")
    expect(held.take("ak")).toBe(true)
  })

  it("forgets one client's tokens, or everyone's", () => {
    const held = new LocalTokens()
    held.keep("a", 2, 0)
    held.keep("b", 2, 0)
    held.forget("a")
    expect(held.take("a")).toBe(false)
    expect(held.take("b")).toBe(true)
    held.forget()
    expect(held.take("b")).toBe(false)
  })

  it("reports held tokens plus the shared level of the last lease, per client", () => {
    const held = new LocalTokens()
    held.keep("a", 3, 10)
    held.keep("a", 1, 7)
    held.keep("b", 0, 5)
    expect(held.remaining("a")).toBe(11)
    expect(held.remaining("b")).toBe(5)
    expect(held.remaining("unknown")).toBe(0)
  })
})
