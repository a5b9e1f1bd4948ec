// The daemon's heartbeat: its row in daemon_heartbeats is written at start and every
// DAEMON_HEARTBEAT_SECONDS with what its jobs did, and marked stopped on a clean shutdown, so
// `admin daemons list` tells live daemons from dead ones (no beat within three intervals).
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"

import { AppConfig } from "../Config.js"
import { DaemonsRepo } from "../repos/DaemonsRepo.js"
import { DAEMON_INSTANCE } from "./instance.js"
import { jobSnapshots } from "./jobs.js"

/** Rows of daemons silent for this many days are removed (a week of history for the operator). */
const FORGET_AFTER_DAYS = 7

export const HeartbeatLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const repo = yield* DaemonsRepo
    const beat = Effect.flatMap(jobSnapshots, (jobs) =>
      repo.beat({
        instanceId: DAEMON_INSTANCE.id,
        host: DAEMON_INSTANCE.host,
        pid: DAEMON_INSTANCE.pid,
        startedAtMs: DAEMON_INSTANCE.startedAtMs,
        intervalSeconds: config.heartbeatIntervalSeconds,
        jobs
      }))
    // A missed beat is logged and the next one tried: the daemon keeps working without its row.
    const beatOrWarn = beat.pipe(
      Effect.catchCause((cause) => Effect.logWarning("heartbeat not written", Cause.pretty(cause)))
    )
    // The first beat makes the row before any job runs; pruning rides along once an hour.
    yield* beatOrWarn
    // Added before the loops are forked, so it runs after they are interrupted: no beat can follow
    // the stop and clear it.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(jobSnapshots, (jobs) => repo.stop(DAEMON_INSTANCE.id, jobs)).pipe(
        // Interruptible, or the timeout could not end it inside the (uninterruptible) finalizer.
        Effect.interruptible,
        Effect.timeout("2 seconds"),
        Effect.catchCause((cause) => Effect.logWarning("heartbeat not marked stopped", Cause.pretty(cause)))
      )
    )
    yield* Effect.forkScoped(Effect.repeat(beatOrWarn, Schedule.spaced(Duration.seconds(config.heartbeatIntervalSeconds))))
    yield* Effect.forkScoped(
      Effect.repeat(
        Effect.ignore(repo.prune(FORGET_AFTER_DAYS)),
        Schedule.spaced("1 hour")
      )
    )
    yield* Effect.logInfo("heartbeat started").pipe(
      Effect.annotateLogs({ instance: DAEMON_INSTANCE.id, every_seconds: config.heartbeatIntervalSeconds })
    )
  })
).pipe(Layer.provide(DaemonsRepo.layer))
