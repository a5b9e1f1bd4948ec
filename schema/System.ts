// Unsigned helper endpoints: server time for clock correction (DECISIONS §2).
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"

import { Envelope, Timestamp } from "./Common.js"

export const ServerTime = Schema.Struct({
  timestamp: Schema.Int.annotations({ description: "Unix seconds" }),
  time: Timestamp
}).annotations({ identifier: "ServerTime" })

export class SystemApi extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("time", "/time")
      .addSuccess(Envelope(ServerTime, "ServerTimeEnvelope"))
      .annotate(OpenApi.Summary, "Server time")
      .annotate(
        OpenApi.Description,
        "Unsigned. The server's clock as Unix seconds and platform time, so a client can correct the X-Timestamp it signs."
      )
  )
  .annotate(OpenApi.Description, "Unsigned helpers for integrators.")
{}
