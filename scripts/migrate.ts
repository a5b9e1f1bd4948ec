// `npm run migrate`: applies pending migrations (under the advisory lock) and prints them as JSON.
// Without DATABASE_URL it uses the embedded PostgreSQL of `npm start`, starting it when none runs
// (and then says so, with the command that stops it).
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"

import { noteLeftRunning, preparedConfig, prepareOrFail } from "../src/bootstrap.js"
import { runScript } from "../src/runProcess.js"
import { databaseSettings, migrateDirect } from "../src/sql/Sql.js"
import { ProcessFailure } from "../src/startup.js"

const program = Effect.gen(function*() {
  const prepared = yield* prepareOrFail("migrate")
  yield* noteLeftRunning("migrate", prepared.embedded)
  const applied = yield* Effect.gen(function*() {
    // Straight to PostgreSQL (DATABASE_DIRECT_URL): the migrations' lock is a session's.
    return yield* migrateDirect(yield* databaseSettings)
  }).pipe(
    Effect.provide(preparedConfig(prepared)),
    // A failure is one line on stderr, like every other line there.
    Effect.catchCause((cause) => Effect.fail(ProcessFailure.of("migrating", Cause.squash(cause))))
  )
  yield* Effect.sync(() => process.stdout.write(JSON.stringify({ applied }) + "\n"))
  return 0
})

runScript("migrate", program)
