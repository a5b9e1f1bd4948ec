// Typed errors of the contract (DECISIONS.md §1): one class per HTTP status, each carrying the
// stable `error` reason, served inside the `{code, message, data: {error, ...}}` envelope.
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"

import * as Domain from "../src/domain/errors.js"
import { optionalOut } from "./Common.js"

export { Issue, ResourceName } from "../src/domain/errors.js"

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

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  error: UnauthorizedReason,
  message: Schema.String,
  server_time: optionalOut(Schema.Finite),
  string_to_sign: optionalOut(Schema.String),
  hint: optionalOut(Schema.String),
  /** The signing header that is present but malformed (DECISIONS §2). */
  header: optionalOut(Schema.String)
}) {}

/**
 * Why a signed request is refused as a whole (403): what each reason carries besides the message.
 * One row per reason; each operation's document lists only the reasons it can answer
 * (`forbiddenEnvelope`).
 */
const FORBIDDEN_DETAILS = {
  /** The client lacks the endpoint's permission (DECISIONS §1): `required` names it. */
  permission_denied: { required: Schema.String },
  /** Signed with the previous app secret during its grace, on an operation that needs the current one (DECISIONS §13). */
  deprecated_secret: { hint: Schema.String }
} as const satisfies Record<string, Schema.Struct.Fields>

export type ForbiddenReason = keyof typeof FORBIDDEN_DETAILS
export const ForbiddenReason = Schema.Literals(Object.keys(FORBIDDEN_DETAILS) as Array<ForbiddenReason>)

/** A 403: `error` is the reason; the details of every reason are optional here, required in its envelope. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  error: ForbiddenReason,
  message: Schema.String,
  required: optionalOut(Schema.String),
  hint: optionalOut(Schema.String)
}) {}

/** The path exists, the method does not (DECISIONS §1); `allow` is also the Allow header. */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", {
  error: Schema.Literal("method_not_allowed"),
  message: Schema.String,
  allow: Schema.Array(Schema.String)
}) {}

/** The request was not received in time (Node's request timeout): the HTTP layer answers it. */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()("RequestTimeout", {
  error: Schema.Literal("request_timeout"),
  message: Schema.String
}) {}

/** A repeat of an Idempotency-Key whose first request is still running (DECISIONS §11). */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  error: Schema.Literal("idempotency_key_in_progress"),
  message: Schema.String,
  /** idempotency_key_in_progress: seconds until a retry may find the first attempt's answer. */
  retry_after: optionalOut(Schema.Finite)
}) {}

/** The same Idempotency-Key sent with a different request (DECISIONS §11). */
export class UnprocessableEntity extends Schema.TaggedError<UnprocessableEntity>()("UnprocessableEntity", {
  error: Schema.Literal("idempotency_key_reused"),
  message: Schema.String
}) {}

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  error: Schema.Literal("payload_too_large"),
  message: Schema.String,
  limit: Schema.Finite
}) {}

export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", {
  error: Schema.Literal("unsupported_media_type"),
  message: Schema.String,
  expected: Schema.String
}) {}

/** An `Expect` header other than `100-continue`: the HTTP layer answers it. */
export class ExpectationFailed extends Schema.TaggedError<ExpectationFailed>()("ExpectationFailed", {
  error: Schema.Literal("expectation_failed"),
  message: Schema.String
}) {}

/** The request line and headers together exceed the server's limit (`limit` bytes). */
export class HeadersTooLarge extends Schema.TaggedError<HeadersTooLarge>()("HeadersTooLarge", {
  error: Schema.Literal("headers_too_large"),
  message: Schema.String,
  limit: Schema.Finite
}) {}

export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()("TooManyRequests", {
  error: Schema.Literal("rate_limited"),
  message: Schema.String,
  retry_after: Schema.Finite
}) {}

export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", {
  error: Schema.Literal("internal_error"),
  message: Schema.String,
  request_id: Schema.String
}) {}

