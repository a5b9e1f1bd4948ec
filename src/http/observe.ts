// The edge's hook into the measurements: each answered request is counted and timed under its
// route template, its span carries the template, and probe requests log at Debug (a supervisor
// polls them every few seconds; they would drown the request log). The route templates come from
// the contract (routes.ts); observability only knows how to match and count them.
import * as Effect from "effect/Effect"
import type * as LogLevel from "effect/LogLevel"

import { API_PREFIX } from "../../schema/Api.js"
import { pathOf } from "../domain/signing.js"
import { PROBE_PATHS } from "../observability/health.js"
import { recordRequest } from "../observability/metrics.js"
import { methodLabel, routeMatcher } from "../observability/routeTemplate.js"
import { FAVICON_PATH } from "./favicon.js"
import { ROUTES } from "./routes.js"

const routeOf = routeMatcher([
  ...ROUTES.keys(),
  "GET /docs",
  `GET ${FAVICON_PATH}`,
  `GET ${API_PREFIX}/openapi.json`,
  ...PROBE_PATHS.map((path) => `GET ${path}`)
])

/** Info for the API's requests, Debug for the probes. */
export const requestLogLevel = (url: string): LogLevel.Severity => PROBE_PATHS.includes(pathOf(url)) ? "Debug" : "Info"

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
  return Effect.andThen(
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
