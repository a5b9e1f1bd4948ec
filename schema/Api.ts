// The whole Open API: every group, the signing middleware and the error envelopes. The server,
// the typed client, the OpenAPI document and the tests all derive from this value.
import { HttpApi, OpenApi } from "@effect/platform"
import { Signed } from "./Auth.js"
import { CompaniesApi } from "./Companies.js"
import {
  BadRequestEnvelope,
  ForbiddenEnvelope,
  InternalErrorEnvelope,
  NotFoundEnvelope,
  PayloadTooLargeEnvelope,
  TooManyRequestsEnvelope,
  UnauthorizedEnvelope,
  UnsupportedMediaTypeEnvelope
} from "./Errors.js"
import { MatchmakersApi } from "./Matchmakers.js"
import { SystemApi } from "./System.js"

export const API_PREFIX = "/api/open/v1" as const

const description = `Open interface of the matchmaking platform.

Every response is the envelope {code, message, data}; the HTTP status equals code. Errors carry
data.error, a stable reason. Every endpoint except /time needs the signing headers X-App-Key,
X-Timestamp (Unix seconds), X-Nonce (16-64 of [A-Za-z0-9_-]) and X-Signature (hex
HMAC-SHA256 under the app_secret of METHOD, PATH, sorted_query, app_key, timestamp, nonce and
body_md5 joined by newlines).`

export class OpenApiDef extends HttpApi.make("open-api")
  .add(SystemApi)
  .add(MatchmakersApi.middleware(Signed))
  .add(CompaniesApi.middleware(Signed))
  .addError(BadRequestEnvelope)
  .addError(UnauthorizedEnvelope)
  .addError(ForbiddenEnvelope)
  .addError(NotFoundEnvelope)
  .addError(PayloadTooLargeEnvelope)
  .addError(UnsupportedMediaTypeEnvelope)
  .addError(TooManyRequestsEnvelope)
  .addError(InternalErrorEnvelope)
  .prefix(API_PREFIX)
  .annotate(OpenApi.Title, "Matchmaking Platform Open API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Description, description)
{}
