// Two projects: `unit` (pure rules, card text rules, the services over in-memory fakes of their
// layers, the benchmarks' CPU readings: no database, no network, seconds) and `integration`
// (repositories and endpoints against a real PostgreSQL started once by the global setup).
// `npm test` runs both; `npm run test:unit` only the first.
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"

import { defineConfig } from "vitest/config"

/**
 * How many test files run at once. Vitest's default is one per core but one: a single file at a
 * time on a 2-core machine. The unit project is CPU work: one file per core. The integration
 * project's files mostly wait (on PostgreSQL, on the API and daemon processes they start, on
 * leases and schedules set short but real), so more of them than cores overlap their waits; each
 * runs on a PostgreSQL server of its own worker (test/globalSetup.ts starts one per worker). On a
 * shared TEST_DATABASE_URL server the integration files run one at a time. TEST_WORKERS=N sets
 * both projects (TEST_WORKERS=1: one file at a time).
 */
const CORES = availableParallelism()
const override = Number(process.env["TEST_WORKERS"] ?? "")
const workers = (fallback: number) => Number.isInteger(override) && override >= 1 ? override : fallback
const sharedServer = (process.env["TEST_DATABASE_URL"] ?? "") !== ""

/**
 * V8's code cache for the JavaScript that Node itself loads (the packages under node_modules, in
 * every test worker, and everything in the API, daemon and admin processes the tests start, which
 * inherit the variable): each compiles once per machine instead of once per process. The folder is
 * the one `npm run admin` uses (src/compileCache.ts). Only a cache: a stale entry is recompiled.
 */
process.env["NODE_COMPILE_CACHE"] ??= join(tmpdir(), "node-compile-cache")

const UNIT = [
  "test/domain/**/*.test.ts",
  "test/card/rules.test.ts",
  "test/fakes/**/*.test.ts",
  "test/services/**/*.test.ts",
  "test/contract.test.ts",
  "test/memory/**/*.test.ts",
  "test/bench/**/*.test.ts",
  "test/lint/**/*.test.ts"
]

export default defineConfig({
  test: {
    reporters: ["default", "./test/support/summaryReporter.ts"],
    projects: [
      {
        test: {
          name: "unit",
          include: UNIT,
          testTimeout: 10_000,
          maxWorkers: workers(CORES),
          // One worker runs file after file without a fresh process and module graph each time:
          // importing the app again per file was most of this project's time. These tests share
          // no state through modules (services are built per test layer, time is the TestClock).
          isolate: false,
          // Projects with different maxWorkers run one after the other (the unit project first).
          sequence: { groupOrder: 0 }
        }
      },
      {
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          exclude: UNIT,
          globalSetup: ["test/globalSetup.ts"],
          maxWorkers: sharedServer ? 1 : workers(Math.max(3, CORES)),
          sequence: { groupOrder: 1 },
          // A failure detector, not a timing claim: longer than `eventually`'s bound (test/support/eventually.ts),
          // so that a wait that runs out says what it waited for, even on a loaded machine.
          testTimeout: 120_000,
          hookTimeout: 120_000
        }
      }
    ]
  }
})
