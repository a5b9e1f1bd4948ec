// GET /metrics of both processes: Effect's metrics (metrics.ts) in the Prometheus text format
// (effect's PrometheusMetrics formatter, every family with its help text). The gauges that describe
// state elsewhere (pool, queues, the events feed's lag) are refreshed per scrape.
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"

import { AppConfig } from "../Config.js"
import { FeedLagRepo } from "../repos/FeedLagRepo.js"
import { MonitoringRepo } from "../repos/MonitoringRepo.js"
import {
  feedEventsWaiting,
  feedLagErrors,
  feedOldestTransactionAge,
  queueDepth,
  queueFailuresLastHour,
  queueOldestAge,
  queueStatsErrors,
  update
} from "./metrics.js"
import { refreshPoolGauges } from "./pgPool.js"

/** The media type of the Prometheus text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

export class MetricsExporter extends Context.Service<MetricsExporter, {
  /** Every metric of this process in the Prometheus text format, gauges refreshed first. */
  readonly scrape: Effect.Effect<string>
}>()("Observability/MetricsExporter") {
  static readonly layerWithoutDependencies = Layer.effect(
    MetricsExporter,
    Effect.gen(function*() {
      const repo = yield* MonitoringRepo
      const feedLag = yield* FeedLagRepo
      const config = yield* AppConfig
      const pg = yield* PgClient.PgClient
      const timeout = config.readinessTimeoutMs

      /** Sets the queue gauges from the database; a scrape never fails on them (they keep their last values). */
      const refreshQueueGauges = repo.queueStats.pipe(
        Effect.timeout(timeout),
        Effect.flatMap((stats) =>
          Effect.forEach(stats, (s) =>
            Effect.all([
              update(queueDepth, { queue: s.queue }, s.depth),
              update(queueOldestAge, { queue: s.queue }, s.oldest_age_seconds),
              update(queueFailuresLastHour, { queue: s.queue }, s.failures_last_hour)
            ], { discard: true }), { discard: true })
        ),
        Effect.catchCause((cause) =>
          Effect.andThen(
            update(queueStatsErrors, {}, 1),
            Effect.logWarning("queue statistics could not be read for /metrics", Cause.pretty(cause))
          )
        )
      )

      /** Sets the feed's lag gauges; a scrape never fails on them (they keep their last values). */
      const refreshFeedLag = feedLag.read.pipe(
        Effect.timeout(timeout),
        Effect.flatMap((lag) =>
          Effect.all([
            update(feedOldestTransactionAge, {}, lag.oldest_transaction_seconds),
            update(feedEventsWaiting, {}, lag.events_waiting)
          ], { discard: true })
        ),
        Effect.catchCause((cause) =>
          Effect.andThen(
            update(feedLagErrors, {}, 1),
            Effect.logWarning("the events feed's lag could not be read for /metrics", Cause.pretty(cause))
          )
        )
      )

      /** The pool gauges keep their last values when the database does not answer. */
      const refreshPool = refreshPoolGauges.pipe(
        Effect.provideService(PgClient.PgClient, pg),
        Effect.timeout(timeout),
        Effect.catchCause((cause) => Effect.logDebug("pool statistics could not be read for /metrics", Cause.pretty(cause)))
      )

      const scrape = Effect.gen(function*() {
        yield* Effect.all([refreshPool, refreshQueueGauges, refreshFeedLag], { concurrency: 3, discard: true })
        return yield* PrometheusMetrics.format()
      })

      return { scrape }
    })
  )
  static readonly layer = MetricsExporter.layerWithoutDependencies.pipe(
    Layer.provide(Layer.merge(MonitoringRepo.layer, FeedLagRepo.layer))
  )
}
