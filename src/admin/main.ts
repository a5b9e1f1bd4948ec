// `npm run -s admin -- <command>`: prints one JSON value on stdout; logs go to stderr (LOG_FORMAT),
// a failed command's reason as plain text. Exit codes: 0 done, 2 the command failed
// (a usage error, or the platform refused it), 1 anything else (no database, an old schema …).
// The database must be migrated already (the API, the daemon or `npm run migrate` do that).
import * as NodeDns from "@effect/platform-node/NodeDns"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"

import { noteLeftRunning, prepareDatabase, preparedConfig, ProjectEnvFile } from "../bootstrap.js"
import { AppConfigLive } from "../Config.js"
import { AdminServicesLive } from "../Layers.js"
import { LogOutput } from "../logging.js"
import { runScript } from "../runProcess.js"
import { PgLive } from "../sql/Sql.js"
import { AdminSetupError, describeFailure, runCommand } from "./commands.js"
import { SchemaCheckLive } from "./schemaCheck.js"

/** The services its commands call (no card parser), over the database, on the configuration given to the layer; the schema must be current. */
const AdminLive = AdminServicesLive.pipe(
  Layer.provide(NodeDns.layer),
  Layer.provideMerge(SchemaCheckLive),
  Layer.provideMerge(PgLive),
  Layer.provideMerge(AppConfigLive)
)

const setupFailed = (e: unknown) => new AdminSetupError({ message: describeFailure(e) })
const preparingFailed = (why: string) => new AdminSetupError({ message: `preparing the environment failed: ${why}` })

/**
 * A command's effect with its services, for as long as it runs. Built only when a command runs
 * (not for --help or a usage error): the configuration is completed first (.env; without
 * DATABASE_URL the embedded PostgreSQL of `npm start`, started when none runs, which is then said
 * with the command that stops it), and given to the services as their ConfigProvider.
 */
const withServices = Effect.fnUntraced(function*<A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof AdminLive>>) {
  const envFile = yield* ProjectEnvFile
  if (envFile.problem !== undefined) return yield* preparingFailed(envFile.problem)
  const prepared = yield* prepareDatabase.pipe(Effect.mapError((e) => preparingFailed(e.message)))
  yield* noteLeftRunning("admin", prepared.embedded)
  const services = yield* Layer.build(AdminLive.pipe(Layer.provide(preparedConfig(prepared)))).pipe(Effect.mapError(setupFailed))
  return yield* Effect.provideContext(effect, services)
}, Effect.scoped)

const write = (stream: NodeJS.WriteStream, text: string) => Effect.sync(() => void stream.write(text.endsWith("\n") ? text : `${text}\n`))

const program = Effect.gen(function*() {
  const envFile = yield* ProjectEnvFile
  const output = yield* LogOutput
  // Inside the command line, which gives its commands --log-level (the preparation's own lines
  // follow LOG_LEVEL, as in every process).
  return yield* runCommand(
    process.argv.slice(2),
    (effect) => withServices(effect).pipe(Effect.provideService(ProjectEnvFile, envFile), Effect.provideService(LogOutput, output))
  )
}).pipe(
  Effect.matchCauseEffect({
    onSuccess: (outcome) =>
      outcome._tag === "Answer"
        ? Effect.as(write(process.stdout, JSON.stringify(outcome.value, null, 2)), 0)
        : Effect.as(outcome.text === "" ? Effect.void : write(process.stderr, outcome.text), 0),
    onFailure: (cause) => {
      const failure = Cause.findErrorOption(cause)
      // A setting read while a layer was built (the database's) dies with its ConfigError: named as the API names it.
      const [badSetting] = cause.reasons.flatMap((r) => Cause.isDieReason(r) && r.defect instanceof Config.ConfigError ? [r.defect] : [])
      if (Option.isNone(failure) && badSetting !== undefined) return Effect.as(write(process.stderr, describeFailure(badSetting)), 1)
      if (Option.isNone(failure)) return Effect.as(write(process.stderr, `internal error: ${Cause.pretty(cause)}`), 1)
      return Effect.as(write(process.stderr, describeFailure(failure.value)), failure.value instanceof AdminSetupError ? 1 : 2)
    }
  }),
  // Only warnings and worse (or --log-level): stdout is the command's answer, stderr stays quiet for scripts.
  Effect.provideService(References.MinimumLogLevel, "Warn")
)

runScript("admin", program)
