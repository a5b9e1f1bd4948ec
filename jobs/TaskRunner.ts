// The daemon's generic task runner: workers claim rows (row locks with SKIP LOCKED and a lease,
// so any number of daemons share a queue), are woken by LISTEN/NOTIFY with polling as a
// backstop, and give a claimed task back when the daemon shuts down mid-task. A queue is one
// value: how to claim, process and release its tasks; each task is measured as one run of it.
import { randomBytes } from "node:crypto"

import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"

import { DAEMON_INSTANCE } from "../src/observability/instance.js"
import { measuredRun, registerJob } from "../src/observability/jobs.js"
import { isDatabaseFaultCause } from "../src/repos/sqlHelpers.js"
import { wakeOn } from "../src/sql/Listener.js"
import type { DatabaseUrl } from "../src/sql/Sql.js"
import { jobSpan } from "./Job.js"

export interface TaskQueue<T, R> {
  readonly name: string
  /** NOTIFY channel that announces new tasks. */
  readonly channel: string
  readonly concurrency: number
  readonly pollInterval: Duration.Input
  /** Claims one task for this worker and commits the claim; none when the queue is empty. */
  readonly claim: (worker: string) => Effect.Effect<Option.Option<T>, unknown, R>
  /** Does the work and records the outcome (no transaction may stay open during slow I/O). */
  readonly process: (task: T, worker: string) => Effect.Effect<unknown, unknown, R>
  /** Puts a claimed task back (shutdown while working on it). */
  readonly release: (task: T, worker: string) => Effect.Effect<unknown, unknown, R>
  /** Extends a claimed task's lease while its work runs, every `every`, so no other daemon takes it. */
  readonly renew?: {
    readonly every: Duration.Input
    readonly run: (task: T, worker: string) => Effect.Effect<unknown, unknown, R>
  }
}

export const taskRunner = <T, R>(queue: TaskQueue<T, R>): Layer.Layer<never, never, R | DatabaseUrl> =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const wake = yield* Queue.sliding<void>(1)
      // Starts with the daemon's heartbeat id, so that a held task names the daemon that holds it;
      // its own suffix keeps two runners of one queue in one process apart.
      const instance = `${DAEMON_INSTANCE.id}:${randomBytes(2).toString("hex")}`

      yield* wakeOn(queue.channel, wake)
      yield* Effect.forkScoped(Effect.repeat(Queue.offer(wake, undefined), Schedule.spaced(queue.pollInterval)))

      // One task, traced as a run of the queue's job and measured; its lease renewed while it runs
      // (a failed renewal is only logged: the claim's fencing still keeps a late finish out).
      const renewing = (task: T, worker: string) =>
        queue.renew === undefined
          ? Effect.void
          : Effect.forkScoped(
            Effect.repeat(
              queue.renew.run(task, worker).pipe(
                Effect.catchCause((cause) => Effect.logWarning(`renewing a ${queue.name} lease failed`, cause))
              ),
              Schedule.spaced(queue.renew.every)
            ).pipe(Effect.delay(queue.renew.every))
          )
      const run = Effect.fn(...jobSpan(queue.name, "queue"))(function*(task: T, worker: string) {
        return yield* Effect.scoped(Effect.andThen(renewing(task, worker), queue.process(task, worker)))
      }, measuredRun(queue.name, "queue"))

      const worker = (n: number) => {
        const id = `${instance}:${queue.name}:${n}`
        const claimOne = queue.claim(id).pipe(
          Effect.catchCause((cause) =>
            Effect.logError(`claiming a ${queue.name} task failed`, cause).pipe(
              Effect.andThen(Effect.sleep("1 second")),
              Effect.as(Option.none<T>())
            )
          )
        )
        const step = Effect.flatMap(claimOne, (claimed) =>
          Option.isNone(claimed)
            ? Queue.take(wake)
            : run(claimed.value, id).pipe(
              Effect.onInterrupt(() => Effect.ignore(queue.release(claimed.value, id))),
              Effect.catchCause((cause) =>
                isDatabaseFaultCause(cause)
                  // The database failed, not the task: give it back uncounted and pause; if even that
                  // fails, the lease ends and the task is claimed again.
                  ? Effect.logWarning(`a ${queue.name} task met a database fault; it is given back`, cause).pipe(
                    Effect.andThen(Effect.ignore(queue.release(claimed.value, id))),
                    Effect.andThen(Effect.sleep("1 second"))
                  )
                  : Effect.logError(`a ${queue.name} task failed`, cause)
              )
            ))
        return Effect.forever(step).pipe(Effect.annotateLogs({ queue: queue.name, worker: id }))
      }
      yield* registerJob(queue.name, { kind: "queue", concurrency: queue.concurrency })
      for (let n = 0; n < queue.concurrency; n++) yield* Effect.forkScoped(worker(n))
      yield* Effect.logInfo(`task runner ${queue.name} started`).pipe(Effect.annotateLogs({ workers: queue.concurrency }))
    })
  )
