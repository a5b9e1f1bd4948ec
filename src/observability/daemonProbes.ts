// The daemon's own small HTTP port (JOBS_PORT, off when unset): /healthz, /readyz and /metrics for
// its supervisor and Prometheus. Nothing else is served there.
import { createServer } from "node:http"

import { HttpMiddleware, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Option, Schema } from "effect"

import { AnyErrorEnvelope, NotFound } from "../../schema/Errors.js"
import { AppConfig } from "../Config.js"
import { probeRouter, ProbeServicesLive } from "./health.js"

const notFound = HttpServerResponse.unsafeJson(
  Schema.encodeSync(AnyErrorEnvelope)(new NotFound({ error: "not_found", resource: "route", message: "no such endpoint" })),
  { status: 404 }
)

const app = Effect.catchTag(probeRouter, "RouteNotFound", () => Effect.succeed(notFound))

export const DaemonProbesLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.jobsPort, {
      onNone: () => Layer.empty,
      onSome: (port) =>
        HttpServer.serve(app).pipe(
          HttpServer.withLogAddress,
          Layer.provide(NodeHttpServer.layer(createServer, { port, host: config.host })),
          Layer.provide(ProbeServicesLive),
          // Every request here is a probe: no request spans.
          HttpMiddleware.withTracerDisabledWhen(() => true)
        )
    }))
)
