// The edge's hook into the measurements: each answered request is counted and timed under its
// route template, its span carries the request id and the template, and probe requests log at
// Debug (a supervisor polls them every few seconds; they would drown the request log).
import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"

import { API_PREFIX } from "../../schema/Api.js"
import { ROUTES } from "../http/routes.js"
import { PROBE_PATHS } from "./health.js"
import { recordRequest } from "./metrics.js"
import { methodLabel, routeMatcher } from "./routeTemplate.js"

const routeOf = routeMatcher([
  ...ROUTES.keys(),
  "GET /docs",
  `GET ${API_PREFIX}/openapi.json`,
  ...PROBE_PATHS.map((path) => `GET ${path}`)
])

const pathOf = (url: string): string => url.split("?")[0]!

/** Info for the API's requests, Debug for the probes. */
export const requestLogLevel = (url: string): LogLevel.LogLevel => PROBE_PATHS.includes(pathOf(url)) ? LogLevel.Debug : LogLevel.Info

/** Names the request's span (the server's `http.server` span) with its request id. */
export const annotateRequestSpan = (requestId: string): Effect.Effect<void> => Effect.annotateCurrentSpan("http.request_id", requestId)

/** One answered request: metrics under its route template, and the template on its span. */
export const observeRequest = (request: {
  readonly method: string
  readonly url: string
  readonly status: number
  /** performance.now() when the request arrived. */
  readonly startedAt: number
  /** The response's data.error, if it is an error. */
  readonly error: string | undefined
}): Effect.Effect<void> => {
  const route = routeOf(request.method, request.url)
  return Effect.zipRight(
    Effect.annotateCurrentSpan("http.route", route),
    recordRequest({
      route,
      method: methodLabel(request.method),
      status: request.status,
      seconds: (performance.now() - request.startedAt) / 1000,
      error: request.error
    })
  )
}
