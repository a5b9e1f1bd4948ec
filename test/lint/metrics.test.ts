// Every metric family the service exports (src/observability/metrics.ts) is named in docs/operator.md's
// table of metrics, so that an operator who sees a series on /metrics finds what it counts.
import { readFileSync } from "node:fs"
import { join } from "node:path"

import { describe, expect, it } from "@effect/vitest"

import * as Metrics from "../../src/observability/metrics.js"

const ROOT = join(import.meta.dirname, "..", "..")

const families = Object.values(Metrics).filter((value): value is Metrics.MetricFamily =>
  typeof value === "object" && value !== null && "name" in value && "kind" in value && "description" in value
)

describe("metrics are documented where an operator looks", () => {
  it("the module's families are found (counters, gauges and histograms)", () => {
    expect(new Set(families.map((f) => f.kind))).toEqual(new Set(["counter", "gauge", "histogram"]))
    expect(families.length).toBeGreaterThan(20)
  })

  it("every metric family is named in docs/operator.md's table, with a help text of its own", () => {
    const table = readFileSync(join(ROOT, "docs", "operator.md"), "utf8").split("\n").filter((line) => line.startsWith("| `"))
    const named = (name: string) => table.some((line) => line.includes(`\`${name}\``))
    expect(families.filter((f) => !named(f.name)).map((f) => f.name)).toEqual([])
    expect(families.filter((f) => f.description.trim() === "").map((f) => f.name)).toEqual([])
  })
})
