// `npm run migrate`: applies pending migrations (under the advisory lock) and prints them as JSON.
import { bootstrapOrExit } from "../src/bootstrap.js"
import { exitWithError } from "../src/logging.js"

await bootstrapOrExit("migrate")
const { Effect, Config } = await import("effect")
const { migrate, pgClientLayer } = await import("../src/sql/Sql.js")

const program = Effect.flatMap(Config.redacted("DATABASE_URL"), (url) => migrate.pipe(Effect.provide(pgClientLayer(url, "migrate"))))
// A failure is one JSON line on stderr, like every other line there.
const applied = await Effect.runPromise(Effect.orDie(program)).catch((error: unknown) =>
  exitWithError("migrate", `migrating failed: ${error instanceof Error ? error.message : String(error)}`)
)
process.stdout.write(JSON.stringify({ applied }) + "\n")
process.exit(0)
