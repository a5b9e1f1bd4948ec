// The job daemon: the second process, built from the same layers as the API. Applies pending
// migrations at start, runs its jobs, and stops cleanly on SIGTERM/SIGINT.
import { bootstrapOrExit } from "../src/bootstrap.js"

// Every setting is checked before anything starts, so a bad value is one clear line, not a stack.
const { appConfig } = await import("../src/Config.js")
const { cardParserConfig } = await import("../src/card/CardParser.js")
await bootstrapOrExit("jobs", [appConfig, cardParserConfig])

const { NodeRuntime } = await import("@effect/platform-node")
const { Effect, Layer } = await import("effect")
const { AppLive } = await import("../src/Layers.js")
const { LoggingLive, logStopReason } = await import("../src/logging.js")
const { JobsLive } = await import("./Jobs.js")

Layer.effectDiscard(Effect.logInfo("job daemon ready")).pipe(
  Layer.provide(JobsLive),
  Layer.provide(AppLive),
  Layer.provide(Layer.scopedDiscard(Effect.addFinalizer(() => Effect.logInfo("job daemon stopped")))),
  Layer.launch,
  Effect.tapErrorCause(logStopReason("jobs")),
  Effect.provide(LoggingLive),
  NodeRuntime.runMain({ disablePrettyLogger: true, disableErrorReporting: true })
)
