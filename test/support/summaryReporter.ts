// Prints one plain closing line, `Tests: N passed, N failed[, N skipped]`, after vitest's own
// summary, so tooling that reads closing lines can count the run.
import { writeSync } from "node:fs"

import type { Reporter, TestModule } from "vitest/node"

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") passed++
        else if (state === "failed") failed++
        else skipped++
      }
      if (module.state() === "failed" && [...module.children.allTests()].length === 0) failed++
    }
    const line = `Tests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`
    // Written at exit so that it is the very last line, after vitest's own summary.
    process.once("exit", () => writeSync(1, `\n${line}\n`))
  }
}
