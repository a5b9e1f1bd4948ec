// The daemon's own small HTTP port (JOBS_PORT, off when unset): /healthz, /readyz and /metrics for
// its supervisor and Prometheus. Nothing else is served there.
import { createServer } from "node:http"

import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

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
