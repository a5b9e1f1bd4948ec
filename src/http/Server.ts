// The HTTP application: the contract's groups with their handlers, the signature middleware, the
// edge, the OpenAPI document and the offline docs page.
import { HttpApiBuilder, HttpApiScalar } from "@effect/platform"
import { Layer } from "effect"

import { API_PREFIX, OpenApiDef } from "../../schema/Api.js"
import { EdgeLive } from "./Edge.js"
import { CompaniesHandlers } from "./handlers/Companies.js"
import { GuestsHandlers } from "./handlers/Guests.js"
import { ImageBlacklistHandlers } from "./handlers/ImageBlacklist.js"
import { MatchmakersHandlers } from "./handlers/Matchmakers.js"
import { SystemHandlers } from "./handlers/System.js"
import { WorkGroupsHandlers } from "./handlers/WorkGroups.js"
import { WorkWechatsHandlers } from "./handlers/WorkWechats.js"
import { SignedLive } from "./Signed.js"

/** The handler registry: one line per group of the contract. */
export const ApiLive = HttpApiBuilder.api(OpenApiDef).pipe(
  Layer.provide([
    SystemHandlers,
    MatchmakersHandlers,
    GuestsHandlers,
    WorkWechatsHandlers,
    WorkGroupsHandlers,
    ImageBlacklistHandlers,
    CompaniesHandlers
  ]),
  Layer.provide(SignedLive)
)

/** Serve the API on whatever HttpServer is provided (Node in production, a test server in tests). */
export const HttpAppLive = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiScalar.layer({ path: "/docs", scalar: { hideTestRequestButton: true } })),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: `${API_PREFIX}/openapi.json` })),
  Layer.provide(EdgeLive),
  Layer.provide(ApiLive)
)