export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  error: Schema.Literal("service_unavailable"),
  message: Schema.String,
  retry_after: optionalOut(Schema.Finite)
}) {}

/** The edge's own refusals (authentication, limits, media types, idempotency, outages). */
export type EdgeError =
  | Unauthorized
  | Forbidden
  | MethodNotAllowed
  | RequestTimeout
  | Conflict
  | UnprocessableEntity
  | PayloadTooLarge
  | UnsupportedMediaType
  | ExpectationFailed
  | HeadersTooLarge
  | TooManyRequests
  | InternalError
  | ServiceUnavailable

/** Everything a request can fail with: the edge's refusals and the domain's, by meaning. */
export type ApiError = EdgeError | Domain.DomainError

// The wire form of an error: `{code, message, data: {error, ...details}}`, with the HTTP status
// equal to `code`. Decoding it gives back the tagged error, so the typed client fails with it.

/** The wire form's type: a client sees `data` as the error's fields (besides `message`). */
export interface ErrorWire {
  readonly code: number
  readonly message: string
  readonly data: { readonly [field: string]: unknown }
}

type ErrorClass<E> = Schema.Codec<E, { readonly _tag: string; readonly message: string }> & {
  readonly fields: Schema.Struct.Fields
  new(...args: ReadonlyArray<never>): E
}

/**
 * An error class's envelope, annotated with its status: the class's fields but `_tag` and
 * `message` under `data`, in the class's field order. A domain class names its reason (`reason`):
 * it comes first in `data` as `error`; an edge class carries `error` as its own first field.
 */
const errorEnvelope = <E extends { readonly _tag: string; readonly message: string }>(
  cls: ErrorClass<E>,
  tag: E["_tag"],
  status: number,
  reason?: string,
  /** An edge class's envelope for one of its reasons: `error` and the details it carries. */
  only?: { readonly reason: string; readonly fields: Schema.Struct.Fields }
): Schema.Codec<E, ErrorWire> => {
  const { message: _message, _tag: _t, ...fields } = cls.fields
  const dataFields = only !== undefined
    ? { error: Schema.Literal(only.reason), ...only.fields }
    : reason === undefined
    ? fields
    : { error: Schema.Literal(reason), ...fields }
  const wire = Schema.Struct({
    code: Schema.Literal(status),
    message: Schema.String,
    data: Schema.Struct(dataFields)
  }).annotate({ identifier: only === undefined ? `${tag}Response` : `${tag}${pascal(only.reason)}Response` })
  return wire.pipe(
    Schema.decodeTo(cls, {
      decode: SchemaGetter.transform(({ data, message }) => {
        if (reason === undefined) return { ...data, message, _tag: tag }
        const { error: _error, ...details } = data as { readonly error: unknown }
        return { ...details, message, _tag: tag }
      }),
      encode: SchemaGetter.transform(({ _tag, message, ...data }: { readonly _tag: string; readonly message: string }) => ({
        code: status,
        message,
        data: reason === undefined ? data : { error: reason, ...data }
      }))
    }),
    HttpApiSchema.status(status)
  ) as unknown as Schema.Codec<E, ErrorWire>
  // (The cast: an error class's fields need no services, but the rest-spread of the generic
  // `Struct.Fields` above cannot say so, and the wire type is the documented ErrorWire shape.)
}

/** `deprecated_secret` → `DeprecatedSecret` (a component's name). */
const pascal = (snake: string): string => snake.split("_").map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("")

