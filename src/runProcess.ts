// How the entry points run under Node's runtime, with the logging of their settings (each line
// naming the process) and the exit code their end gives; nothing else calls process.exit.
// - runProcess: the API and the daemon. Every setting is checked first (a bad or missing one is one
//   log line and exit code 1, before anything starts), then their layer is launched; the reason
//   for a stop is logged, and a requested stop (SIGTERM, SIGINT) exits 0. They read their
//   configuration from the environment only: preparing it is `npm start`'s business.
// - runScript: the command lines (`npm start`, `npm run migrate|admin|db:stop`), whose settings are
//   the environment completed by the project's .env, and whose program gives the exit code.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"

import { type ProjectEnvFile, ProjectEnvLive } from "./bootstrap.js"
import {
  databaseDirectUrlSetting,
  databaseIdleInTransactionConfig,
  databasePoolerConfig,
  databaseTimeoutConfig,
  databaseUrlConfig
} from "./Config.js"
import { logFormatConfig, LoggingLive, logLevelConfig, type LogOutput } from "./logging.js"
import { checkSettings, exitCodeOnStop, logStopReason } from "./startup.js"

export const runProcess = <A, E>(
  source: "api" | "jobs",
  settings: ReadonlyArray<Config.Config<unknown>>,
  process: Layer.Layer<A, E>
): void =>
  NodeRuntime.runMain(
    checkSettings(source, [
      logLevelConfig,
      logFormatConfig,
      databaseUrlConfig,
      databaseTimeoutConfig,
      databasePoolerConfig,
      databaseDirectUrlSetting,
      databaseIdleInTransactionConfig,
      ...settings
    ], { reportMissing: true }).pipe(
      Effect.andThen(Layer.launch(process)),
      Effect.tapCause(logStopReason(source, source === "api" ? "PORT" : "JOBS_PORT")),
      Effect.provide(LoggingLive(source))
    ),
    { disableErrorReporting: true, teardown: exitCodeOnStop }
  )

/**
 * runMain for a program that handles SIGINT and SIGTERM itself (`npm start` passes them on to its
 * children and waits for them): Node's runMain would interrupt it on the first one. It ends the
 * process with the code its teardown gives, 0 included, whatever is still open.
 */
const runMainOwnSignals = Runtime.makeRunMain(({ fiber, teardown }) => {
  fiber.addObserver((exit) => teardown(exit, (code) => process.exit(code)))
})

/**
 * Runs a command line named `source`: its lines name it, its settings are the environment completed
 * by the project's .env (ProjectEnvFile), and it exits with the code `program` returns; a failure
 * (a ProcessFailure first of all) is logged as its one FATAL line, and the exit code is 1.
 * `ownSignals`: the program handles SIGINT and SIGTERM itself.
 */
export const runScript = <E>(
  source: string,
  program: Effect.Effect<number, E, LogOutput | ProjectEnvFile>,
  options?: { readonly ownSignals?: boolean }
): void => {
  const main = program.pipe(
    Effect.tapCause(logStopReason(source)),
    Effect.provide(LoggingLive(source).pipe(Layer.provideMerge(ProjectEnvLive)))
  )
  const teardown: Runtime.Teardown = (exit, onExit) => onExit(Exit.isSuccess(exit) && typeof exit.value === "number" ? exit.value : 1)
  if (options?.ownSignals === true) runMainOwnSignals(main, { disableErrorReporting: true, teardown })
  else NodeRuntime.runMain(main, { disableErrorReporting: true, teardown })
}
