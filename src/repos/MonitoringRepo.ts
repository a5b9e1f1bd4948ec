// What an operator watches, read from the database: the migrations applied (readiness), each
// queue's depth, oldest waiting work and recent failures, held card tasks with their holder's
// liveness, the webhook backlog per client and a count of clients. Read-only, small queries on the
// queues' partial indexes, cheap enough for every scrape.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { MISSED_BEATS } from "./DaemonsRepo.js"
import { IsoTimestamp, PlatformTimeZone } from "./rows.js"
import { sqlEdge } from "./sqlHelpers.js"

/** The queues the statistics cover, in this order. */
export const QUEUES = ["card-tasks", "webhook-deliveries", "follow-up-generate", "time-moves"] as const

export const QueueStat = Schema.Struct({
  queue: Schema.Literals(QUEUES),
  /** Everything waiting: pending, held, and (webhooks) retries scheduled for later. */
  depth: Schema.Int,
  /** What a daemon could take now. */
  due: Schema.Int,
  /** Claimed by a daemon (within or past its lease). */
  held: Schema.Int,
  /** Claimed, but the lease ran out: its daemon died or stalls; another daemon may take it. */
  lease_expired: Schema.Int,
  /** How long the oldest due work has waited (0 when nothing is due). */
  oldest_age_seconds: Schema.Number,
  /**
   * Failures in the last hour: card tasks that ended failed, failed webhook attempts; for the
   * periodic jobs, the failed runs the daemons report in their heartbeats.
   */
  failures_last_hour: Schema.Int
})
export type QueueStat = typeof QueueStat.Type

export const HeldCardTask = Schema.Struct({
  task_id: Schema.String,
  attempts: Schema.Int,
  locked_by: Schema.String,
  lease_until: IsoTimestamp,
  lease_expired: Schema.Boolean,
  waiting_seconds: Schema.Number,
  /** The heartbeat instance whose worker holds it; null when no heartbeat matches. */
  daemon: Schema.NullOr(Schema.String),
  daemon_alive: Schema.Boolean
})
export type HeldCardTask = typeof HeldCardTask.Type

export const WebhookBacklog = Schema.Struct({
  app_key: Schema.String,
  name: Schema.String,
  webhook_enabled: Schema.Boolean,
  pending: Schema.Int,
  due: Schema.Int,
  oldest_due_age_seconds: Schema.Number,
  failed: Schema.Int
})

export const ClientsSummary = Schema.Struct({
  total: Schema.Int,
  active: Schema.Int,
  disabled: Schema.Int,
  masking: Schema.Int,
  webhooks_on: Schema.Int
})

