// The events feed (DECISIONS §9): one service call with the calling client, whose permissions
// filter the events.
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { Events } from "../../services/Events.js"

export const EventsHandlers = HttpApiBuilder.group(OpenApiDef, "events", (handlers) =>
  Effect.gen(function*() {
    const events = yield* Events
    return handlers.handle("list", ({ query }) => Effect.flatMap(Caller, (caller) => events.list(caller, query)))
  }))
