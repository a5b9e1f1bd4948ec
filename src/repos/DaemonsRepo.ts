// Daemon heartbeats: the only SQL over `daemon_heartbeats`. Liveness is judged by the database's
// clock (every beat is stamped with now()), so daemons on hosts with skewed clocks compare fairly.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { JobSnapshot } from "../domain/jobs.js"
import { IsoTimestamp } from "./rows.js"
import { sqlEdge } from "./sqlHelpers.js"

/** A daemon is alive while it has beaten within this many of its own intervals. */
export const MISSED_BEATS = 3

const Jobs = Schema.Record(Schema.String, JobSnapshot)

export const DaemonRow = Schema.Struct({
  instance_id: Schema.String,
  host: Schema.String,
  pid: Schema.Int,
  started_at: IsoTimestamp,
  last_beat_at: IsoTimestamp,
  interval_seconds: Schema.Number,
  seconds_since_beat: Schema.Number,
  stopped_at: Schema.NullOr(IsoTimestamp),
  alive: Schema.Boolean,
  jobs: Jobs
})
export type DaemonRow = typeof DaemonRow.Type

const Beat = Schema.Struct({
  instanceId: Schema.String,
  host: Schema.String,
  pid: Schema.Int,
  startedAtMs: Schema.Number,
  intervalSeconds: Schema.Number,
  jobs: Jobs
})

export class DaemonsRepo extends Context.Service<DaemonsRepo>()("Daemons/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const upsert = SqlSchema.void({
      Request: Beat,
      execute: (b) =>
        sql`INSERT INTO daemon_heartbeats (instance_id, host, pid, started_at, last_beat_at, interval_seconds, jobs)
          VALUES (${b.instanceId}, ${b.host}, ${b.pid}, to_timestamp(${b.startedAtMs / 1000}), now(), ${b.intervalSeconds},
            ${JSON.stringify(b.jobs)}::jsonb)
          ON CONFLICT (instance_id) DO UPDATE SET last_beat_at = now(), interval_seconds = EXCLUDED.interval_seconds,
            jobs = EXCLUDED.jobs, stopped_at = NULL`
    })

    const markStopped = SqlSchema.void({
      Request: Schema.Struct({ instanceId: Schema.String, jobs: Jobs }),
      execute: ({ instanceId, jobs }) =>
        sql`UPDATE daemon_heartbeats SET stopped_at = now(), last_beat_at = now(), jobs = ${JSON.stringify(jobs)}::jsonb
          WHERE instance_id = ${instanceId}`
    })

    const listRows = SqlSchema.findAll({
      Request: Schema.Int,
      Result: DaemonRow,
      execute: (limit) =>
        sql`SELECT instance_id, host, pid, started_at, last_beat_at, interval_seconds, stopped_at, jobs,
            EXTRACT(EPOCH FROM now() - last_beat_at)::float8 AS seconds_since_beat,
            (stopped_at IS NULL AND last_beat_at > now() - make_interval(secs => ${MISSED_BEATS} * interval_seconds)) AS alive
          FROM daemon_heartbeats ORDER BY last_beat_at DESC LIMIT ${limit}`
    })

    const pruneRows = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Schema.Struct({ n: Schema.Int }),
      execute: (days) =>
        sql`WITH gone AS (DELETE FROM daemon_heartbeats WHERE last_beat_at < now() - make_interval(days => ${days}) RETURNING 1)
          SELECT count(*)::int AS n FROM gone`
    })

    return {
      /** Writes this daemon's beat (creating its row on the first one). */
      beat: (beat: typeof Beat.Type) => sqlEdge(upsert(beat)),
      /** A clean stop: the row stays, marked stopped, with the jobs' final record. */
      stop: (instanceId: string, jobs: typeof Jobs.Type) => sqlEdge(markStopped({ instanceId, jobs })),
      /** The daemons that beat most recently, alive or not. */
      list: (limit: number) => sqlEdge(listRows(limit)),
      /** Forgets daemons that have not beaten for `days` days; how many. */
      prune: (days: number) => Effect.map(sqlEdge(pruneRows(days)), (r) => r.n)
    } as const
  })
}) {
  static readonly layer = Layer.effect(DaemonsRepo, DaemonsRepo.make)
}
