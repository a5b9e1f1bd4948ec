// A periodic job of the daemon is one module: a name, an interval and an effect. Each job runs
// in its own fiber, survives its own failures, and is interrupted on shutdown. Every pass is
// measured (span, runs, failures, duration, last run in the heartbeat) without code in the job.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"

import { measuredRun, registerJob } from "../src/observability/jobs.js"

export const periodicJob = <R>(options: {
  readonly name: string
  readonly every: Duration.DurationInput
  readonly run: Effect.Effect<unknown, unknown, R>
}): Layer.Layer<never, never, R> =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const once = options.run.pipe(
        measuredRun(options.name, "periodic"),
        Effect.catchAllCause((cause) => Effect.logError(`job ${options.name} failed`, cause))
      )
      yield* registerJob(options.name, { kind: "periodic", everySeconds: Duration.toSeconds(Duration.decode(options.every)) })
      yield* Effect.logInfo(`job ${options.name} started`)
      yield* Effect.forkScoped(Effect.repeat(once, Schedule.spaced(options.every)))
    }).pipe(Effect.annotateLogs({ job: options.name }))
  )
