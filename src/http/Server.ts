// The HTTP application: the contract's groups with their handlers, the signature middleware, the
// edge, the OpenAPI document, the offline docs page and the probes (/healthz, /readyz, /metrics).
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as Layer from "effect/Layer"

import { API_PREFIX, OpenApiDef } from "../../schema/Api.js"
import { ApiProbesLive, isProbe } from "../observability/health.js"
import { tracingState } from "../observability/tracing.js"
import { DocsLive } from "./docs.js"
import { EdgeLive } from "./Edge.js"
import { ActivitiesHandlers } from "./handlers/Activities.js"
import { CompaniesHandlers } from "./handlers/Companies.js"
import { EventsHandlers } from "./handlers/Events.js"
import { FollowUpsHandlers } from "./handlers/FollowUps.js"
import { GuestsHandlers } from "./handlers/Guests.js"
import { ImageBlacklistHandlers } from "./handlers/ImageBlacklist.js"
import { MatchesHandlers } from "./handlers/Matches.js"
import { MatchmakersHandlers } from "./handlers/Matchmakers.js"
import { MembershipsHandlers } from "./handlers/Memberships.js"
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
    CompaniesHandlers,
    EventsHandlers,
    FollowUpsHandlers,
    ActivitiesHandlers,
    MatchesHandlers,
    MembershipsHandlers
  ]),
  Layer.provide(SignedLive)
)

/** Serve the API on whatever HttpServer is provided (Node in production, a test server in tests). */
export const HttpAppLive = HttpApiBuilder.serve().pipe(
  Layer.provide(DocsLive),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: `${API_PREFIX}/openapi.json` })),
  Layer.provide(ApiProbesLive),
  Layer.provide(EdgeLive),
  Layer.provide(ApiLive),
  // A span per request when traces are exported, except for the probes a supervisor polls.
  HttpMiddleware.withTracerDisabledWhen((request) => !tracingState.exporting || isProbe(request))
)
