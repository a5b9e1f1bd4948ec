// The job daemon: the second process, built from the same layers as the API. Applies pending
// migrations at start, runs its jobs, writes its heartbeat, serves /healthz, /readyz and /metrics
// on JOBS_PORT when set, and stops cleanly on SIGTERM/SIGINT.
import { bootstrapOrExit } from "../src/bootstrap.js"

// Every setting is checked before anything starts, so a bad value is one clear line, not a stack.
const { appConfig } = await import("../src/Config.js")
const { cardParserConfig } = await import("../src/card/CardParser.js")
const { tracingConfig } = await import("../src/observability/tracing.js")
const SERVICE_NAME = "matchmaking-jobs"
await bootstrapOrExit("jobs", [appConfig, cardParserConfig, tracingConfig(SERVICE_NAME)])

const NodeRuntime = await import("@effect/platform-node/NodeRuntime")
const Effect = await import("effect/Effect")
const Layer = await import("effect/Layer")
const { AppLive } = await import("../src/Layers.js")
const { LoggingLive, logStopReason } = await import("../src/logging.js")
const { DaemonProbesLive } = await import("../src/observability/daemonProbes.js")
const { HeartbeatLive } = await import("../src/observability/heartbeat.js")
const { TracingLive } = await import("../src/observability/tracing.js")
const { JobsLive } = await import("./Jobs.js")

// Built bottom-up and released top-down: the jobs stop (handing back claimed work) before the
// heartbeat marks the daemon stopped, and the probes answer until then.
Layer.effectDiscard(Effect.logInfo("job daemon ready")).pipe(
  Layer.provide(JobsLive),
  Layer.provide(HeartbeatLive),
  Layer.provide(DaemonProbesLive),
  Layer.provide(AppLive),
  Layer.provide(Layer.scopedDiscard(Effect.addFinalizer(() => Effect.logInfo("job daemon stopped")))),
  Layer.provide(TracingLive(SERVICE_NAME)),
  Layer.launch,
  Effect.tapErrorCause(logStopReason("jobs")),
  Effect.provide(LoggingLive),
  NodeRuntime.runMain({ disablePrettyLogger: true, disableErrorReporting: true })
)
