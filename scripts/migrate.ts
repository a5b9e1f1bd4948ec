// `npm run migrate`: applies pending migrations (under the advisory lock) and prints them as JSON.
import { bootstrapOrExit } from "../src/bootstrap.js"
import { errorMessage } from "../src/domain/text.js"
import { exitWithError } from "../src/logging.js"

await bootstrapOrExit("migrate")
// Loaded only once the environment is complete: a bad setting is reported before anything else.
const { migrateDatabase } = await import("../src/sql/migrateUrl.js")

// bootstrapOrExit has set DATABASE_URL (the given one, or the embedded server's).
const applied = await migrateDatabase(process.env["DATABASE_URL"] ?? "").catch((error: unknown) =>
  // A failure is one JSON line on stderr, like every other line there.
  exitWithError("migrate", `migrating failed: ${errorMessage(error)}`)
)
process.stdout.write(JSON.stringify({ applied }) + "\n")
process.exit(0)
