// Two projects: `unit` (pure rules, card text rules, the services over in-memory fakes of their
// layers, the benchmarks' CPU readings: no database, no network, seconds) and `integration`
// (repositories and endpoints against a real PostgreSQL started once by the global setup).
// `npm test` runs both; `npm run test:unit` only the first.
import { defineConfig } from "vitest/config"

const UNIT = [
  "test/domain/**/*.test.ts",
  "test/card/rules.test.ts",
  "test/fakes/**/*.test.ts",
  "test/services/**/*.test.ts",
  "test/contract.test.ts",
  "test/memory/**/*.test.ts",
  "test/bench/**/*.test.ts"
]

export default defineConfig({
  test: {
    reporters: ["default", "./test/support/summaryReporter.ts"],
    projects: [
      {
        test: {
          name: "unit",
          include: UNIT,
          testTimeout: 10_000
        }
      },
      {
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          exclude: UNIT,
          globalSetup: ["test/globalSetup.ts"],
          // A failure detector, not a timing claim: longer than `eventually`'s bound (test/support/eventually.ts),
          // so that a wait that runs out says what it waited for, even on a loaded machine.
          testTimeout: 120_000,
          hookTimeout: 120_000
        }
      }
    ]
  }
})
