// Stops the project's embedded PostgreSQL (.data/pg), e.g. one left running by a crashed `npm start`.
// Prints one JSON value on stdout; diagnostics go to stderr.
import { embeddedDataDir } from "../src/bootstrap.js"
import { stopEmbeddedPostgres } from "../src/sql/embedded.js"

const stopped = await stopEmbeddedPostgres(embeddedDataDir())
process.stdout.write(`${JSON.stringify({ stopped })}\n`)
