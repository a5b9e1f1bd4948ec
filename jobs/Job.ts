// A periodic job of the daemon is one module: a name, an interval and an effect. Each job is a
// layer that forks its loop into the layer's scope (so shutdown interrupts it), repeats on a
// Schedule, and logs and survives its own failures. Every pass is a span `Job.<name>` and is
// measured (runs, failures, duration, last run in the heartbeat) without code in the job.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"

import type { JobKind } from "../src/domain/jobs.js"
import { measuredRun, registerJob } from "../src/observability/jobs.js"

/** The span of one run of a job: `Effect.fn(...jobSpan(name, kind))(body, measured(name, kind))`. */
export const jobSpan = (name: string, kind: JobKind) =>
  [`Job.${name}`, { attributes: { "job.name": name, "job.kind": kind }, kind: "internal" }] as const

export const periodicJob = <R>(options: {
  readonly name: string
  readonly every: Duration.Input
  readonly run: Effect.Effect<unknown, unknown, R>
}): Layer.Layer<never, never, R> =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const run = Effect.fn(...jobSpan(options.name, "periodic"))(function*() {
        return yield* options.run
      }, measuredRun(options.name, "periodic"))
      // The span ends failed; the loop goes on.
      const pass = run().pipe(Effect.catchCause((cause) => Effect.logError(`job ${options.name} failed`, cause)))
      yield* registerJob(options.name, { kind: "periodic", everySeconds: Duration.toSeconds(options.every) })
      yield* Effect.logInfo(`job ${options.name} started`)
      yield* Effect.forkScoped(Effect.repeat(pass, Schedule.spaced(options.every)))
    }).pipe(Effect.annotateLogs({ job: options.name }))
  )
