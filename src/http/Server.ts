// The HTTP application: the contract's groups with their handlers, the signature middleware, the
// edge, the OpenAPI document and the offline docs page.
import { HttpApiBuilder, HttpApiScalar } from "@effect/platform"
import { Layer } from "effect"
import { API_PREFIX, OpenApiDef } from "../../schema/Api.js"
import { EdgeLive } from "./Edge.js"
import { CompaniesHandlers, GuestsHandlers, ImageBlacklistHandlers, MatchmakersHandlers, SystemHandlers, WorkGroupsHandlers, WorkWechatsHandlers } from "./Handlers.js"
import { SignedLive } from "./Signed.js"

export const ApiLive = HttpApiBuilder.api(OpenApiDef).pipe(
  Layer.provide([SystemHandlers, MatchmakersHandlers, GuestsHandlers, WorkWechatsHandlers, WorkGroupsHandlers, ImageBlacklistHandlers, CompaniesHandlers]),
  Layer.provide(SignedLive)
)

/** Serve the API on whatever HttpServer is provided (Node in production, a test server in tests). */
export const HttpAppLive = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiScalar.layer({ path: "/docs", scalar: { hideTestRequestButton: true } })),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: `${API_PREFIX}/openapi.json` })),
  Layer.provide(EdgeLive),
  Layer.provide(ApiLive)
)
