// Stops the project's embedded PostgreSQL (.data/pg), e.g. one left running by a crashed `npm start`.
// Prints one JSON value on stdout; diagnostics go to stderr as log lines (LOG_FORMAT).
import * as Effect from "effect/Effect"

import { embeddedDataDir } from "../src/bootstrap.js"
import { plainLog } from "../src/logging.js"
import { runScript } from "../src/runProcess.js"
import { stopEmbeddedPostgres } from "../src/sql/embedded.js"
import { ProcessFailure } from "../src/startup.js"

const program = Effect.gen(function*() {
  const write = yield* plainLog
  const stopped = yield* Effect.tryPromise({
    try: () =>
      stopEmbeddedPostgres(embeddedDataDir(), {
        log: (message, fields) => write(fields?.level ?? "Info", message, { source: fields?.source ?? "embedded-postgres" })
      }),
    catch: (error) => ProcessFailure.of("stopping the embedded PostgreSQL", error)
  })
  yield* Effect.sync(() => process.stdout.write(`${JSON.stringify({ stopped })}\n`))
  return 0
})

runScript("db:stop", program)
