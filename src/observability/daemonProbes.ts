// The daemon's own small HTTP port (JOBS_PORT, off when unset): /healthz, /readyz and /metrics for
// its supervisor and Prometheus. Nothing else is served there: any other path is the 404 envelope.
import { createServer } from "node:http"

import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Types from "effect/Types"

import { AppConfig } from "../Config.js"
import { NotFound } from "../domain/errors.js"
import { errorResponse } from "./answers.js"
import { ProbeRoutesLive } from "./health.js"

type Handler = Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>

/** The router's own 404 (no route for the path) as the envelope. */
const NotFoundLive = HttpRouter.middleware(
  (app: Handler): Handler =>
    Effect.catchCause(
      app,
      (cause) =>
        cause.reasons.some((r) => r._tag === "Fail" && isRouteNotFound(r.error))
          ? Effect.succeed(errorResponse(new NotFound({ resource: "route", message: "no such endpoint" })))
          : Effect.failCause(cause)
    ),
  { global: true }
)

const isRouteNotFound = (u: unknown): boolean =>
  typeof u === "object" && u !== null && "reason" in u && typeof u.reason === "object" && u.reason !== null &&
  "_tag" in u.reason && u.reason._tag === "RouteNotFound"

export const DaemonProbesLive = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    Option.match(config.jobsPort, {
      onNone: () => Layer.empty,
      onSome: (port) =>
        HttpRouter.serve(Layer.mergeAll(ProbeRoutesLive, NotFoundLive), { disableLogger: true }).pipe(
          Layer.provide(NodeHttpServer.layer(createServer, { port, host: config.host })),
          // Every request here is a probe: no request spans.
          Layer.provide(Layer.succeed(HttpMiddleware.TracerDisabledWhen)(() => true))
        )
    }))
)
