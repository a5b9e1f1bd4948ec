// Stops the project's embedded PostgreSQL (.data/pg), e.g. one left running by a crashed `npm start`.
// Prints one JSON value on stdout; diagnostics go to stderr as log lines (LOG_FORMAT).
import { embeddedDataDir } from "../src/bootstrap.js"
import { errorMessage } from "../src/domain/text.js"
import { exitWithError, setLogProcess } from "../src/logging.js"
import { stopEmbeddedPostgres } from "../src/sql/embedded.js"

setLogProcess("db:stop")
const stopped = await stopEmbeddedPostgres(embeddedDataDir()).catch((error: unknown) =>
  exitWithError("db:stop", `stopping the embedded PostgreSQL failed: ${errorMessage(error)}`)
)
process.stdout.write(`${JSON.stringify({ stopped })}\n`)