export class MonitoringRepo extends Context.Service<MonitoringRepo>()("Monitoring/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const migrationRows = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ id: Schema.Int }),
      execute: () => sql`SELECT migration_id::int AS id FROM effect_sql_migrations`
    })

    const queueRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: QueueStat,
      execute: (timeZone) =>
        sql`WITH job_failures AS (
            SELECT j.key AS job, sum(COALESCE((j.value->>'failures_last_hour')::int, 0))::int AS n
            FROM daemon_heartbeats h CROSS JOIN LATERAL jsonb_each(h.jobs) j
            WHERE h.last_beat_at > now() - interval '1 hour'
            GROUP BY j.key
          ),
          card AS (
            SELECT count(*)::int AS depth,
              count(*) FILTER (WHERE status = 'pending' OR lease_until < now())::int AS due,
              count(*) FILTER (WHERE status = 'processing')::int AS held,
              count(*) FILTER (WHERE status = 'processing' AND lease_until < now())::int AS lease_expired,
              COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS oldest_age_seconds
            FROM card_tasks WHERE status IN ('pending', 'processing')
          ),
          hook AS (
            SELECT count(*)::int AS depth,
              count(*) FILTER (WHERE next_attempt_at <= now() AND (locked_by IS NULL OR lease_until <= now()))::int AS due,
              count(*) FILTER (WHERE locked_by IS NOT NULL)::int AS held,
              count(*) FILTER (WHERE locked_by IS NOT NULL AND lease_until <= now())::int AS lease_expired,
              COALESCE(EXTRACT(EPOCH FROM now() - min(next_attempt_at)
                FILTER (WHERE next_attempt_at <= now() AND (locked_by IS NULL OR lease_until <= now()))), 0)::float8 AS oldest_age_seconds
            FROM webhook_deliveries WHERE status = 'pending'
          ),
          plans AS (
            SELECT count(*)::int AS depth,
              COALESCE(EXTRACT(EPOCH FROM now() - (min(next_date)::timestamp AT TIME ZONE ${timeZone})), 0)::float8 AS oldest_age_seconds
            FROM follow_up_plans WHERE next_date <= (now() AT TIME ZONE ${timeZone})::date
          ),
          moves AS (
            SELECT
              (SELECT count(*) FROM activities WHERE status = 'registering' AND start_time <= now())
              + (SELECT count(*) FROM activities WHERE status = 'ongoing' AND end_time <= now())
              + (SELECT count(*) FROM memberships WHERE status = 'active' AND expire_at <= now()) AS depth,
              LEAST(
                (SELECT min(start_time) FROM activities WHERE status = 'registering' AND start_time <= now()),
                (SELECT min(end_time) FROM activities WHERE status = 'ongoing' AND end_time <= now()),
                (SELECT min(expire_at) FROM memberships WHERE status = 'active' AND expire_at <= now())
              ) AS oldest
          )
          SELECT 'card-tasks' AS queue, depth, due, held, lease_expired, oldest_age_seconds,
            (SELECT count(*)::int FROM card_tasks WHERE status = 'failed' AND completed_at > now() - interval '1 hour')
              AS failures_last_hour
          FROM card
          UNION ALL
          SELECT 'webhook-deliveries', depth, due, held, lease_expired, oldest_age_seconds,
            (SELECT count(*)::int FROM webhook_attempts WHERE attempted_at > now() - interval '1 hour'
              AND (status_code IS NULL OR status_code NOT BETWEEN 200 AND 299))
          FROM hook
          UNION ALL
          SELECT 'follow-up-generate', depth, depth, 0, 0, oldest_age_seconds,
            COALESCE((SELECT n FROM job_failures WHERE job = 'follow-up-generate'), 0)
          FROM plans
          UNION ALL
          SELECT 'time-moves', depth::int, depth::int, 0, 0, COALESCE(EXTRACT(EPOCH FROM now() - oldest), 0)::float8,
            COALESCE((SELECT n FROM job_failures WHERE job = 'time-moves'), 0)
          FROM moves`
    })

    const heldCardRows = SqlSchema.findAll({
      Request: Schema.Int,
      Result: HeldCardTask,
      execute: (limit) =>
        sql`SELECT t.task_id, t.attempts, t.locked_by, t.lease_until, t.lease_until < now() AS lease_expired,
            EXTRACT(EPOCH FROM now() - t.created_at)::float8 AS waiting_seconds,
            h.instance_id AS daemon,
            COALESCE(h.stopped_at IS NULL
              AND h.last_beat_at > now() - make_interval(secs => ${MISSED_BEATS} * h.interval_seconds), false) AS daemon_alive
          FROM card_tasks t
          LEFT JOIN daemon_heartbeats h ON starts_with(t.locked_by, h.instance_id || ':')
          WHERE t.status = 'processing'
          ORDER BY t.created_at, t.id
          LIMIT ${limit}`
    })

    const backlogRows = SqlSchema.findAll({
      Request: Schema.Void,
      Result: WebhookBacklog,
      execute: () =>
        sql`SELECT c.app_key, c.name, c.webhook_enabled,
            count(*) FILTER (WHERE d.status = 'pending')::int AS pending,
            count(*) FILTER (WHERE d.status = 'pending' AND d.next_attempt_at <= now())::int AS due,
            COALESCE(EXTRACT(EPOCH FROM now() - min(d.next_attempt_at)
              FILTER (WHERE d.status = 'pending' AND d.next_attempt_at <= now())), 0)::float8 AS oldest_due_age_seconds,
            count(*) FILTER (WHERE d.status = 'failed')::int AS failed
          FROM webhook_deliveries d JOIN clients c ON c.id = d.client_id
          WHERE d.status IN ('pending', 'failed')
          GROUP BY c.id
          ORDER BY pending DESC, failed DESC, c.app_key`
    })

    const clientRows = SqlSchema.findOne({
      Request: Schema.Void,
      Result: ClientsSummary,
      execute: () =>
        sql`SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'active')::int AS active,
            count(*) FILTER (WHERE status = 'disabled')::int AS disabled,
            count(*) FILTER (WHERE masking)::int AS masking,
            count(*) FILTER (WHERE webhook_enabled AND webhook_url IS NOT NULL)::int AS webhooks_on
          FROM clients`
    })

    return {
      /** The ids of the migrations the database has applied. */
      appliedMigrations: Effect.map(sqlEdge(migrationRows(undefined)), (rows) => rows.map((r) => r.id)),
      /** Every queue of QUEUES, in that order. */
      queueStats: Effect.flatMap(PlatformTimeZone, (timeZone) => sqlEdge(queueRows(timeZone))),
      /** Card tasks held by a daemon, oldest first, with whether their daemon still beats. */
      heldCardTasks: (limit: number) => sqlEdge(heldCardRows(limit)),
      /** Webhook deliveries waiting or failed, per client (clients with none are left out). */
      webhookBacklog: sqlEdge(backlogRows(undefined)),
      clients: sqlEdge(clientRows(undefined))
    } as const
  })
}) {
  static readonly layer = Layer.effect(MonitoringRepo, MonitoringRepo.make)
}
