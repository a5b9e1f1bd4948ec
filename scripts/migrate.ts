// `npm run migrate`: applies pending migrations (under the advisory lock) and prints them as JSON.
import { bootstrapEnv } from "../src/bootstrap.js"

await bootstrapEnv()
const { Effect, Config } = await import("effect")
const { migrate, pgClientLayer } = await import("../src/sql/Sql.js")

const program = Effect.flatMap(Config.redacted("DATABASE_URL"), (url) => migrate.pipe(Effect.provide(pgClientLayer(url, "migrate"))))
const applied = await Effect.runPromise(Effect.orDie(program))
process.stdout.write(JSON.stringify({ applied }) + "\n")
process.exit(0)
