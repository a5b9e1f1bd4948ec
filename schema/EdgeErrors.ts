// The edge's own refusals, declared with their rows like the domain's (src/domain/errors.ts):
// authentication and permissions, the client's rate limit, what the HTTP layer refuses (size, media
// type, time, headers, methods) and the server's own failures. Part of the contract: the signed
// middlewares (schema/Auth.ts) declare them, so the typed client decodes them too.
import * as Schema from "effect/Schema"

import { DeclaredError } from "../src/domain/errors.js"
import { optionalOut } from "./Common.js"

export const UnauthorizedReason = Schema.Literals([
  "missing_credentials",
  "unknown_app_key",
  "app_key_disabled",
  "timestamp_out_of_window",
  "nonce_replayed",
  "invalid_signature",
  /** After a database crash emptied the nonce record: signed before the restart (DECISIONS §13). */
  "signed_before_restart"
])
export type UnauthorizedReason = typeof UnauthorizedReason.Type

/** A request whose signature is missing, malformed, stale, replayed or wrong (DECISIONS §2). */
export class Unauthorized extends DeclaredError<Unauthorized>()("Unauthorized", { status: 401, reasons: UnauthorizedReason.literals }, {
  server_time: optionalOut(Schema.Finite),
  string_to_sign: optionalOut(Schema.String),
  hint: optionalOut(Schema.String),
  /** The signing header that is present but malformed (DECISIONS §2). */
  header: optionalOut(Schema.String)
}) {}

/**
 * Why a signed request is refused as a whole (403): what each reason carries besides the message.
 * One row per reason; each operation's document lists only the reasons it can answer
 * (`forbiddenEnvelope` in schema/Errors.ts).
 */
export const FORBIDDEN_DETAILS = {
  /** The client lacks the endpoint's permission (DECISIONS §1): `required` names it. */
  permission_denied: { required: Schema.String },
  /** Signed with the previous app secret during its grace, on an operation that needs the current one (DECISIONS §13). */
  deprecated_secret: { hint: Schema.String }
} as const satisfies Record<string, Schema.Struct.Fields>

export type ForbiddenReason = keyof typeof FORBIDDEN_DETAILS
const FORBIDDEN_REASONS = Object.keys(FORBIDDEN_DETAILS) as ReadonlyArray<ForbiddenReason>

/** A 403: `error` is the reason; the details of every reason are optional here, required in its envelope. */
export class Forbidden extends DeclaredError<Forbidden>()("Forbidden", { status: 403, reasons: FORBIDDEN_REASONS }, {
  required: optionalOut(Schema.String),
  hint: optionalOut(Schema.String)
}) {}

/** The path exists, the method does not (DECISIONS §1); `allow` is also the Allow header. */
export class MethodNotAllowed extends DeclaredError<MethodNotAllowed>()("MethodNotAllowed", {
  status: 405,
  reason: "method_not_allowed"
}, { allow: Schema.Array(Schema.String) }) {}

/** The request was not received in time (Node's request timeout): the HTTP layer answers it. */
export class RequestTimeout extends DeclaredError<RequestTimeout>()("RequestTimeout", { status: 408, reason: "request_timeout" }) {}

/** A body, or a card file in it, over its limit (`limit` bytes). */
export class PayloadTooLarge extends DeclaredError<PayloadTooLarge>()("PayloadTooLarge", { status: 413, reason: "payload_too_large" }, {
  limit: Schema.Finite
}) {}

/** A body of a media type the endpoint does not take (`expected` names the one it does). */
export class UnsupportedMediaType extends DeclaredError<UnsupportedMediaType>()("UnsupportedMediaType", {
  status: 415,
  reason: "unsupported_media_type"
}, { expected: Schema.String }) {}

/** An `Expect` header other than `100-continue`: the HTTP layer answers it. */
export class ExpectationFailed extends DeclaredError<ExpectationFailed>()("ExpectationFailed", {
  status: 417,
  reason: "expectation_failed"
}) {}

/** The request line and headers together exceed the server's limit (`limit` bytes). */
export class HeadersTooLarge extends DeclaredError<HeadersTooLarge>()("HeadersTooLarge", { status: 431, reason: "headers_too_large" }, {
  limit: Schema.Finite
}) {}

/** Over the client's rate limit (DECISIONS §10) or a self-service limit (§13). */
export class TooManyRequests extends DeclaredError<TooManyRequests>()("TooManyRequests", { status: 429, reason: "rate_limited" }, {
  /** Seconds to wait (also the Retry-After header). */
  retry_after: Schema.Finite
}) {}

/** A defect: logged with the request id, which the answer names. Never for bad input. */
export class InternalError extends DeclaredError<InternalError>()("InternalError", { status: 500, reason: "internal_error" }, {
  request_id: Schema.String
}) {}

/** The service cannot answer now (a probe: not ready); the database's own outages are DatabaseUnavailable. */
export class ServiceUnavailable extends DeclaredError<ServiceUnavailable>()("ServiceUnavailable", {
  status: 503,
  reason: "service_unavailable"
}, {
  /** Seconds to wait (also the Retry-After header). */
  retry_after: optionalOut(Schema.Finite)
}) {}
