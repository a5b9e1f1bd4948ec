// Which methods a path is served with, for the 405 answer of DECISIONS §1: a request whose path
// exists with other methods gets `405 method_not_allowed` with `Allow` and `data.allow`. Matched
// by the same router (and configuration) as the requests themselves, over every route the server
// has: the contract's, the docs page, the OpenAPI document, the probes, `/` and the favicon.
import * as FindMyWay from "effect/http/FindMyWay"

import { API_PREFIX } from "../../schema/Api.js"
import { MethodNotAllowed } from "../../schema/EdgeErrors.js"
import { clip } from "../domain/text.js"
import { PROBE_PATHS } from "../observability/health.js"
import { DOCS_PATH } from "./docs.js"
import { FAVICON_PATH } from "./favicon.js"
import { ROUTES } from "./routes.js"

/**
 * The router's configuration (HttpRouter.serve's `routerConfig`): a path is matched as sent, not
 * after folding case, duplicate slashes or a trailing slash into another path.
 */
export const ROUTER_CONFIG: Partial<FindMyWay.RouterConfig> = {
  caseSensitive: true,
  ignoreDuplicateSlashes: false,
  ignoreTrailingSlash: false
}

/** The path `/` (it redirects to the docs page). */
export const ROOT_PATH = "/"

const ROUTE_KEYS: ReadonlyArray<string> = [
  ...ROUTES.keys(),
  `GET ${DOCS_PATH}`,
  `GET ${ROOT_PATH}`,
  `GET ${FAVICON_PATH}`,
  `GET ${API_PREFIX}/openapi.json`,
  ...PROBE_PATHS.map((path) => `GET ${path}`)
]

const router = FindMyWay.make<true>(ROUTER_CONFIG)
const methods = new Set<string>()
for (const key of ROUTE_KEYS) {
  const space = key.indexOf(" ")
  const method = key.slice(0, space)
  methods.add(method)
  router.on(method, key.slice(space + 1) as FindMyWay.PathInput, true)
}
// The router answers HEAD with a GET route.
const ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
const CANDIDATES = ORDER.filter((m) => methods.has(m) || (m === "HEAD" && methods.has("GET")))

/** The methods `url` (a request target, its query ignored) is served with; empty for an unknown path. */
export const allowedMethods = (url: string): ReadonlyArray<string> =>
  CANDIDATES.filter((method) => router.find(method === "HEAD" ? "GET" : method, url) !== undefined)

/** A `;` or `#` in the path: the router would cut the path there and match what comes before. */
export const hasPathDelimiter = (url: string): boolean => {
  const query = url.indexOf("?")
  const path = query === -1 ? url : url.slice(0, query)
  return path.includes(";") || path.includes("#")
}

export const methodNotAllowed = (method: string, allow: ReadonlyArray<string>): MethodNotAllowed =>
  new MethodNotAllowed({
    message: allow.length === 0
      ? `${clip(method, 32)} is not served here`
      : `${clip(method, 32)} is not served on this path; it is served with ${allow.join(", ")}`,
    allow
  })