/** Every status, by error class: the one place a failure's meaning becomes an HTTP status. */
export const ErrorStatus = {
  Unauthorized: 401,
  Forbidden: 403,
  MethodNotAllowed: 405,
  RequestTimeout: 408,
  Conflict: 409,
  UnprocessableEntity: 422,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  ExpectationFailed: 417,
  HeadersTooLarge: 431,
  TooManyRequests: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
  InvalidInput: 400,
  DuplicateWechatNumber: 400,
  DuplicatePhone: 400,
  DuplicateDeviceId: 400,
  DuplicateGroupNo: 400,
  HasAssociations: 400,
  GroupHasMembers: 400,
  AlreadyMember: 400,
  AlreadyAssociated: 400,
  AccountDisabled: 400,
  InvalidTransition: 400,
  QuotaFull: 400,
  AlreadyRegistered: 400,
  ActivityNotOpen: 400,
  MatchExists: 400,
  ImageBlacklisted: 400,
  UnsupportedImage: 400,
  BatchTooLarge: 400,
  NotFound: 404,
  TaskLocked: 409,
  ParserUnavailable: 503,
  WebhookOff: 400,
  DatabaseUnavailable: 503
} as const satisfies Record<ApiError["_tag"], number>

const edge = <E extends EdgeError>(cls: ErrorClass<E>, tag: E["_tag"]) => errorEnvelope(cls, tag, ErrorStatus[tag])
const domain = <E extends Domain.DomainError>(cls: ErrorClass<E> & { readonly reason: string }, tag: E["_tag"]) =>
  errorEnvelope(cls, tag, ErrorStatus[tag], cls.reason)

export const UnauthorizedEnvelope = edge(Unauthorized, "Unauthorized")
/** Any 403, whatever its reason: what the edge encodes with. */
export const ForbiddenEnvelope = edge(Forbidden, "Forbidden")
/** The 403 of one reason, with its details required: what an operation declares. */
export const forbiddenEnvelope = (reason: ForbiddenReason) =>
  errorEnvelope(Forbidden, "Forbidden", ErrorStatus.Forbidden, undefined, { reason, fields: FORBIDDEN_DETAILS[reason] })
export const PermissionDeniedEnvelope = forbiddenEnvelope("permission_denied")
export const DeprecatedSecretEnvelope = forbiddenEnvelope("deprecated_secret")
export const ConflictEnvelope = edge(Conflict, "Conflict")
export const UnprocessableEntityEnvelope = edge(UnprocessableEntity, "UnprocessableEntity")
export const PayloadTooLargeEnvelope = edge(PayloadTooLarge, "PayloadTooLarge")
export const UnsupportedMediaTypeEnvelope = edge(UnsupportedMediaType, "UnsupportedMediaType")
export const TooManyRequestsEnvelope = edge(TooManyRequests, "TooManyRequests")
export const InternalErrorEnvelope = edge(InternalError, "InternalError")
export const ServiceUnavailableEnvelope = edge(ServiceUnavailable, "ServiceUnavailable")

