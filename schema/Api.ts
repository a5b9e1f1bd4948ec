// The whole Open API: every group, the signing middleware and the error envelopes. The server,
// the typed client, the OpenAPI document and the tests all derive from this value.
import * as HttpApi from "effect/http-api/HttpApi"
import * as OpenApi from "effect/http-api/OpenApi"

import { ActivitiesArea } from "./Activities.js"
import type * as Area from "./Area.js"
import { CompaniesArea } from "./Companies.js"
import type { ResourceName } from "./Errors.js"
import { EventsArea } from "./Events.js"
import { FollowUpsArea } from "./FollowUps.js"
import { GuestBatchItemSchemas, GuestsArea } from "./Guests.js"
import { ImageBlacklistArea } from "./ImageBlacklist.js"
import { MatchesArea } from "./Matches.js"
import { MatchmakersArea } from "./Matchmakers.js"
import { MembershipsArea } from "./Memberships.js"
import { SelfServiceArea } from "./SelfService.js"
import { SystemApi, SystemArea } from "./System.js"
import { WorkGroupsArea } from "./WorkGroups.js"
import { WorkWechatsArea } from "./WorkWechats.js"

/**
 * The contract's registry: every area once, in the order of the document. Adding an area is its
 * schema file (which exports its `Area`) and one line here; src/areas.ts then fails to compile
 * until the area's handlers and services are registered there.
 */
export const AREAS = [
  SystemArea,
  MatchmakersArea,
  GuestsArea,
  WorkWechatsArea,
  WorkGroupsArea,
  ImageBlacklistArea,
  CompaniesArea,
  EventsArea,
  FollowUpsArea,
  ActivitiesArea,
  MatchesArea,
  MembershipsArea,
  SelfServiceArea
] as const satisfies ReadonlyArray<Area.Any>

type Areas = typeof AREAS
type GroupsOf<T extends ReadonlyArray<Area.Any>> = { readonly [K in keyof T]: T[K]["group"] }
const groupsOf = <T extends ReadonlyArray<Area.Any>>(areas: T): GroupsOf<T> => areas.map((a) => a.group) as GroupsOf<T>

// Every resource name belongs to an area: a name no area claims does not compile. (Permission
// strings need no such check: schema/Permissions.ts derives them from the areas.)
type Unclaimed<All, Claimed> = [Exclude<All, Claimed>] extends [never] ? true : Exclude<All, Claimed>
export const EVERY_RESOURCE_CLAIMED: Unclaimed<ResourceName, Areas[number]["resources"][number]> = true

/** Every resource name (`data.resource` of a 404), in the order of the areas: the document's enum. */
export const RESOURCE_NAMES: ReadonlyArray<ResourceName> = AREAS.flatMap((area): ReadonlyArray<ResourceName> => area.resources)

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

Besides what each operation lists: a path that exists with other methods answers 405
method_not_allowed, with an Allow header and data.allow (TRACE, CONNECT and unknown methods
too); a path is matched as sent, and a path with ";" or "#" is 400 invalid_parameter; GET /
redirects (302) to /docs. Every one of these answers is the envelope.

