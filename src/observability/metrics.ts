// Every measurement the processes make, as Effect metrics (served in the Prometheus text format by
// prometheus.ts): HTTP requests, authentication failures and rate limiting at the edge, job runs in
// the daemon, and gauges (database pool, queues) refreshed when /metrics is scraped.
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"

/** Seconds: from a health probe (sub-millisecond) to a card upload with OCR (seconds). */
const LATENCY_BOUNDARIES = MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30])

/** Seconds: from a prune that finds nothing to an AI card parse or a slow webhook receiver. */
const JOB_BOUNDARIES = MetricBoundaries.fromIterable([0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120])

export const httpRequests = MetricKey.counter("http_server_requests", {
  description: "HTTP requests answered, by route template, method and status",
  incremental: true
})
export const httpRequestDuration = MetricKey.histogram(
  "http_server_request_duration_seconds",
  LATENCY_BOUNDARIES,
  "Time from the request's arrival to its answer, by route template, method and status"
)
export const authFailures = MetricKey.counter("http_auth_failures", {
  description: "Requests refused by authentication (401), by data.error",
  incremental: true
})
export const rateLimited = MetricKey.counter("http_rate_limited", {
  description: "Requests refused by a client's rate limit (429)",
  incremental: true
})

export const jobRuns = MetricKey.counter("job_runs", {
  description: "Runs of a daemon job (one pass of a periodic job, one task of a queue), by job",
  incremental: true
})
export const jobFailures = MetricKey.counter("job_failures", { description: "Runs of a daemon job that failed, by job", incremental: true })
export const jobDuration = MetricKey.histogram("job_run_duration_seconds", JOB_BOUNDARIES, "Duration of a daemon job's runs, by job")

export const poolConnectionsInUse = MetricKey.gauge("db_pool_connections_in_use", {
  description: "PostgreSQL connections of the pool checked out by a query or transaction, by pool"
})
export const poolConnectionsIdle = MetricKey.gauge("db_pool_connections_idle", {
  description: "Open PostgreSQL connections of the pool that nobody uses, by pool"
})
export const poolWaiting = MetricKey.gauge("db_pool_waiting", {
  description: "Queries and transactions waiting for a connection of the pool, by pool"
})
export const poolConnectionsMax = MetricKey.gauge("db_pool_connections_max", { description: "The pool's connection limit, by pool" })

export const queueDepth = MetricKey.gauge("queue_depth", { description: "Work waiting in a queue (pending or held), by queue" })
export const queueOldestAge = MetricKey.gauge("queue_oldest_age_seconds", {
  description: "How long the oldest waiting work of a queue has waited, by queue (0 when empty)"
})
export const queueFailuresLastHour = MetricKey.gauge("queue_failures_last_hour", {
  description: "Failures a queue recorded in the database during the last hour, by queue"
})
export const queueStatsErrors = MetricKey.counter("queue_stats_errors", {
  description: "Scrapes whose queue statistics could not be read (the queue gauges kept their last values)",
  incremental: true
})

type AnyKey = MetricKey.MetricKey<MetricKeyType.MetricKeyType<number, unknown>>

type Series = Metric.Metric<MetricKeyType.MetricKeyType<number, unknown>, number, unknown>

const seriesCache = new Map<string, Series>()

/**
 * The series of `key` with these labels, made once and kept. The tags go into the metric key
 * itself: `Metric.tagged` would look the series up in the registry again on every update, which
 * costs more than the update (about 10 µs a request).
 */
export const series = (key: AnyKey, labels: Readonly<Record<string, string>> = {}): Series => {
  const id = `${key.name}${JSON.stringify(labels)}`
  let metric = seriesCache.get(id)
  if (metric === undefined) {
    const tags = Object.entries(labels).map(([k, v]) => MetricLabel.make(k, v))
    metric = Metric.fromMetricKey(MetricKey.taggedWithLabels(key, tags))
    seriesCache.set(id, metric)
  }
  return metric
}

/** Adds `value` to a counter, records it in a histogram or sets a gauge, by the key's type. */
export const update = (key: AnyKey, labels: Readonly<Record<string, string>>, value: number): Effect.Effect<void> =>
  Effect.sync(() => series(key, labels).unsafeUpdate(value, []))

/** One answered request: counted and timed under its route template (never its raw path). */
export const recordRequest = (request: {
  readonly route: string
  readonly method: string
  readonly status: number
  readonly seconds: number
  readonly error: string | undefined
}): Effect.Effect<void> =>
  Effect.sync(() => {
    const labels = { route: request.route, method: request.method, status: String(request.status) }
    series(httpRequests, labels).unsafeUpdate(1, [])
    series(httpRequestDuration, labels).unsafeUpdate(request.seconds, [])
    if (request.status === 401) series(authFailures, { error: request.error ?? "unknown" }).unsafeUpdate(1, [])
    if (request.status === 429) series(rateLimited).unsafeUpdate(1, [])
  })
