// The events feed (DECISIONS §9): one service call with the calling client, whose permissions
// filter the events.
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"

import { OpenApiDef } from "../../../schema/Api.js"
import { Caller } from "../../../schema/Auth.js"
import { Events } from "../../services/Events.js"

export const EventsHandlers = HttpApiBuilder.group(OpenApiDef, "events", (handlers) =>
  Effect.gen(function*() {
    const events = yield* Events
    return handlers.handle("list", ({ urlParams }) => Effect.flatMap(Caller, (caller) => events.list(caller, urlParams)))
  }))
