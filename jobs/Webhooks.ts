// Webhook delivery by the daemon (DECISIONS §9). One loop takes turns: each turn records the
// attempts that finished and claims due deliveries into the slots they freed, in one round trip
// (SKIP LOCKED, a lease, at most WEBHOOK_CLIENT_CONCURRENCY in flight per receiver across every
// daemon, at most WEBHOOK_CONCURRENCY per daemon). Each attempt runs in its own fiber with no
// transaction open during the HTTP call. The loop is woken by a finished attempt, by LISTEN/NOTIFY
// (the fan-out trigger notifies at commit), and at the next due retry, with polling as a backstop.
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"

import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"

import { AppConfig } from "../src/Config.js"
import { measuredRun } from "../src/observability/jobs.js"
import { isDatabaseFaultCause } from "../src/repos/sqlHelpers.js"
import { type AttemptRecord, type ClaimedDelivery, WEBHOOK_CHANNEL } from "../src/repos/WebhooksRepo.js"
import { type AttemptOutcome, Webhooks } from "../src/services/Webhooks.js"
import { wakeOn } from "../src/sql/Listener.js"
import { jobSpan } from "./Job.js"

/** An attempt that finished and waits for the next turn to record it. */
interface Finished {
  readonly record: AttemptRecord
  readonly outcome: AttemptOutcome
  readonly delivery: ClaimedDelivery
}

const logOutcome = (f: Finished, written: boolean) =>
  (!written
    ? Effect.logWarning("webhook attempt not recorded: another daemon holds the delivery now")
    : f.outcome === "Succeeded"
    ? Effect.logDebug("webhook delivered")
    : f.outcome === "Gone"
    ? Effect.logWarning("webhook answered 410 Gone: the client's webhook is now off")
    : Effect.logInfo(`webhook attempt: ${f.outcome}`)).pipe(
      Effect.annotateLogs({
        delivery_id: f.delivery.id,
        webhook_id: f.delivery.event_id,
        app_key: f.delivery.app_key,
        attempt: f.delivery.attempt,
        status: f.record.status_code,
        error: f.record.error
      })
    )

/** The pause before another turn when a due delivery was left unclaimed by the last one. */
const UNCLAIMED_DUE_PAUSE_MS = 50

export const WebhooksJob = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const webhooks = yield* Webhooks
    const wake = yield* Queue.sliding<void>(1)
    const worker = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}:webhooks`
    const finished = yield* Queue.unbounded<Finished>()
    // At shutdown, after the attempts are stopped (their deliveries given back): record what had
    // already finished, so that those deliveries are not sent again.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Queue.clear(finished), (done) =>
        done.length === 0
          ? Effect.void
          : Effect.ignore(webhooks.cycle(done.map((f) => f.record), worker, 0)))
    )
    const attempts = yield* FiberSet.make<void>()
    /** Attempts claimed and not yet recorded (running, or finished and waiting for a turn). */
    const held = yield* Ref.make(0)

    yield* wakeOn(WEBHOOK_CHANNEL, wake)

    // An attempt interrupted at shutdown gives its delivery back, due at once, for any daemon.
    // Traced and counted like every job run (job_runs, job_failures, duration, the heartbeat's last run).
    const send = Effect.fn(...jobSpan("webhook-deliveries", "queue"))(function*(d: ClaimedDelivery) {
      return yield* webhooks.attempt(d, worker)
    }, measuredRun("webhook-deliveries", "queue"))
    const attempt = (d: ClaimedDelivery) =>
      send(d).pipe(
        Effect.flatMap((a) => Queue.offer(finished, { ...a, delivery: d })),
        Effect.onInterrupt(() => Effect.ignore(Effect.andThen(webhooks.release(d, worker), Ref.update(held, (n) => n - 1)))),
        Effect.catchCause((cause) =>
          isDatabaseFaultCause(cause)
            // The database failed, not the receiver: the delivery is given back, due again.
            ? Effect.logWarning("a webhook attempt met a database fault; it is given back", cause).pipe(
              Effect.andThen(Effect.ignore(webhooks.release(d, worker))),
              Effect.andThen(Ref.update(held, (n) => n - 1))
            )
            // Left leased: another attempt follows when the lease ends.
            : Effect.andThen(Effect.logError("a webhook attempt failed", cause), Ref.update(held, (n) => n - 1))
        ),
        Effect.andThen(Queue.offer(wake, undefined))
      )

    /** Records what finished and claims into the free slots; how many were claimed, and the room there was. */
    const turn = Effect.gen(function*() {
      const done = yield* Queue.clear(finished)
      const free = config.webhookConcurrency - ((yield* Ref.get(held)) - done.length)
      if (done.length === 0 && free <= 0) return { claimed: 0, free }
      const result = yield* webhooks.cycle(done.map((f) => f.record), worker, free).pipe(
        // Not recorded: try again next turn (a lease that ends meanwhile makes the record moot).
        Effect.tapError(() => Queue.offerAll(finished, done))
      )
      yield* Ref.update(held, (n) => n - done.length + result.claimed.length)
      for (const f of done) yield* logOutcome(f, result.recorded.has(f.record.id))
      // Forked from this uninterruptible turn, an attempt must be made interruptible again (shutdown).
      for (const d of result.claimed) yield* FiberSet.run(attempts, Effect.interruptible(attempt(d)))
      return { claimed: result.claimed.length, free }
      // Whole or not at all: a turn cut short at shutdown would leave its claims and records unseen.
    }).pipe(Effect.uninterruptible)

    const loop = Effect.gen(function*() {
      const { claimed, free } = yield* turn
      // A full batch: more may be due; take another turn at once.
      if (free > 0 && claimed === free) return
      if ((yield* Queue.size(finished)) === 0) {
        // Nothing running: sleep until the next retry comes due. Busy: a finished attempt wakes it.
        const idle = (yield* Ref.get(held)) === 0
        const dueInMs = idle ? yield* webhooks.nextDueInMs : Option.none()
        // A delivery due now that this turn did not claim (it came due since, or its client's
        // slots are taken by another daemon) is tried after a short pause, not in a tight loop.
        const floorMs = claimed === 0 ? UNCLAIMED_DUE_PAUSE_MS : 0
        const waitMs = Math.max(floorMs, Math.min(config.webhookPollSeconds * 1000, Option.getOrElse(dueInMs, () => Infinity)))
        yield* Effect.race(Queue.take(wake), Effect.sleep(waitMs))
      }
    }).pipe(
      Effect.catchCause((cause) => Effect.andThen(Effect.logError("webhook dispatch failed", cause), Effect.sleep("1 second")))
    )

    yield* Effect.forkScoped(Effect.forever(loop))
    yield* Effect.logInfo("webhook dispatcher started").pipe(
      Effect.annotateLogs({ concurrency: config.webhookConcurrency, per_client: config.webhookClientConcurrency })
    )
  }).pipe(Effect.annotateLogs({ job: "webhooks" }))
)

/** The daemon's webhook duties: delivery (the outbox's retention is jobs/Partitions.ts'). */
export const WebhookJobsLive = WebhooksJob
