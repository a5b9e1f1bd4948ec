// The whole Open API: every group, the signing middleware and the error envelopes. The server,
// the typed client, the OpenAPI document and the tests all derive from this value.
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"

import { ActivitiesApi } from "./Activities.js"
import { Signed } from "./Auth.js"
import { CompaniesApi } from "./Companies.js"
import { InternalErrorEnvelope } from "./Errors.js"
import { EventsApi } from "./Events.js"
import { FollowUpsApi } from "./FollowUps.js"
import { GuestsApi } from "./Guests.js"
import { ImageBlacklistApi } from "./ImageBlacklist.js"
import { MatchesApi } from "./Matches.js"
import { MatchmakersApi } from "./Matchmakers.js"
import { MembershipsApi } from "./Memberships.js"
import { SystemApi } from "./System.js"
import { WorkGroupsApi } from "./WorkGroups.js"
import { WorkWechatsApi } from "./WorkWechats.js"

export const API_PREFIX = "/api/open/v1" as const

const description = `Open interface of the matchmaking platform.

Every response is the envelope {code, message, data}; the HTTP status equals code. Errors carry
data.error, a stable reason to switch on; each operation lists the statuses it can answer.

Signing: every endpoint except GET /api/open/v1/time needs four headers (the security schemes
AppKey, Timestamp, Nonce and Signature, all required together): X-App-Key, X-Timestamp (Unix
seconds, within 300 s of server time; GET /time tells the server's clock), X-Nonce (16-64 of
[A-Za-z0-9_-], fresh on every request and retry) and X-Signature, the lowercase hex
HMAC-SHA256, keyed with the app_secret, of string_to_sign: these seven lines joined by "\\n"
(no trailing newline):

    METHOD          upper case
    PATH            as sent, without the query string, e.g. /api/open/v1/guests/12
    sorted_query    the query pairs form-decoded, re-encoded with RFC 3986 (upper-case %XX),
                    sorted by name then value and joined with & (an empty line without a query)
    app_key
    timestamp       the X-Timestamp value
    nonce           the X-Nonce value
    body_md5        lowercase hex MD5 of the exact body bytes (of zero bytes without a body)

A 401 invalid_signature answer carries data.string_to_sign, the server's canonical string, to
diff against your own. Because every request is signed the same way, a generated client can
sign in one request middleware.`

type Json = Record<string, unknown>
type Responses = Record<string, { description?: string; content?: Record<string, { schema?: Json }> }>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const COMPONENTS = "#/components/schemas/"
const DECODE_ERROR_REF = `${COMPONENTS}HttpApiDecodeError`

/** The four signing headers of DECISIONS §2 as API-key schemes, required together. */
const securitySchemes = {
  AppKey: { type: "apiKey", in: "header", name: "X-App-Key", description: "The client's app_key." },
  Timestamp: {
    type: "apiKey",
    in: "header",
    name: "X-Timestamp",
    description: "Unix time in whole seconds, within 300 s of server time (GET /time gives the server's clock)."
  },
  Nonce: {
    type: "apiKey",
    in: "header",
    name: "X-Nonce",
    description: "16 to 64 characters of [A-Za-z0-9_-], unique per app_key: fresh on every request, retries included."
  },
  Signature: {
    type: "apiKey",
    in: "header",
    name: "X-Signature",
    description: "Lowercase hex HMAC-SHA256 of string_to_sign (see the API description) keyed with the app_secret as UTF-8 bytes."
  }
} as const
/** The requirement of a signed operation: all four schemes together (one object, not four). */
const signed = () => [{ AppKey: [], Timestamp: [], Nonce: [], Signature: [] }]

/** The optional header of every POST that makes a retry safe (DECISIONS §11). */
const idempotencyKeyParameter: Json = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "1 to 255 printable ASCII characters, scoped to the client. The first request with a key runs; a repeat within 24 hours answers the kept response (Idempotent-Replayed: true) without running again. A different request under the same key is 422 idempotency_key_reused; a repeat while the first still runs is 409 idempotency_key_in_progress with Retry-After. A 5xx is not kept.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7e]+$" }
}

/** What each error status means (DECISIONS §1), as the response description. */
const STATUS_DESCRIPTIONS: Record<string, string> = {
  "400": "Bad input or a refused domain rule: data.error is invalid_parameter (with data.issues) or a rule's reason.",
  "401":
    "The signature check failed: missing_credentials, unknown_app_key, app_key_disabled, timestamp_out_of_window, nonce_replayed or invalid_signature.",
  "403": "permission_denied: the client lacks the endpoint's permission (data.required).",
  "404": "not_found: an unknown id in the path or the body (data.resource; data.missing_ids for lists).",
  "409": "task_locked (a follow-up task held by another client) or idempotency_key_in_progress (retry after Retry-After).",
  "413": "payload_too_large: a JSON body over 1 MiB or a card file over 10 MiB.",
  "422": "idempotency_key_reused: this Idempotency-Key was first sent with a different request.",
  "415": "unsupported_media_type: the wrong Content-Type for this endpoint (data.expected).",
  "429": "rate_limited: over the client's rate limit; retry after Retry-After seconds.",
  "500": "internal_error: quote data.request_id when reporting it.",
  "503": "service_unavailable (the database is unreachable for a moment; retry after Retry-After) or parser_unavailable (card parsing)."
}

