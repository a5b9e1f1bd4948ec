// Typed errors of the contract (DECISIONS.md §1): one class per HTTP status, each carrying the
// stable `error` reason, served inside the `{code, message, data: {error, ...}}` envelope.
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"

import { optionalOut } from "./Common.js"

export const Issue = Schema.Struct({ path: Schema.String, message: Schema.String })
export type Issue = typeof Issue.Type

export const BadRequestReason = Schema.Literals([
  "invalid_parameter",
  "duplicate_wechat_number",
  "duplicate_phone",
  "duplicate_device_id",
  "duplicate_group_no",
  "has_associations",
  "has_members",
  "already_member",
  "already_associated",
  "account_disabled",
  "invalid_transition",
  "quota_full",
  "already_registered",
  "activity_not_open",
  "match_exists",
  "image_blacklisted",
  "unsupported_image",
  "batch_too_large",
  "webhook_off"
])
export type BadRequestReason = typeof BadRequestReason.Type

export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", {
  error: BadRequestReason,
  message: Schema.String,
  issues: optionalOut(Schema.Array(Issue))
}) {
  static invalid(issues: ReadonlyArray<Issue>, message = "invalid parameters"): BadRequest {
    return new BadRequest({ error: "invalid_parameter", message, issues })
  }
}

export const UnauthorizedReason = Schema.Literals([
  "missing_credentials",
  "unknown_app_key",
  "app_key_disabled",
  "timestamp_out_of_window",
  "nonce_replayed",
  "invalid_signature"
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

export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  error: Schema.Literal("permission_denied"),
  message: Schema.String,
  required: Schema.String
}) {}

export const ResourceName = Schema.Literals([
  "guest",
  "matchmaker",
  "company",
  "work_wechat",
  "work_group",
  "follow_up_task",
  "image_blacklist",
  "activity",
  "match",
  "membership",
  "user",
  "plan",
  "card_task",
  "webhook_delivery",
  "route"
])
export type ResourceName = typeof ResourceName.Type

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  error: Schema.Literal("not_found"),
  message: Schema.String,
  resource: ResourceName,
  missing_ids: optionalOut(Schema.Array(Schema.Finite))
}) {
  static of(resource: ResourceName, id?: number | string): NotFound {
    return new NotFound({
      error: "not_found",
      resource,
      message: id === undefined ? `${resource} not found` : `${resource} ${id} not found`
    })
  }
  static ids(resource: ResourceName, missing: ReadonlyArray<number>): NotFound {
    return new NotFound({
      error: "not_found",
      resource,
      missing_ids: missing,
      message: `unknown ${resource} ids: ${missing.join(", ")}`
    })
  }
}

export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  error: Schema.Literals(["task_locked", "idempotency_key_in_progress"]),
  message: Schema.String,
  dispatched_to: optionalOut(Schema.String),
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
  error: Schema.Literals(["parser_unavailable", "service_unavailable"]),
  message: Schema.String,
  retry_after: optionalOut(Schema.Finite)
}) {}

export type ApiError =
  | BadRequest
  | Unauthorized
  | Forbidden
  | NotFound
  | Conflict
  | UnprocessableEntity
  | PayloadTooLarge
  | UnsupportedMediaType
  | TooManyRequests
  | InternalError
  | ServiceUnavailable

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
 * `message` under `data`, in the class's field order.
 */
const errorEnvelope = <E extends { readonly _tag: string; readonly message: string }>(
  cls: ErrorClass<E>,
  tag: E["_tag"],
  status: number
): Schema.Codec<E, ErrorWire> => {
  const { message: _message, _tag: _t, ...dataFields } = cls.fields
  const wire = Schema.Struct({
    code: Schema.Literal(status),
    message: Schema.String,
    data: Schema.Struct(dataFields)
  }).annotate({ identifier: `${tag}Response` })
  return wire.pipe(
    Schema.decodeTo(cls, {
      decode: SchemaGetter.transform(({ data, message }) => ({ ...data, message, _tag: tag })),
      encode: SchemaGetter.transform(({ _tag, message, ...data }: { readonly _tag: string; readonly message: string }) => ({
        code: status,
        message,
        data
      }))
    }),
    HttpApiSchema.status(status)
  ) as unknown as Schema.Codec<E, ErrorWire>
  // (The cast: an error class's fields need no services, but the rest-spread of the generic
  // `Struct.Fields` above cannot say so, and the wire type is the documented ErrorWire shape.)
}

export const ErrorStatus = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  UnprocessableEntity: 422,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  TooManyRequests: 429,
  InternalError: 500,
  ServiceUnavailable: 503
} as const satisfies Record<ApiError["_tag"], number>

export const BadRequestEnvelope = errorEnvelope(BadRequest, "BadRequest", 400)
export const UnauthorizedEnvelope = errorEnvelope(Unauthorized, "Unauthorized", 401)
export const ForbiddenEnvelope = errorEnvelope(Forbidden, "Forbidden", 403)
export const NotFoundEnvelope = errorEnvelope(NotFound, "NotFound", 404)
export const ConflictEnvelope = errorEnvelope(Conflict, "Conflict", 409)
export const UnprocessableEntityEnvelope = errorEnvelope(UnprocessableEntity, "UnprocessableEntity", 422)
export const PayloadTooLargeEnvelope = errorEnvelope(PayloadTooLarge, "PayloadTooLarge", 413)
export const UnsupportedMediaTypeEnvelope = errorEnvelope(UnsupportedMediaType, "UnsupportedMediaType", 415)
export const TooManyRequestsEnvelope = errorEnvelope(TooManyRequests, "TooManyRequests", 429)
export const InternalErrorEnvelope = errorEnvelope(InternalError, "InternalError", 500)
export const ServiceUnavailableEnvelope = errorEnvelope(ServiceUnavailable, "ServiceUnavailable", 503)

/** Every error envelope; the edge encodes any ApiError with this union. */
export const AnyErrorEnvelope = Schema.Union([
  BadRequestEnvelope,
  UnauthorizedEnvelope,
  ForbiddenEnvelope,
  NotFoundEnvelope,
  ConflictEnvelope,
  UnprocessableEntityEnvelope,
  PayloadTooLargeEnvelope,
  UnsupportedMediaTypeEnvelope,
  TooManyRequestsEnvelope,
  InternalErrorEnvelope,
  ServiceUnavailableEnvelope
])

export const isApiError = (u: unknown): u is ApiError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && u._tag in ErrorStatus
