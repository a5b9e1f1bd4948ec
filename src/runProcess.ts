// How the API and the daemon run: their layer launched under Node's runtime with the JSON logger
// and the environment as the bootstrap left it; the reason for a stop is logged, and a requested
// stop (SIGTERM, SIGINT) exits 0.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { exitCodeOnStop, LoggingLive, logStopReason } from "./logging.js"

// Effect's default provider keeps the copy of the environment it took on first use, before the
// bootstrap filled in DATABASE_URL and SECRET_KEY.
const EnvironmentLive = ConfigProvider.layer(Effect.sync(() => ConfigProvider.fromEnv()))

export const runProcess = <A, E>(source: "api" | "jobs", process: Layer.Layer<A, E>): void =>
  NodeRuntime.runMain(
    Layer.launch(process).pipe(
      Effect.tapCause(logStopReason(source)),
      Effect.provide(LoggingLive),
      Effect.provide(EnvironmentLive)
    ),
    { disableErrorReporting: true, teardown: exitCodeOnStop }
  )
