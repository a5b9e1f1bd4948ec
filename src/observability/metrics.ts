// Every measurement the processes make, as Effect metrics (served in the Prometheus text format by
// prometheus.ts): HTTP requests, authentication failures, rate limiting and a masking client's
// duplicate_* refusals at the edge, job runs in the daemon, and gauges (database pool, queues, the
// events feed's lag)
// refreshed when /metrics is scraped. Counters carry the `_total` suffix in their names: the
// exposition prints names as they are.
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"

/** A metric family: its name, kind and help text; each label set is one series of it. */
export interface MetricFamily {
  readonly name: string
  readonly description: string
  readonly kind: "counter" | "gauge" | "histogram"
  /** Histograms: the bucket upper bounds. */
  readonly boundaries?: ReadonlyArray<number>
}

const counter = (name: string, description: string): MetricFamily => ({ name, description, kind: "counter" })
const gauge = (name: string, description: string): MetricFamily => ({ name, description, kind: "gauge" })
const histogram = (name: string, boundaries: ReadonlyArray<number>, description: string): MetricFamily => ({
  name,
  description,
  kind: "histogram",
  boundaries
})

/** Seconds: from a health probe (sub-millisecond) to a card upload with OCR (seconds). */
const LATENCY_BOUNDARIES = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** Seconds: from a prune that finds nothing to an AI card parse or a slow webhook receiver. */
const JOB_BOUNDARIES = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

export const httpRequests = counter(
  "http_server_requests_total",
  "HTTP requests answered, by route template, method and status"
)
export const httpRequestDuration = histogram(
  "http_server_request_duration_seconds",
  LATENCY_BOUNDARIES,
  "Time from the request's arrival to its answer, by route template, method and status"
)
export const authFailures = counter("http_auth_failures_total", "Requests refused by authentication (401), by data.error")
export const rateLimited = counter("http_rate_limited_total", "Requests refused by a client's rate limit (429)")
export const duplicateRefusals = counter(
  "open_duplicate_refusals_total",
  "duplicate_* refusals answered to a masking client, by app_key: trying values one by one tells which exist (an enumeration)"
)

export const jobRuns = counter(
  "job_runs_total",
  "Runs of a daemon job (one pass of a periodic job, one task of a queue), by job"
)
export const jobFailures = counter("job_failures_total", "Runs of a daemon job that failed, by job")
export const jobDuration = histogram("job_run_duration_seconds", JOB_BOUNDARIES, "Duration of a daemon job's runs, by job")

export const poolConnectionsInUse = gauge(
  "db_pool_connections_in_use",
  "PostgreSQL connections of the pool running a statement or holding a transaction, by pool"
)
export const poolConnectionsIdle = gauge("db_pool_connections_idle", "Open PostgreSQL connections of the pool that nobody uses, by pool")
export const poolWaiting = gauge(
  "db_pool_waiting",
  "Connections of the pool whose statement waits for a lock held by another session, by pool"
)
export const poolConnectionsMax = gauge("db_pool_connections_max", "The pool's connection limit, by pool")

export const queueDepth = gauge("queue_depth", "Work waiting in a queue (pending or held), by queue")
export const queueOldestAge = gauge(
  "queue_oldest_age_seconds",
  "How long the oldest waiting work of a queue has waited, by queue (0 when empty)"
)
export const queueFailuresLastHour = gauge(
  "queue_failures_last_hour",
  "Failures a queue recorded in the database during the last hour, by queue"
)
export const queueStatsErrors = counter(
  "queue_stats_errors_total",
  "Scrapes whose queue statistics could not be read (the queue gauges kept their last values)"
)

export const feedOldestTransactionAge = gauge(
  "events_feed_oldest_transaction_seconds",
  "Age of the oldest open transaction that holds the events feed back (any session of the cluster that has written, or a prepared transaction; 0 when none): the feed lists no event committed after it began"
)
export const feedEventsWaiting = gauge(
  "events_feed_waiting_events",
  "Committed events the events feed does not list yet, because an older transaction is still open"
)
export const feedLagErrors = counter(
  "events_feed_lag_errors_total",
  "Scrapes whose feed lag could not be read (the feed gauges kept their last values)"
)

export const partitionAheadSeconds = gauge(
  "partitions_ahead_seconds",
  "How far past now a table kept by partition has partitions, by table, as the daemon's last pass left it: it falls towards 0 while no daemon creates partitions ahead (rows past it go to the DEFAULT partition)"
)
export const partitionRangesHeld = gauge(
  "partitions_expired_held",
  "Ranges of partitions past their retention that the daemon's last pass kept because rows of theirs must outlive it (events with a pending delivery), by policy"
)
export const partitionRowsMoved = counter(
  "partitions_default_rows_moved_total",
  "Rows moved out of a table's DEFAULT partition into the partition created for them (inserted while no partition covered their time), by table"
)

type Series = Metric.Metric<number, unknown>

const seriesCache = new Map<string, Series>()

const makeSeries = (family: MetricFamily, attributes: Readonly<Record<string, string>>): Series => {
  switch (family.kind) {
    case "counter":
      return Metric.counter(family.name, { description: family.description, attributes, incremental: true })
    case "gauge":
      return Metric.gauge(family.name, { description: family.description, attributes })
    case "histogram":
      return Metric.histogram(family.name, {
        description: family.description,
        attributes,
        boundaries: family.boundaries ?? []
      })
  }
}

/** The series of `family` with these labels, made once and kept (a label set is looked up, not rebuilt, per update). */
export const series = (family: MetricFamily, labels: Readonly<Record<string, string>> = {}): Series => {
  const id = `${family.name}${JSON.stringify(labels)}`
  let metric = seriesCache.get(id)
  if (metric === undefined) {
    metric = makeSeries(family, labels)
    seriesCache.set(id, metric)
  }
  return metric
}

/** Adds `value` to a counter, records it in a histogram or sets a gauge, by the family's kind. */
export const update = (family: MetricFamily, labels: Readonly<Record<string, string>>, value: number): Effect.Effect<void> =>
  Metric.update(series(family, labels), value)

/** The request counter and latency series of each route, method and status (a short list: templates, not paths). */
const requestSeries = new Map<string, { readonly count: Series; readonly duration: Series }>()
const requestSeriesOf = (route: string, method: string, status: number) => {
  const key = `${status} ${method} ${route}`
  let found = requestSeries.get(key)
  if (found === undefined) {
    const labels = { route, method, status: String(status) }
    found = { count: series(httpRequests, labels), duration: series(httpRequestDuration, labels) }
    requestSeries.set(key, found)
  }
  return found
}

/** A duplicate_* refusal answered to a masking client (DECISIONS §13). */
export const recordDuplicateRefusal = (appKey: string): Effect.Effect<void> => update(duplicateRefusals, { app_key: appKey }, 1)

/** One answered request: counted and timed under its route template (never its raw path). */
export const recordRequest = (request: {
  readonly route: string
  readonly method: string
  readonly status: number
  readonly seconds: number
  readonly error: string | undefined
}): Effect.Effect<void> =>
  Effect.contextWith((context) => {
    const { count, duration } = requestSeriesOf(request.route, request.method, request.status)
    count.updateUnsafe(1, context)
    duration.updateUnsafe(request.seconds, context)
    if (request.status === 401) series(authFailures, { error: request.error ?? "unknown" }).updateUnsafe(1, context)
    if (request.status === 429) series(rateLimited).updateUnsafe(1, context)
    return Effect.void
  })
