// A periodic job of the daemon is one module: a name, an interval and an effect. Each job runs
// in its own fiber, survives its own failures, and is interrupted on shutdown.
import { type Duration, Effect, Layer, Schedule } from "effect"

export const periodicJob = <R>(options: {
  readonly name: string
  readonly every: Duration.DurationInput
  readonly run: Effect.Effect<unknown, unknown, R>
}): Layer.Layer<never, never, R> =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const once = options.run.pipe(
        Effect.withSpan(`Job.${options.name}`),
        Effect.catchAllCause((cause) => Effect.logError(`job ${options.name} failed`, cause))
      )
      yield* Effect.logInfo(`job ${options.name} started`)
      yield* Effect.forkScoped(Effect.repeat(once, Schedule.spaced(options.every)))
    }).pipe(Effect.annotateLogs({ job: options.name }))
  )
