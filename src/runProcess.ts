// How the API and the daemon run: every setting checked first (a bad or missing one is one log line
// and exit code 1, before anything starts), then their layer launched under Node's runtime with the
// logger of LOG_FORMAT, each line naming the process; the reason for a stop is logged, and a requested stop (SIGTERM, SIGINT) exits 0.
// They read their configuration from the environment only: preparing it (.env, an embedded
// PostgreSQL, its secret key) is `npm start`'s business (scripts/start.ts).
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { databaseTimeoutConfig, databaseUrlConfig } from "./Config.js"
import {
  exitCodeOnStop,
  exitOnInvalidSettings,
  logFormatConfig,
  LoggingLive,
  logLevelConfig,
  logStopReason,
  setLogProcess
} from "./logging.js"

export const runProcess = <A, E>(
  source: "api" | "jobs",
  settings: ReadonlyArray<Config.Config<unknown>>,
  process: Layer.Layer<A, E>
): void => {
  setLogProcess(source)
  exitOnInvalidSettings(source, [logLevelConfig, logFormatConfig, databaseUrlConfig, databaseTimeoutConfig, ...settings], {
    reportMissing: true
  })
  NodeRuntime.runMain(
    Layer.launch(process).pipe(
      Effect.tapCause(logStopReason(source, source === "api" ? "PORT" : "JOBS_PORT")),
      Effect.provide(LoggingLive)
    ),
    { disableErrorReporting: true, teardown: exitCodeOnStop }
  )
}
