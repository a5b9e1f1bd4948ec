// GET /metrics of both processes: Effect's metrics (metrics.ts) in the Prometheus text format,
// through @effect/opentelemetry's metric producer and the OpenTelemetry Prometheus exporter's
// serializer. The gauges that describe state elsewhere (pool, queues) are refreshed per scrape.
import * as Metrics from "@effect/opentelemetry/Metrics"
import * as Resource from "@effect/opentelemetry/Resource"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"

import { AppConfig } from "../Config.js"
import { MonitoringRepo } from "../repos/MonitoringRepo.js"
import { queueDepth, queueFailuresLastHour, queueOldestAge, queueStatsErrors, update } from "./metrics.js"
import { refreshPoolGauges } from "./pgPool.js"

/** The media type of the Prometheus text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/** Sets the queue gauges from the database; a scrape never fails on them (they keep their last values). */
const refreshQueueGauges = Effect.gen(function*() {
  const repo = yield* MonitoringRepo
  const config = yield* AppConfig
  return yield* repo.queueStats.pipe(
    Effect.timeout(config.readinessTimeoutMs),
    Effect.flatMap((stats) =>
      Effect.forEach(stats, (s) =>
        Effect.all([
          update(queueDepth, { queue: s.queue }, s.depth),
          update(queueOldestAge, { queue: s.queue }, s.oldest_age_seconds),
          update(queueFailuresLastHour, { queue: s.queue }, s.failures_last_hour)
        ], { discard: true }), { discard: true })
    ),
    Effect.catchAllCause((cause) =>
      Effect.zipRight(
        update(queueStatsErrors, {}, 1),
        Effect.logWarning("queue statistics could not be read for /metrics", Cause.pretty(cause))
      )
    )
  )
})

export class MetricsExporter extends Effect.Service<MetricsExporter>()("Observability/MetricsExporter", {
  scoped: Effect.gen(function*() {
    const repo = yield* MonitoringRepo
    const config = yield* AppConfig
    // No HTTP server of its own: the processes serve /metrics on their routers.
    const reader = new PrometheusExporter({ preventServerStart: true })
    const producer = yield* Metrics.makeProducer.pipe(Effect.provide(Resource.layer({ serviceName: "matchmaking-open-api" })))
    yield* Metrics.registerProducer(producer, () => reader)
    // Without the per-series otel_scope_* labels: one producer, nothing to tell apart.
    const serializer = new PrometheusSerializer(undefined, false, undefined, false, true)

    const scrape = Effect.gen(function*() {
      yield* refreshPoolGauges
      yield* refreshQueueGauges.pipe(Effect.provideService(MonitoringRepo, repo), Effect.provideService(AppConfig, config))
      const { errors, resourceMetrics } = yield* Effect.promise(() => reader.collect())
      if (errors.length > 0) yield* Effect.logWarning("metrics collection reported errors", errors.map(String))
      return serializer.serialize(resourceMetrics)
    })

    return { scrape } as const
  }),
  dependencies: [MonitoringRepo.Default]
}) {}
