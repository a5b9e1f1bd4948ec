// What bench/variants.ts compares and how (bench/paired.ts).
import { describe, expect, it } from "@effect/vitest"

import { median, pairedQuartiles, pairedRatio, parseVariants } from "../../bench/paired.js"

describe("bench variants", () => {
  it("BENCH_VARIANTS names builds as name=dir pairs, a relative dir taken from where the bench runs", () => {
    expect(parseVariants(" before=../old , abs=/srv/build ", "/work/main")).toEqual([
      { name: "before", dir: "/work/old" },
      { name: "abs", dir: "/srv/build" }
    ])
    expect(parseVariants("", "/work/main")).toEqual([])
  })

  it.each([
    ["../old", /not name=dir/],
    ["=../old", /not name=dir/],
    ["old=", /not name=dir/],
    ["a b=../old", /not name=dir/],
    ["current=../old", /this checkout's own/],
    ["x=../a,x=../b", /names x twice/]
  ])("BENCH_VARIANTS %s is refused, not skipped", (text, message) => {
    expect(() => parseVariants(text, "/work/main")).toThrow(message)
  })

  it("the median is the middle value, the upper one of an even count", () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(3)
    expect(() => median([])).toThrow(/nothing/)
  })

  it("a paired ratio cancels what the machine did to both servers in a round, and drops a spoiled round", () => {
    // The machine runs at 1×, 2× and 0.5× speed across rounds: the ratio stays 0.9.
    expect(pairedRatio([90, 180, 45], [100, 200, 50])).toBeCloseTo(0.9, 10)
    // One round spoiled for one server only: the median keeps the others' ratio.
    expect(pairedRatio([90, 400, 90, 90, 90], [100, 100, 100, 100, 100])).toBeCloseTo(0.9, 10)
    expect(() => pairedRatio([1, 2], [1])).toThrow(/differ in number/)
  })

  it("the quartiles of the per-round ratios show whether a paired ratio told two builds apart", () => {
    // Five rounds, ratios 0.8 0.9 1.0 1.1 1.2 (in any order): quartiles 0.9 and 1.1, on both sides of 1.
    expect(pairedQuartiles([110, 80, 120, 100, 90], [100, 100, 100, 100, 100])).toEqual([0.9, 1.1])
    // Eleven rounds all near 0.9: both quartiles below 1.
    const costs = [88, 90, 91, 89, 92, 90, 87, 93, 90, 89, 91]
    const [low, high] = pairedQuartiles(costs, costs.map(() => 100))
    expect(low).toBeCloseTo(0.89, 10)
    expect(high).toBeCloseTo(0.91, 10)
    expect(() => pairedQuartiles([], [])).toThrow(/nothing/)
    expect(() => pairedQuartiles([1, 2], [1])).toThrow(/differ in number/)
  })
})
