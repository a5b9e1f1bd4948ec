// Two projects: `unit` (pure rules and card text rules: no database, seconds) and `integration`
// (repositories and endpoints against a real PostgreSQL started once by the global setup).
// `npm test` runs both; `npm run test:unit` only the first.
import { defineConfig } from "vitest/config"

const UNIT = ["test/domain/**/*.test.ts", "test/card/rules.test.ts"]

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
          testTimeout: 30_000,
          hookTimeout: 120_000
        }
      }
    ]
  }
})
