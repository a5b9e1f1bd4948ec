// The failures of the domain and its services, named by what went wrong (a group that still has
// members, an activity whose places are taken), not by the HTTP status they end up as. Each is
// declared once, with its row: the stable `reason` of DECISIONS §1 that clients switch on
// (`data.error` in an error envelope, `error` in a batch item's result) and the status it is
// answered with. schema/Errors.ts derives the rest (envelopes, the status map, reasons) from the
// rows of every module that declares errors; adding an error is adding its class.
import * as Schema from "effect/Schema"

import { optionalOut } from "./schemaFields.js"

export const Issue = Schema.Struct({ path: Schema.String, message: Schema.String })
export type Issue = typeof Issue.Type

/**
 * The names a 404's `data.resource` may carry, each added by the area that owns it: an area's
 * schema file merges its names into this interface (`declare module "../src/domain/errors.js" {
 * interface ResourceNames { readonly company: true } }`) and lists them in its registration
 * (`resources` of schema/Area.ts), which must name only these; a name merged here that no area
 * lists does not compile (schema/Api.ts). The domain names a resource below the contract without
 * a list of its own, and the OpenAPI document's enum is the areas' list.
 */
export interface ResourceNames {}
export type ResourceName = keyof ResourceNames & string

/** A resource name's form (lower-case words joined by `_`); which names exist is the areas' (above). */
const isResourceName = (name: string): name is ResourceName => /^[a-z]+(?:_[a-z]+)*$/.test(name)
export const ResourceName = Schema.String.pipe(Schema.refine(isResourceName, { expected: "a resource name" }))

/** What an error declares besides its fields: the table's row (schema/Errors.ts reads nothing else). */
export interface ErrorRow {
  /** The HTTP status it is answered with (the envelope's `code`). */
  readonly status: number
  /** Its reason (`data.error`), the same for every instance. */
  readonly reason?: string
  /** A class of several reasons (401, 403): each instance names its own in its `error` field. */
  readonly reasons?: ReadonlyArray<string>
  /** A batch item may fail with it alone (DECISIONS §1): the item's `error` is its reason. */
  readonly item?: true
  /** Answered to a masking client, it tells that a value exists (DECISIONS §13): counted. */
  readonly disclosesExistence?: true
}

/** The `error` field of a class of several reasons: one of them. */
type ReasonField<Row extends ErrorRow> = Row extends { readonly reasons: infer R extends ReadonlyArray<string> }
  ? { readonly error: Schema.Literals<R> }
  : {}

/**
 * An error class with its row: `class QuotaFull extends DeclaredError<QuotaFull>()("QuotaFull",
 * { status: 400, reason: "quota_full" }) {}`. Every instance has a `message` (human text); `fields`
 * are its details (`data` besides `error`); a class of several `reasons` also gets an `error`
 * field, first, that names the instance's.
 */
export const DeclaredError =
  <Self>() =>
  <const Tag extends string, const Row extends ErrorRow, const Fields extends Schema.Struct.Fields = {}>(
    tag: Tag,
    row: Row,
    fields: Fields = {} as Fields
  ) => {
    const reasonField = (row.reasons === undefined ? {} : { error: Schema.Literals(row.reasons) }) as ReasonField<Row>
    const base = Schema.TaggedError<Self>()(tag, { ...reasonField, message: Schema.String, ...fields })
    return Object.assign(base, { tag, row })
  }

/** A value the rules refuse, with the fields at fault (`age`, `photos[9]`). */
export class InvalidInput extends DeclaredError<InvalidInput>()("InvalidInput", {
  status: 400,
  reason: "invalid_parameter",
  item: true
}, { issues: optionalOut(Schema.Array(Issue)) }) {
  static of(issues: ReadonlyArray<Issue>, message = "invalid parameters"): InvalidInput {
    return new InvalidInput({ message, issues })
  }
  static at(path: string, message: string, summary = "invalid parameters"): InvalidInput {
    return new InvalidInput({ message: summary, issues: [{ path, message }] })
  }
}

/** An unknown (or removed) record: an id in the path, or ids referenced by a body. */
export class NotFound extends DeclaredError<NotFound>()("NotFound", { status: 404, reason: "not_found", item: true }, {
  resource: ResourceName,
  missing_ids: optionalOut(Schema.Array(Schema.Finite))
}) {
  static of(resource: ResourceName, id?: number | string): NotFound {
    return new NotFound({ resource, message: id === undefined ? `${resource} not found` : `${resource} ${id} not found` })
  }
  static ids(resource: ResourceName, missing: ReadonlyArray<number>): NotFound {
    return new NotFound({ resource, missing_ids: missing, message: `unknown ${resource} ids: ${missing.join(", ")}` })
  }
}

