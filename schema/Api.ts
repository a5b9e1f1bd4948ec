// The whole Open API: every group, the signing middleware and the error envelopes. The server,
// the typed client, the OpenAPI document and the tests all derive from this value.
import { HttpApi, OpenApi } from "@effect/platform"
import { Signed } from "./Auth.js"
import { CompaniesApi } from "./Companies.js"
import { GuestsApi } from "./Guests.js"
import { ImageBlacklistApi } from "./ImageBlacklist.js"
import {
  BadRequestEnvelope,
  ForbiddenEnvelope,
  InternalErrorEnvelope,
  NotFoundEnvelope,
  PayloadTooLargeEnvelope,
  ServiceUnavailableEnvelope,
  TooManyRequestsEnvelope,
  UnauthorizedEnvelope,
  UnsupportedMediaTypeEnvelope
} from "./Errors.js"
import { MatchmakersApi } from "./Matchmakers.js"
import { SystemApi } from "./System.js"
import { WorkGroupsApi } from "./WorkGroups.js"
import { WorkWechatsApi } from "./WorkWechats.js"

export const API_PREFIX = "/api/open/v1" as const

const description = `Open interface of the matchmaking platform.

Every response is the envelope {code, message, data}; the HTTP status equals code. Errors carry
data.error, a stable reason. Every endpoint except /time needs the signing headers X-App-Key,
X-Timestamp (Unix seconds), X-Nonce (16-64 of [A-Za-z0-9_-]) and X-Signature (hex
HMAC-SHA256 under the app_secret of METHOD, PATH, sorted_query, app_key, timestamp, nonce and
body_md5 joined by newlines).`

type Json = Record<string, unknown>

/**
 * The document as integrators need it: HttpApi's own decode error is never served (the edge
 * turns it into BadRequest), and signed operations list the four signing headers.
 */
const finishSpec = (spec: Json): Json => {
  const paths = spec.paths as Record<string, Record<string, Json>>
  const signingHeaders = [
    ["X-App-Key", "the client's app_key"],
    ["X-Timestamp", "Unix time in whole seconds, within 300 s of server time"],
    ["X-Nonce", "16 to 64 characters of [A-Za-z0-9_-], fresh on every request"],
    ["X-Signature", "lowercase hex HMAC-SHA256 of string_to_sign under the app_secret"]
  ].map(([name, description]) => ({ name, in: "header", required: true, description, schema: { type: "string" } }))
  for (const [path, ops] of Object.entries(paths)) {
    for (const op of Object.values(ops)) {
      const responses = op.responses as Record<string, { description?: string; content?: Record<string, { schema?: Json }> }>
      const schema = responses["400"]?.content?.["application/json"]?.schema
      const anyOf = schema?.anyOf as Array<Json> | undefined
      if (schema && anyOf) {
        const kept = anyOf.filter((s) => s.$ref !== "#/components/schemas/HttpApiDecodeError")
        delete schema.anyOf
        Object.assign(schema, kept.length === 1 ? kept[0] : { anyOf: kept })
        responses["400"]!.description = "BadRequestResponse"
      }
      if (!path.endsWith("/time")) op.parameters = [...((op.parameters as Array<Json>) ?? []), ...signingHeaders]
    }
  }
  const components = spec.components as { schemas: Record<string, unknown> }
  delete components.schemas.HttpApiDecodeError
  return spec
}

export class OpenApiDef extends HttpApi.make("open-api")
  .add(SystemApi)
  .add(MatchmakersApi.middleware(Signed))
  .add(GuestsApi.middleware(Signed))
  .add(WorkWechatsApi.middleware(Signed))
  .add(WorkGroupsApi.middleware(Signed))
  .add(ImageBlacklistApi.middleware(Signed))
  .add(CompaniesApi.middleware(Signed))
  .addError(BadRequestEnvelope)
  .addError(UnauthorizedEnvelope)
  .addError(ForbiddenEnvelope)
  .addError(NotFoundEnvelope)
  .addError(PayloadTooLargeEnvelope)
  .addError(UnsupportedMediaTypeEnvelope)
  .addError(TooManyRequestsEnvelope)
  .addError(InternalErrorEnvelope)
  .addError(ServiceUnavailableEnvelope)
  .prefix(API_PREFIX)
  .annotate(OpenApi.Title, "Matchmaking Platform Open API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Description, description)
  .annotate(OpenApi.Transform, (spec) => finishSpec(spec as unknown as Json) as unknown as typeof spec)
{}
