// Unsigned helper endpoints: server time for clock correction (DECISIONS §2).
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"

import * as Area from "./Area.js"
import { Envelope, Timestamp } from "./Common.js"
import { ErrorEnvelopes, TransportErrorEnvelopes } from "./Errors.js"

export const ServerTime = Schema.Struct({
  timestamp: Schema.Int.annotate({ description: "Unix seconds" }),
  time: Timestamp
}).annotate({ identifier: "ServerTime" })

export class SystemApi extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("time", "/time", {
      disableCodecs: true,
      success: Envelope(ServerTime, "ServerTimeEnvelope"),
      // Signed operations declare their 500 through the Signed middleware.
      error: [...TransportErrorEnvelopes, ErrorEnvelopes.InternalError]
    })
      .annotate(OpenApi.Summary, "Server time")
      .annotate(
        OpenApi.Description,
        "Unsigned. The server's clock as Unix seconds and platform time, so a client can correct the X-Timestamp it signs."
      )
  )
  .annotate(OpenApi.Description, "Unsigned helpers for integrators.")
{}

/** The area: the group, how it is signed, and the names it owns. */
export const SystemArea = Area.unsigned(SystemApi, { permissions: [], resources: ["route"] })

// The resource names this area's 404s carry (`resources` above), for the domain's `NotFound`.
declare module "../src/domain/errors.js" {
  interface ResourceNames {
    readonly route: true
  }
}