// Values that must be unique among live records. Trying values one by one finds the taken ones,
// masked or not: answered to a masking client, they are counted (DECISIONS §13).
export class DuplicateWechatNumber extends DeclaredError<DuplicateWechatNumber>()("DuplicateWechatNumber", {
  status: 400,
  reason: "duplicate_wechat_number",
  item: true,
  disclosesExistence: true
}) {}
export class DuplicatePhone extends DeclaredError<DuplicatePhone>()("DuplicatePhone", {
  status: 400,
  reason: "duplicate_phone",
  item: true,
  disclosesExistence: true
}) {}
export class DuplicateDeviceId extends DeclaredError<DuplicateDeviceId>()("DuplicateDeviceId", {
  status: 400,
  reason: "duplicate_device_id",
  item: true,
  disclosesExistence: true
}) {}
export class DuplicateGroupNo extends DeclaredError<DuplicateGroupNo>()("DuplicateGroupNo", {
  status: 400,
  reason: "duplicate_group_no",
  item: true,
  disclosesExistence: true
}) {}

/** A work WeChat account cannot be removed while matchmakers or companies are associated with it. */
export class HasAssociations extends DeclaredError<HasAssociations>()("HasAssociations", {
  status: 400,
  reason: "has_associations",
  item: true
}) {}
/** A WeChat group cannot be removed while it has members. */
export class GroupHasMembers extends DeclaredError<GroupHasMembers>()("GroupHasMembers", {
  status: 400,
  reason: "has_members",
  item: true
}) {}
export class AlreadyMember extends DeclaredError<AlreadyMember>()("AlreadyMember", {
  status: 400,
  reason: "already_member",
  item: true
}) {}
export class AlreadyAssociated extends DeclaredError<AlreadyAssociated>()("AlreadyAssociated", {
  status: 400,
  reason: "already_associated",
  item: true
}) {}
export class AccountDisabled extends DeclaredError<AccountDisabled>()("AccountDisabled", {
  status: 400,
  reason: "account_disabled",
  item: true
}) {}
/** A status change that DECISIONS §5 does not allow from the record's current status. */
export class InvalidTransition extends DeclaredError<InvalidTransition>()("InvalidTransition", {
  status: 400,
  reason: "invalid_transition",
  item: true
}) {}
/** An activity has no place left for the guest's gender. */
export class QuotaFull extends DeclaredError<QuotaFull>()("QuotaFull", { status: 400, reason: "quota_full", item: true }) {}
export class AlreadyRegistered extends DeclaredError<AlreadyRegistered>()("AlreadyRegistered", {
  status: 400,
  reason: "already_registered",
  item: true
}) {}
export class ActivityNotOpen extends DeclaredError<ActivityNotOpen>()("ActivityNotOpen", {
  status: 400,
  reason: "activity_not_open",
  item: true
}) {}
/** The two guests already have an open match. */
export class MatchExists extends DeclaredError<MatchExists>()("MatchExists", { status: 400, reason: "match_exists", item: true }) {}
export class ImageBlacklisted extends DeclaredError<ImageBlacklisted>()("ImageBlacklisted", {
  status: 400,
  reason: "image_blacklisted",
  item: true
}) {}
export class UnsupportedImage extends DeclaredError<UnsupportedImage>()("UnsupportedImage", {
  status: 400,
  reason: "unsupported_image",
  item: true
}) {}
export class BatchTooLarge extends DeclaredError<BatchTooLarge>()("BatchTooLarge", {
  status: 400,
  reason: "batch_too_large",
  item: true
}) {
  static of(max: number, got: number, what = "items"): BatchTooLarge {
    return new BatchTooLarge({ message: `at most ${max} ${what} per call, got ${got}` })
  }
}
/**
 * A company-scoped client (DECISIONS §14) named a company outside its scope, or called an
 * operation open only to unscoped clients (company creation, the platform-wide resources).
 */
export class OutOfScope extends DeclaredError<OutOfScope>()("OutOfScope", { status: 403, reason: "out_of_scope", item: true }, {
  company_id: optionalOut(Schema.Finite)
}) {}
/** A webhook test or redelivery while the client's webhook is off or has no URL. */
export class WebhookOff extends DeclaredError<WebhookOff>()("WebhookOff", { status: 400, reason: "webhook_off" }) {}
/** A follow-up task held by another client (DECISIONS §7). */
export class TaskLocked extends DeclaredError<TaskLocked>()("TaskLocked", { status: 409, reason: "task_locked" }, {
  dispatched_to: optionalOut(Schema.String)
}) {}
/** Card parsing cannot run now: no AI parser and no OCR language data, or the parser failed. */
export class ParserUnavailable extends DeclaredError<ParserUnavailable>()("ParserUnavailable", {
  status: 503,
  reason: "parser_unavailable"
}) {}

/** The database or its connections failed for a moment (refused, restarting, read-only, timed out). */
export class DatabaseUnavailable extends DeclaredError<DatabaseUnavailable>()("DatabaseUnavailable", {
  status: 503,
  reason: "service_unavailable"
}, {
  /** Seconds a client should wait before retrying (also the Retry-After header). */
  retry_after: Schema.Finite
}) {}