/**
 * Moves `$defs` nested in the document (a `jsonSchema` annotation that embeds the output of
 * `JSONSchema.make`, as the batch item schemas do) into components/schemas and points their
 * `#/$defs/` references there, so every reference resolves from the document root.
 */
const hoistNestedDefs = (spec: Json, schemas: Record<string, unknown>): void => {
  const hoisted: Record<string, unknown> = {}
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit)
    if (!isObject(node)) return node
    const out: Json = {}
    for (const [key, value] of Object.entries(node)) {
      if (key === "$schema") continue
      if (key === "$defs" && isObject(value)) {
        for (const [name, def] of Object.entries(value)) hoisted[name] = visit(def)
      } else if (key === "$ref" && typeof value === "string" && value.startsWith("#/$defs/")) {
        out[key] = COMPONENTS + value.slice("#/$defs/".length)
      } else {
        out[key] = visit(value)
      }
    }
    return out
  }
  for (const [name, schema] of Object.entries(schemas)) schemas[name] = visit(schema)
  spec.paths = visit(spec.paths)
  for (const [name, def] of Object.entries(hoisted)) {
    const existing = schemas[name]
    if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(def)) {
      // Two different schemas under one identifier would make one of the references wrong.
      throw new Error(`OpenAPI: the nested definition ${name} differs from the component of that name`)
    }
    schemas[name] = def
  }
}

/** Drops component schemas nothing refers to any more (the parts of HttpApi's decode error). */
const pruneUnreferenced = (spec: Json, schemas: Record<string, unknown>): void => {
  const reached = new Set<string>()
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (!isObject(node)) return
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string" && value.startsWith(COMPONENTS)) {
        const name = value.slice(COMPONENTS.length)
        if (!reached.has(name)) {
          reached.add(name)
          visit(schemas[name])
        }
      } else {
        visit(value)
      }
    }
  }
  visit({ ...spec, components: { ...(spec.components as Json), schemas: {} } })
  for (const name of Object.keys(schemas)) if (!reached.has(name)) delete schemas[name]
}

/** HttpApi lists its own decode error under 400; the edge answers BadRequest instead, so drop it. */
const dropDecodeError = (responses: Responses): void => {
  const content = responses["400"]?.content?.["application/json"]
  if (content?.schema === undefined) return
  const members = Array.isArray(content.schema.anyOf) ? (content.schema.anyOf as Array<Json>) : [content.schema]
  const kept = members.filter((s) => s.$ref !== DECODE_ERROR_REF)
  if (kept.length === 0) delete responses["400"]
  else content.schema = kept.length === 1 ? kept[0]! : { anyOf: kept }
}

/**
 * The document as integrators' tools need it:
 * - HttpApi's own decode error is never served (the edge turns it into BadRequest);
 * - the signing middleware declares 413 and 415 for every signed endpoint because it checks the
 *   body of those that take one; an operation without a request body never answers them;
 * - the signing headers are security schemes, required on every operation but GET /time;
 * - nested `$defs` are hoisted so that every `$ref` resolves.
 */
const finishSpec = (spec: Json): Json => {
  const paths = spec.paths as Record<string, Record<string, Json>>
  for (const ops of Object.values(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const responses = op.responses as Responses
      dropDecodeError(responses)
      if (op.requestBody === undefined) {
        delete responses["413"]
        delete responses["415"]
      }
      if (method === "post") {
        op.parameters = [...((op.parameters as Array<Json> | undefined) ?? []), idempotencyKeyParameter]
      } else {
        // Idempotency-Key applies to POSTs only (DECISIONS §11).
        delete responses["409"]
        delete responses["422"]
      }
      for (const [status, response] of Object.entries(responses)) {
        const text = STATUS_DESCRIPTIONS[status]
        if (text !== undefined) response.description = text
      }
      const unsigned = String(op.operationId).startsWith(`${SystemApi.identifier}.`)
      op.security = unsigned ? [] : signed()
    }
  }
  const components = spec.components as { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> }
  delete components.schemas.HttpApiDecodeError
  hoistNestedDefs(spec, components.schemas)
  pruneUnreferenced(spec, components.schemas)
  components.securitySchemes = { ...securitySchemes }
  // The default for tools that read only the top level; GET /time overrides it with none.
  spec.security = signed()
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
  .add(EventsApi.middleware(Signed))
  .add(FollowUpsApi.middleware(Signed))
  .add(ActivitiesApi.middleware(Signed))
  .add(MatchesApi.middleware(Signed))
  .add(MembershipsApi.middleware(Signed))
  // Only what every operation, GET /time included, can answer; the signing middleware adds the
  // statuses of signed operations and endpoints add 404 where an id can be unknown.
  .addError(InternalErrorEnvelope)
  .prefix(API_PREFIX)
  .annotate(OpenApi.Title, "Matchmaking Platform Open API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Description, description)
  // Paths carry the /api/open/v1 prefix, so the server is the host that serves this document.
  .annotate(OpenApi.Servers, [{ url: "/", description: "the host serving this document" }])
  .annotate(OpenApi.Transform, (spec) => {
    // Worked on as plain JSON (the spread gives the index signature the interface lacks), in place.
    const doc: Json = { ...spec }
    finishSpec(doc)
    return Object.assign(spec, doc)
  })
{}
