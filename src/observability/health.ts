// The probes a supervisor calls, the same on the API and the daemon: GET /healthz (alive: the
// process answers), GET /readyz (ready: every migration of this build applied and the database
// answering within READINESS_TIMEOUT_MS; else 503 service_unavailable) and GET /metrics. Unsigned,
// outside /api/open/v1, in the envelope (except /metrics, which is Prometheus text).
import { readdirSync } from "node:fs"

import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"

import { ServiceUnavailable } from "../../schema/EdgeErrors.js"
import { AppConfig } from "../Config.js"
import { MonitoringRepo } from "../repos/MonitoringRepo.js"
import { DatabaseTimeout } from "../repos/sqlHelpers.js"
import { MIGRATIONS_DIR } from "../sql/Sql.js"
import { errorResponse } from "./answers.js"
import { MetricsExporter, PROMETHEUS_CONTENT_TYPE } from "./prometheus.js"

/** The probe paths: no signature, no rate limit, request logs at Debug, no trace. */
export const PROBE_PATHS: ReadonlyArray<string> = ["/healthz", "/readyz", "/metrics"]

/** A request to one of the probes (the query string aside). */
export const isProbe = (request: HttpServerRequest.HttpServerRequest): boolean => PROBE_PATHS.includes(request.url.split("?")[0]!)

/** The migrations this build ships (`NNNN_name.sql`), by id. */
const shippedMigrations = (): ReadonlyMap<number, string> =>
  new Map(
    readdirSync(MIGRATIONS_DIR).flatMap((file) => {
      const m = /^(\d+)_(.+)\.sql$/.exec(file)
      return m === null ? [] : [[Number(m[1]), file.slice(0, -4)] as const]
    })
  )

export interface ReadyReport {
  readonly status: "ready"
  readonly migrations: number
  readonly database_ms: number
}

export class Readiness extends Context.Service<Readiness, {
  /** Ready, or the 503 that says why not. */
  readonly check: Effect.Effect<ReadyReport, ServiceUnavailable>
}>()("Observability/Readiness") {
  static readonly layerWithoutDependencies = Layer.effect(
    Readiness,
    Effect.gen(function*() {
      const repo = yield* MonitoringRepo
      const config = yield* AppConfig
      const shipped = shippedMigrations()
      const notReady = (message: string) => new ServiceUnavailable({ message, retry_after: 2 })

      const check: Effect.Effect<ReadyReport, ServiceUnavailable> = Effect.gen(function*() {
        const started = performance.now()
        // A timeout is "not reachable" too: what a supervisor needs is that the database is not there.
        // The repository's deadline, shortened, answers at once when it passes (the statement is
        // given up in the background), where Effect.timeout would wait for its cancellation.
        const applied = yield* repo.appliedMigrations.pipe(
          Effect.provideService(DatabaseTimeout, Duration.millis(config.readinessTimeoutMs)),
          Effect.catchCause(() => Effect.fail(notReady("the database is not reachable or its migrations table cannot be read")))
        )
        const databaseMs = Math.round(performance.now() - started)
        const have = new Set(applied)
        const missing = [...shipped].filter(([id]) => !have.has(id)).map(([, name]) => name)
        if (missing.length > 0) return yield* Effect.fail(notReady(`migrations not applied: ${missing.join(", ")}`))
        return { status: "ready", migrations: shipped.size, database_ms: databaseMs } as const
      })
      return { check }
    })
  )
  static readonly layer = Readiness.layerWithoutDependencies.pipe(Layer.provide(MonitoringRepo.layer))
}

const ok = (data: unknown) => HttpServerResponse.jsonUnsafe({ code: 200, message: "ok", data })

const started = Date.now()

/** GET /healthz: the process runs and its event loop answers; nothing else is asked. */
export const healthz = Effect.sync(() => ok({ status: "alive", uptime_seconds: Math.floor((Date.now() - started) / 1000) }))

/** GET /readyz: 200 when ready, else 503 `service_unavailable` saying why (with Retry-After: 2). */
export const readyz = Readiness.use((r) => r.check.pipe(Effect.match({ onSuccess: ok, onFailure: errorResponse })))

/** GET /metrics: every metric in the Prometheus text format. */
export const metrics = MetricsExporter.use((m) =>
  Effect.map(m.scrape, (text) => HttpServerResponse.text(text, { contentType: PROMETHEUS_CONTENT_TYPE }))
)

// Probes are polled every few seconds: the SQL spans of /readyz and /metrics would only drown the
// traces that matter (the request span itself is left out by the server, see Server.ts).
const untraced = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.withTracerEnabled(self, false)

/** What the probes need, over a SqlClient and AppConfig. */
export const ProbeServicesLive = Layer.mergeAll(Readiness.layer, MetricsExporter.layer)

/** The three probes on the router they are served by (the API's, beside its routes; the daemon's own). */
export const ProbeRoutesLive = HttpRouter.use(Effect.fnUntraced(function*(router: HttpRouter.HttpRouter) {
  const context = yield* Effect.context<Readiness | MetricsExporter>()
  yield* router.add("GET", "/healthz", healthz)
  yield* router.add("GET", "/readyz", untraced(Effect.provideContext(readyz, context)))
  yield* router.add("GET", "/metrics", untraced(Effect.provideContext(metrics, context)))
})).pipe(Layer.provide(ProbeServicesLive))
