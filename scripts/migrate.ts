// `npm run migrate`: applies pending migrations (under the advisory lock) and prints them as JSON.
// Without DATABASE_URL it uses the embedded PostgreSQL of `npm start`, starting it when none runs
// (and then says so, with the command that stops it).
import { bootstrapOrExit, noteLeftRunning } from "../src/bootstrap.js"
import { errorMessage } from "../src/domain/text.js"
import { exitWithError, setLogProcess } from "../src/logging.js"
import { migrateDatabase } from "../src/sql/migrateUrl.js"

setLogProcess("migrate")
const { embedded } = await bootstrapOrExit("migrate")
noteLeftRunning("migrate", embedded)

// bootstrapOrExit has set DATABASE_URL (the given one, or the embedded server's).
const applied = await migrateDatabase(process.env["DATABASE_URL"] ?? "").catch((error: unknown) =>
  // A failure is one line on stderr, like every other line there.
  exitWithError("migrate", `migrating failed: ${errorMessage(error)}`)
)
process.stdout.write(JSON.stringify({ applied }) + "\n")
process.exit(0)