// The domain's failures, each its own response schema, so that an operation lists its reasons.
export const InvalidInputEnvelope = domain(Domain.InvalidInput, "InvalidInput")
export const NotFoundEnvelope = domain(Domain.NotFound, "NotFound")
export const DuplicateWechatNumberEnvelope = domain(Domain.DuplicateWechatNumber, "DuplicateWechatNumber")
export const DuplicatePhoneEnvelope = domain(Domain.DuplicatePhone, "DuplicatePhone")
export const DuplicateDeviceIdEnvelope = domain(Domain.DuplicateDeviceId, "DuplicateDeviceId")
export const DuplicateGroupNoEnvelope = domain(Domain.DuplicateGroupNo, "DuplicateGroupNo")
export const HasAssociationsEnvelope = domain(Domain.HasAssociations, "HasAssociations")
export const GroupHasMembersEnvelope = domain(Domain.GroupHasMembers, "GroupHasMembers")
export const AlreadyMemberEnvelope = domain(Domain.AlreadyMember, "AlreadyMember")
export const AlreadyAssociatedEnvelope = domain(Domain.AlreadyAssociated, "AlreadyAssociated")
export const AccountDisabledEnvelope = domain(Domain.AccountDisabled, "AccountDisabled")
export const InvalidTransitionEnvelope = domain(Domain.InvalidTransition, "InvalidTransition")
export const QuotaFullEnvelope = domain(Domain.QuotaFull, "QuotaFull")
export const AlreadyRegisteredEnvelope = domain(Domain.AlreadyRegistered, "AlreadyRegistered")
export const ActivityNotOpenEnvelope = domain(Domain.ActivityNotOpen, "ActivityNotOpen")
export const MatchExistsEnvelope = domain(Domain.MatchExists, "MatchExists")
export const ImageBlacklistedEnvelope = domain(Domain.ImageBlacklisted, "ImageBlacklisted")
export const UnsupportedImageEnvelope = domain(Domain.UnsupportedImage, "UnsupportedImage")
export const BatchTooLargeEnvelope = domain(Domain.BatchTooLarge, "BatchTooLarge")
export const TaskLockedEnvelope = domain(Domain.TaskLocked, "TaskLocked")
export const ParserUnavailableEnvelope = domain(Domain.ParserUnavailable, "ParserUnavailable")
export const WebhookOffEnvelope = domain(Domain.WebhookOff, "WebhookOff")
export const DatabaseUnavailableEnvelope = domain(Domain.DatabaseUnavailable, "DatabaseUnavailable")
export const MethodNotAllowedEnvelope = edge(MethodNotAllowed, "MethodNotAllowed")
export const RequestTimeoutEnvelope = edge(RequestTimeout, "RequestTimeout")
export const ExpectationFailedEnvelope = edge(ExpectationFailed, "ExpectationFailed")
export const HeadersTooLargeEnvelope = edge(HeadersTooLarge, "HeadersTooLarge")

/**
 * What the HTTP layer answers to any request before it reaches an operation: a request Node's
 * parser refuses (400), one that does not arrive in time (408), an unmet `Expect` (417), headers
 * over the limit (431). Every operation declares them (405 belongs to no operation: it is the
 * answer of a path for the methods it has no operation for, in the API description).
 */
export const TransportErrorEnvelopes = [
  InvalidInputEnvelope,
  RequestTimeoutEnvelope,
  ExpectationFailedEnvelope,
  HeadersTooLargeEnvelope
] as const

/** Every error envelope; the edge encodes any ApiError with this union. */
export const AnyErrorEnvelope = Schema.Union([
  UnauthorizedEnvelope,
  ForbiddenEnvelope,
  MethodNotAllowedEnvelope,
  RequestTimeoutEnvelope,
  ConflictEnvelope,
  UnprocessableEntityEnvelope,
  PayloadTooLargeEnvelope,
  UnsupportedMediaTypeEnvelope,
  ExpectationFailedEnvelope,
  HeadersTooLargeEnvelope,
  TooManyRequestsEnvelope,
  InternalErrorEnvelope,
  ServiceUnavailableEnvelope,
  InvalidInputEnvelope,
  NotFoundEnvelope,
  DuplicateWechatNumberEnvelope,
  DuplicatePhoneEnvelope,
  DuplicateDeviceIdEnvelope,
  DuplicateGroupNoEnvelope,
  HasAssociationsEnvelope,
  GroupHasMembersEnvelope,
  AlreadyMemberEnvelope,
  AlreadyAssociatedEnvelope,
  AccountDisabledEnvelope,
  InvalidTransitionEnvelope,
  QuotaFullEnvelope,
  AlreadyRegisteredEnvelope,
  ActivityNotOpenEnvelope,
  MatchExistsEnvelope,
  ImageBlacklistedEnvelope,
  UnsupportedImageEnvelope,
  BatchTooLargeEnvelope,
  TaskLockedEnvelope,
  ParserUnavailableEnvelope,
  WebhookOffEnvelope,
  DatabaseUnavailableEnvelope
])

export const isApiError = (u: unknown): u is ApiError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && Object.hasOwn(ErrorStatus, u._tag)

export { InvalidInput, NotFound } from "../src/domain/errors.js"

/** The `data.error` reason an ApiError answers with (for logs and metrics). */
export const reasonOfError = (error: ApiError): string => ("error" in error ? error.error : Domain.reasonOf(error))
