// What a daemon's jobs did, measured once for every job: `measuredRun` wraps one run (a periodic
// job's pass, one task of a queue) with its span, the runs/failures/duration metrics and the
// in-process record that the heartbeat writes to daemon_heartbeats for `admin daemons list`.
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

import type { JobSnapshot } from "../domain/jobs.js"
import { errorMessage } from "../domain/text.js"
import { jobDuration, jobFailures, jobRuns, update } from "./metrics.js"

// The snapshot shape lives in src/domain/jobs.ts (the repository writes it, the admin reads it).
export { JobSnapshot } from "../domain/jobs.js"

interface JobRecord {
  readonly kind: JobSnapshot["kind"]
  readonly everySeconds: number | null
  readonly concurrency: number | null
  runs: number
  failures: number
  /** Failures per minute (epoch minute → count), the last hour of them. */
  readonly failureMinutes: Map<number, number>
  running: number
  lastStartedAt: number | null
  lastFinishedAt: number | null
  lastDurationMs: number | null
  lastOutcome: "ok" | "failed" | null
  lastError: string | null
}

/** The jobs of this process by name; a reference, so a test may give its daemon its own. */
export const JobActivity = Context.Reference<Map<string, JobRecord>>("Observability/JobActivity", {
  defaultValue: () => new Map()
})

const MINUTE = 60_000

const failuresLastHour = (record: JobRecord, now: number): number => {
  const from = Math.floor(now / MINUTE) - 59
  let n = 0
  for (const [minute, count] of record.failureMinutes) {
    if (minute < from) record.failureMinutes.delete(minute)
    else n += count
  }
  return n
}

/** Makes a job known before its first run (a daemon lists it as "not run yet"). */
export const registerJob = (
  name: string,
  options: { readonly kind: JobSnapshot["kind"]; readonly everySeconds?: number; readonly concurrency?: number }
): Effect.Effect<void> =>
  Effect.map(JobActivity, (jobs) => {
    if (jobs.has(name)) return
    jobs.set(name, {
      kind: options.kind,
      everySeconds: options.everySeconds ?? null,
      concurrency: options.concurrency ?? null,
      runs: 0,
      failures: 0,
      failureMinutes: new Map(),
      running: 0,
      lastStartedAt: null,
      lastFinishedAt: null,
      lastDurationMs: null,
      lastOutcome: null,
      lastError: null
    })
  })

/** Every job of this process as the heartbeat writes it. */
export const jobSnapshots: Effect.Effect<Record<string, JobSnapshot>> = Effect.map(JobActivity, (jobs) => {
  const now = Date.now()
  const out: Record<string, JobSnapshot> = {}
  for (const [name, r] of jobs) {
    out[name] = {
      kind: r.kind,
      every_seconds: r.everySeconds,
      concurrency: r.concurrency,
      runs: r.runs,
      failures: r.failures,
      failures_last_hour: failuresLastHour(r, now),
      running: r.running,
      last_started_at: r.lastStartedAt,
      last_finished_at: r.lastFinishedAt,
      last_duration_ms: r.lastDurationMs,
      last_outcome: r.lastOutcome,
      last_error: r.lastError
    }
  }
  return out
})

/** `measuredRun`'s body, one generator function for every run. */
const measured: <A, E, R>(job: string, kind: JobSnapshot["kind"], self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> = Effect
  .fnUntraced(function*<A, E, R>(job: string, kind: JobSnapshot["kind"], self: Effect.Effect<A, E, R>) {
    yield* registerJob(job, { kind })
    const record = (yield* JobActivity).get(job)!
    const started = Date.now()
    const startedPrecise = performance.now()
    record.running++
    record.lastStartedAt = started
    return yield* self.pipe(
      Effect.withSpan(`Job.${job}`, { attributes: { "job.name": job, "job.kind": kind }, kind: "internal" }),
      Effect.onExit((exit) => {
        record.running--
        if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return Effect.void
        const seconds = (performance.now() - startedPrecise) / 1000
        const failed = Exit.isFailure(exit)
        record.runs++
        record.lastFinishedAt = Date.now()
        record.lastDurationMs = Math.round(seconds * 1000)
        record.lastOutcome = failed ? "failed" : "ok"
        record.lastError = Exit.isFailure(exit) ? errorMessage(Cause.squash(exit.cause)).slice(0, 500) : null
        if (failed) {
          record.failures++
          const minute = Math.floor(record.lastFinishedAt / MINUTE)
          record.failureMinutes.set(minute, (record.failureMinutes.get(minute) ?? 0) + 1)
        }
        return Effect.all([
          update(jobRuns, { job }, 1),
          failed ? update(jobFailures, { job }, 1) : Effect.void,
          update(jobDuration, { job }, seconds)
        ], { discard: true })
      })
    )
  })

/**
 * One run of `job`, measured: a span `Job.<job>`, the job_runs / job_failures counters and the
 * duration histogram, and the record of its last run. Real time is measured (not the Clock
 * service, which tests move by hand). An interrupted run (shutdown) is neither a success nor a
 * failure: it is handed back, not done.
 */
export const measuredRun = (job: string, kind: JobSnapshot["kind"]) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  measured(job, kind, self)
