// `npm run bench` (observability): what measuring costs. The edge's per-request hook (route
// template + counter + histogram) beside a floor measured in the same run, a signed GET of the
// API; and a /metrics scrape (pool gauges, queue statistics from the database, collection and
// serialisation) beside its floor, the queue statistics' SQL alone. Uses the bench database.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { appConfigWith } from "../src/Config.js"
import { observeRequest } from "../src/http/observe.js"
import { MetricsExporter } from "../src/observability/prometheus.js"
import { MonitoringRepo } from "../src/repos/MonitoringRepo.js"
import { log, percentile, runBench, timeCalls } from "./support.js"

const HOOKS = Number(process.env.BENCH_HOOKS ?? 200_000)
const CALLS = Number(process.env.BENCH_CALLS ?? 500)

await runBench(["open:company:read"], (api) =>
  Effect.gen(function*() {
    log("bench: the per-request metrics hook…")
    const hook = Effect.gen(function*() {
      for (let i = 0; i < HOOKS; i++) {
        yield* observeRequest({
          method: "GET",
          url: `/api/open/v1/companies/${i}?page=1`,
          status: i % 10 === 0 ? 404 : 200,
          startedAt: performance.now(),
          error: undefined
        })
      }
      // As at the edge, inside the request's span (its route is set on the span).
    }).pipe(Effect.withSpan("bench"))
    for (let warm = 0; warm < 2; warm++) yield* hook
    const t0 = performance.now()
    yield* hook
    const hookUs = ((performance.now() - t0) * 1000) / HOOKS

    log("bench: signed GET /api/open/v1/companies (the floor)…")
    const request = yield* timeCalls(Effect.orDie(api.companies.list({ query: {} })), CALLS, 50)
    const requestUs = percentile(request.times, 50) * 1000

    log("bench: a /metrics scrape and the queue statistics' SQL alone…")
    const exporter = yield* MetricsExporter
    const repo = yield* MonitoringRepo
    const scrape = yield* timeCalls(exporter.scrape, Math.min(CALLS, 200), 10)
    const health = yield* timeCalls(Effect.orDie(repo.queueStats), Math.min(CALLS, 200), 10)

    process.stdout.write("\nObservability: what measuring costs (medians; floor measured in the same run)\n")
    console.table([
      {
        scenario: "metrics hook per request vs a signed GET /companies",
        service_us: Number(hookUs.toFixed(2)),
        floor_us: Number(requestUs.toFixed(0)),
        ratio: Number((hookUs / requestUs).toFixed(4))
      },
      {
        scenario: "a /metrics scrape vs its queue statistics SQL alone",
        service_us: Number((percentile(scrape.times, 50) * 1000).toFixed(0)),
        floor_us: Number((percentile(health.times, 50) * 1000).toFixed(0)),
        ratio: Number((percentile(scrape.times, 50) / percentile(health.times, 50)).toFixed(2))
      }
    ])
  }).pipe(Effect.provide(Layer.mergeAll(MetricsExporter.layer, MonitoringRepo.layer).pipe(Layer.provide(appConfigWith({}))))))

process.exit(0)
