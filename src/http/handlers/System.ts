// Unsigned helpers: the server time for clock correction (DECISIONS §2).
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

import { OpenApiDef } from "../../../schema/Api.js"
import { AppConfig } from "../../Config.js"
import { formatTimestamp } from "../../domain/time.js"

export const SystemHandlers = HttpApiBuilder.group(OpenApiDef, "system", (handlers) =>
  Effect.gen(function*() {
    const { timeZone } = yield* AppConfig
    return handlers.handle("time", () =>
      Effect.map(Clock.currentTimeMillis, (ms) => ({
        timestamp: Math.floor(ms / 1000),
        time: formatTimestamp(new Date(ms), timeZone)
      })))
  }))
