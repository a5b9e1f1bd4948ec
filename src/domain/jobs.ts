// What a daemon records of each of its jobs: the shape the heartbeat writes into daemon_heartbeats
// (jobs, a JSON object by job name) and `admin daemons list` and `status` read back. Pure data, so
// that the repository, the observability that fills it and the admin that shows it share it
// without importing one another.
import * as Schema from "effect/Schema"

/** What the heartbeat row says of one job (times in epoch milliseconds). */
export const JobSnapshot = Schema.Struct({
  kind: Schema.Literals(["periodic", "queue"]),
  /** Periodic jobs: seconds between passes; queues: workers. */
  every_seconds: Schema.NullOr(Schema.Number),
  concurrency: Schema.NullOr(Schema.Number),
  runs: Schema.Number,
  failures: Schema.Number,
  failures_last_hour: Schema.Number,
  running: Schema.Number,
  last_started_at: Schema.NullOr(Schema.Number),
  last_finished_at: Schema.NullOr(Schema.Number),
  last_duration_ms: Schema.NullOr(Schema.Number),
  last_outcome: Schema.NullOr(Schema.Literals(["ok", "failed"])),
  last_error: Schema.NullOr(Schema.String)
})
export type JobSnapshot = typeof JobSnapshot.Type

/** A job's kind: a periodic pass, or a queue of tasks. */
export type JobKind = JobSnapshot["kind"]
