// The job daemon: the second process, built from the same layers as the API. Reads its configuration
// from the environment only (`npm start` prepares it: scripts/start.ts). Applies pending migrations
// at start, runs its jobs, writes its heartbeat, serves /healthz, /readyz and /metrics on JOBS_PORT
// when set, and stops cleanly on SIGTERM/SIGINT.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { cardParserConfig } from "../src/card/CardParser.js"
import { appConfig } from "../src/Config.js"
import { DaemonAppLive } from "../src/Layers.js"
import { DaemonProbesLive } from "../src/observability/daemonProbes.js"
import { HeartbeatLive } from "../src/observability/heartbeat.js"
import { tracingConfig, TracingLive } from "../src/observability/tracing.js"
import { runProcess } from "../src/runProcess.js"
import { JobsLive } from "./Jobs.js"

const SERVICE_NAME = "matchmaking-jobs"

/** Logs when the daemon has stopped: its finalizer runs after every job has been released. */
const StoppedLog = Layer.effectDiscard(Effect.addFinalizer(() => Effect.logInfo("job daemon stopped")))

// Built bottom-up and released top-down: the jobs stop (handing back claimed work) before the
// heartbeat marks the daemon stopped, and the probes answer until then.
const Daemon = Layer.effectDiscard(Effect.logInfo("job daemon ready")).pipe(
  Layer.provide(JobsLive),
  Layer.provide(HeartbeatLive),
  Layer.provide(DaemonProbesLive),
  Layer.provide(DaemonAppLive),
  Layer.provide(StoppedLog),
  Layer.provide(TracingLive(SERVICE_NAME))
)

// Every setting is checked before anything starts, so a bad or missing value is one clear line.
runProcess("jobs", [appConfig, cardParserConfig, tracingConfig(SERVICE_NAME)], Daemon)
