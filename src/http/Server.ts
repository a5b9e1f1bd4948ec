// The HTTP application: the contract's groups with their handlers and the signed groups'
// middlewares, the edge around every route, the OpenAPI document, the offline docs page, the
// favicon and the probes (/healthz, /readyz, /metrics), on one router, served by HttpRouter.serve.
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Layer from "effect/Layer"

import { API_PREFIX, OpenApiDef } from "../../schema/Api.js"
import { AREA_HANDLERS, mergeAll } from "../areas.js"
import { isProbe, ProbeRoutesLive } from "../observability/health.js"
import { RedactedQueryLive } from "../observability/tracing.js"
import { ROOT_PATH, ROUTER_CONFIG } from "./allow.js"
import { DOCS_PATH, DocsLive } from "./docs.js"
import { EdgeLive } from "./Edge.js"
import { FaviconLive } from "./favicon.js"
import { SignedLive } from "./Signed.js"

/** Every area's handlers (src/areas.ts), with the signed groups' middlewares. */
const HandlersLive = mergeAll(AREA_HANDLERS).pipe(Layer.provide(SignedLive))

/** The contract's routes, with its OpenAPI document beside them. */
export const ApiLive = HttpApiBuilder.layer(OpenApiDef, { openapiPath: `${API_PREFIX}/openapi.json` }).pipe(
  Layer.provide(HandlersLive)
)

/** `GET /` points a person at the docs page (DECISIONS §1). */
const RootLive = HttpRouter.add("GET", ROOT_PATH, HttpServerResponse.redirect(DOCS_PATH, { status: 302 }))

/** The routes on one router: the contract's, the docs, `/`, the favicon, the probes, and the edge around them all. */
const RoutesLive = Layer.mergeAll(ApiLive, DocsLive, RootLive, FaviconLive, ProbeRoutesLive, EdgeLive)

/**
 * Serve the API on whatever HttpServer is provided (Node in production, a test server in tests).
 * The services it runs on come from outside, so that every layer of the process shares them. A
 * path is matched as sent (allow.ts). The edge writes the request log (so not the router's
 * logger), and the entry point logs the address it listens on.
 */
export const HttpAppLive = HttpRouter.serve(RoutesLive, {
  routerConfig: ROUTER_CONFIG,
  disableLogger: true,
  disableListenLog: true
}).pipe(
  // A span per request when traces are exported, except for the probes a supervisor polls; no
  // value of a masked field in its URL.
  Layer.provide([Layer.succeed(HttpMiddleware.TracerDisabledWhen)(isProbe), RedactedQueryLive])
)