A 401 invalid_signature answer carries data.string_to_sign, the server's canonical string, to
diff against your own. Because every request is signed the same way, a generated client can
sign in one request middleware.`

type Json = Record<string, unknown>
type Responses = Record<string, { description?: string; content?: Record<string, { schema?: Json }> }>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const COMPONENTS = "#/components/schemas/"

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
    "1 to 255 printable ASCII characters, scoped to the client. The first request with a key runs; a repeat within 24 hours answers the kept response (Idempotent-Replayed: true) without running again. A different request under the same key is 422 idempotency_key_reused; a repeat while the first still runs is 409 idempotency_key_in_progress with Retry-After. A 5xx is not kept, nor a 403 or 429 (a refusal of who sent it or when: the same key runs once it no longer applies).",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7e]+$" }
}

/** What each error status means (DECISIONS §1), as the response description. */
const STATUS_DESCRIPTIONS: Record<string, string> = {
  "400":
    "Bad input or a refused domain rule: data.error is invalid_parameter (with data.issues; a request the HTTP parser refuses names data.issues[].path request) or a rule's reason.",
  "401":
    "The signature check failed: missing_credentials, unknown_app_key, app_key_disabled, timestamp_out_of_window, nonce_replayed, invalid_signature or signed_before_restart (signed before a database restart: sign again).",
  "403":
    "permission_denied: the client lacks the endpoint's permission (data.required); on the self-service writes that change credentials or the webhook, deprecated_secret: signed with the previous app_secret during its grace (sign with the current one, data.hint).",
  "404": "not_found: an unknown id in the path or the body (data.resource; data.missing_ids for lists).",
  "409": "task_locked (a follow-up task held by another client) or idempotency_key_in_progress (retry after Retry-After).",
  "408": "request_timeout: the request did not arrive within the server's request timeout.",
  "413": "payload_too_large: a body over 1 MiB (any method but GET; a card file over 10 MiB).",
  "417": "expectation_failed: an Expect header other than 100-continue.",
  "431": "headers_too_large: the request line and headers over 16 KiB (data.limit).",
  "422": "idempotency_key_reused: this Idempotency-Key was first sent with a different request.",
  "415": "unsupported_media_type: the wrong Content-Type for this endpoint (data.expected).",
  "429": "rate_limited: over the client's rate limit; retry after Retry-After seconds.",
  "500": "internal_error: quote data.request_id when reporting it.",
  "503": "service_unavailable (the database is unreachable for a moment; retry after Retry-After) or parser_unavailable (card parsing)."
}

/**
 * The resource names of the 404 envelope as the areas list them: the domain's schema checks only
 * a name's form (its names are merged in by the areas, src/domain/errors.ts), the document names
 * each. Missing, the envelope was renamed or reshaped: stop rather than serve a document without.
 */
const nameResources = (schemas: Record<string, unknown>): void => {
  const data = (schemas.NotFoundResponse as { properties?: { data?: { properties?: Record<string, Json> } } } | undefined)
    ?.properties?.data?.properties
  const resource = data?.resource
  if (resource === undefined) throw new Error("the OpenAPI document has no NotFoundResponse with data.resource")
  resource.enum = [...RESOURCE_NAMES]
}

/** Drops component schemas nothing refers to any more. */
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

/**
 * Every object open to properties it does not list (SPEC §9: adding fields does not change the
 * version, and clients ignore unknown response fields; DECISIONS §1: request bodies ignore unknown
 * keys). Effect writes `additionalProperties: false` on every struct; that would make a strict
 * generated client refuse the first field added, and would misstate what the server accepts.
 */
const openObjects = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(openObjects)
  if (!isObject(node)) return
  if (node.additionalProperties === false) delete node.additionalProperties
  for (const value of Object.values(node)) openObjects(value)
}

/**
 * A query or path parameter as tools expect it: never null (an optional parameter is absent, but
 * the schema of an optional field admits `undefined`, which JSON Schema spells null), and with
 * its schema's description on the parameter itself.
 */
const finishParameter = (parameter: Json): Json => {
  let schema = parameter.schema as Json
  const members = Array.isArray(schema.anyOf) ? (schema.anyOf as Array<Json>) : undefined
  if (members !== undefined && members.some((m) => m.type === "null")) {
    const kept = members.filter((m) => m.type !== "null")
    const { anyOf: _anyOf, ...rest } = schema
    schema = kept.length === 1 ? { ...kept[0], ...rest } : { ...rest, anyOf: kept }
  }
  const description = typeof schema.description === "string" ? schema.description : undefined
  return { ...parameter, schema, ...(description !== undefined ? { description } : {}) }
}

/**
 * The document as integrators' tools need it:
 * - the signing middleware declares 413 and 415 for every signed endpoint because it checks the
 *   body of those that take one; an operation without a request body never answers 415, and a GET
 *   never 413 (the edge does not read a GET's body; it reads and limits any other's);
 * - the signing headers are security schemes, required on every operation but GET /time;
 * - parameters are never null and carry their schema's description;
 * - no object refuses properties it does not list (`openObjects`).
 */
const finishSpec = (spec: Json): Json => {
  const paths = spec.paths as Record<string, Record<string, Json>>
  for (const ops of Object.values(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const responses = op.responses as Responses
      if (op.requestBody === undefined) delete responses["415"]
      if (method === "get") delete responses["413"]
      const parameters = ((op.parameters as Array<Json> | undefined) ?? []).map(finishParameter)
      if (method === "post") {
        op.parameters = [...parameters, idempotencyKeyParameter]
      } else {
        op.parameters = parameters
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
  nameResources(components.schemas)
  pruneUnreferenced(spec, components.schemas)
  openObjects(spec)
  components.securitySchemes = { ...securitySchemes }
  // The default for tools that read only the top level; GET /time overrides it with none.
  spec.security = signed()
  return spec
}

/**
 * How requests decode (server) and encode (typed client): every query and body issue is
 * reported, not only the first (DECISIONS §1); issues keep the rejected value so that messages
 * can quote it.
 */
const QUERY_AND_BODY = { errors: "all", reportInput: true } as const

// The areas' groups, each with the middlewares of how it is signed (schema/Area.ts).
export class OpenApiDef extends HttpApi.make("open-api")
  .add(...groupsOf(AREAS))
  .prefix(API_PREFIX)
  .annotate(HttpApi.QueryParseOptions, QUERY_AND_BODY)
  .annotate(HttpApi.PayloadParseOptions, QUERY_AND_BODY)
  .annotate(HttpApi.ParamsParseOptions, { reportInput: true })
  // The typed client ignores response fields it does not know (SPEC §9), success and error alike:
  // Schema's default. The slots are set (to the defaults, `{}`) so that no later API-wide
  // ParseOptions can make them strict. Not `{ onExcessProperty: "ignore" }`, which means the same
  // but, as any non-default option does, sends every struct of every answer down Schema's slower
  // general parser (a generator per struct) instead of its fast path.
  .annotate(HttpApi.SuccessParseOptions, {})
  .annotate(HttpApi.ErrorParseOptions, {})
  // Shown only through the batch bodies' items.
  .annotate(HttpApi.AdditionalSchemas, GuestBatchItemSchemas)
  .annotate(OpenApi.Title, "Matchmaking Platform Open API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Description, description)
  // Paths carry the /api/open/v1 prefix, so the server is the host that serves this document.
  .annotate(OpenApi.Servers, [{ url: "/", description: "the host serving this document" }])
  .annotate(OpenApi.Transform, (spec) => finishSpec(spec))
{}
