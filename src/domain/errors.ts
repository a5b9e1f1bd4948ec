// The failures of the domain and its services, named by what went wrong (a group that still has
// members, an activity whose places are taken), not by the HTTP status they end up as. Each
// carries its `reason`: the stable code of DECISIONS §1 that clients switch on (`data.error` in an
// error envelope, `error` in a batch item's result). The status and the envelope are the HTTP
// edge's business: schema/Errors.ts maps each class once.
import * as Schema from "effect/Schema"

import { optionalOut } from "./schemaFields.js"

export const Issue = Schema.Struct({ path: Schema.String, message: Schema.String })
export type Issue = typeof Issue.Type

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

const message = { message: Schema.String }

/** A value the rules refuse, with the fields at fault (`age`, `photos[9]`). */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  ...message,
  issues: optionalOut(Schema.Array(Issue))
}) {
  static readonly reason = "invalid_parameter"
  static of(issues: ReadonlyArray<Issue>, message = "invalid parameters"): InvalidInput {
    return new InvalidInput({ message, issues })
  }
  static at(path: string, message: string, summary = "invalid parameters"): InvalidInput {
    return new InvalidInput({ message: summary, issues: [{ path, message }] })
  }
}

/** An unknown (or removed) record: an id in the path, or ids referenced by a body. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  ...message,
  resource: ResourceName,
  missing_ids: optionalOut(Schema.Array(Schema.Finite))
}) {
  static readonly reason = "not_found"
  static of(resource: ResourceName, id?: number | string): NotFound {
    return new NotFound({ resource, message: id === undefined ? `${resource} not found` : `${resource} ${id} not found` })
  }
  static ids(resource: ResourceName, missing: ReadonlyArray<number>): NotFound {
    return new NotFound({ resource, missing_ids: missing, message: `unknown ${resource} ids: ${missing.join(", ")}` })
  }
}

// Values that must be unique among live records.
export class DuplicateWechatNumber extends Schema.TaggedError<DuplicateWechatNumber>()("DuplicateWechatNumber", message) {
  static readonly reason = "duplicate_wechat_number"
}
export class DuplicatePhone extends Schema.TaggedError<DuplicatePhone>()("DuplicatePhone", message) {
  static readonly reason = "duplicate_phone"
}
export class DuplicateDeviceId extends Schema.TaggedError<DuplicateDeviceId>()("DuplicateDeviceId", message) {
  static readonly reason = "duplicate_device_id"
}
export class DuplicateGroupNo extends Schema.TaggedError<DuplicateGroupNo>()("DuplicateGroupNo", message) {
  static readonly reason = "duplicate_group_no"
}

/**
 * The refusals that tell a client a value exists: trying values one by one finds the taken ones,
 * masked or not. Answered to a masking client they are counted (DECISIONS §13).
 */
export const EXISTENCE_REASONS: ReadonlySet<string> = new Set([
  DuplicateWechatNumber.reason,
  DuplicatePhone.reason,
  DuplicateDeviceId.reason,
  DuplicateGroupNo.reason
])

/** A work WeChat account cannot be removed while matchmakers or companies are associated with it. */
export class HasAssociations extends Schema.TaggedError<HasAssociations>()("HasAssociations", message) {
  static readonly reason = "has_associations"
}
/** A WeChat group cannot be removed while it has members. */
export class GroupHasMembers extends Schema.TaggedError<GroupHasMembers>()("GroupHasMembers", message) {
  static readonly reason = "has_members"
}
export class AlreadyMember extends Schema.TaggedError<AlreadyMember>()("AlreadyMember", message) {
  static readonly reason = "already_member"
}
export class AlreadyAssociated extends Schema.TaggedError<AlreadyAssociated>()("AlreadyAssociated", message) {
  static readonly reason = "already_associated"
}
export class AccountDisabled extends Schema.TaggedError<AccountDisabled>()("AccountDisabled", message) {
  static readonly reason = "account_disabled"
}
/** A status change that DECISIONS §5 does not allow from the record's current status. */
export class InvalidTransition extends Schema.TaggedError<InvalidTransition>()("InvalidTransition", message) {
  static readonly reason = "invalid_transition"
}
/** An activity has no place left for the guest's gender. */
export class QuotaFull extends Schema.TaggedError<QuotaFull>()("QuotaFull", message) {
  static readonly reason = "quota_full"
}
export class AlreadyRegistered extends Schema.TaggedError<AlreadyRegistered>()("AlreadyRegistered", message) {
  static readonly reason = "already_registered"
}
export class ActivityNotOpen extends Schema.TaggedError<ActivityNotOpen>()("ActivityNotOpen", message) {
  static readonly reason = "activity_not_open"
}
/** The two guests already have an open match. */
export class MatchExists extends Schema.TaggedError<MatchExists>()("MatchExists", message) {
  static readonly reason = "match_exists"
}
export class ImageBlacklisted extends Schema.TaggedError<ImageBlacklisted>()("ImageBlacklisted", message) {
  static readonly reason = "image_blacklisted"
}
export class UnsupportedImage extends Schema.TaggedError<UnsupportedImage>()("UnsupportedImage", message) {
  static readonly reason = "unsupported_image"
}
export class BatchTooLarge extends Schema.TaggedError<BatchTooLarge>()("BatchTooLarge", message) {
  static readonly reason = "batch_too_large"
  static of(max: number, got: number, what = "items"): BatchTooLarge {
    return new BatchTooLarge({ message: `at most ${max} ${what} per call, got ${got}` })
  }
}
/** A webhook test or redelivery while the client's webhook is off or has no URL. */
export class WebhookOff extends Schema.TaggedError<WebhookOff>()("WebhookOff", message) {
  static readonly reason = "webhook_off"
}
/** A follow-up task held by another client (DECISIONS §7). */
export class TaskLocked extends Schema.TaggedError<TaskLocked>()("TaskLocked", {
  ...message,
  dispatched_to: optionalOut(Schema.String)
}) {
  static readonly reason = "task_locked"
}
/** Card parsing cannot run now: no AI parser and no OCR language data, or the parser failed. */
export class ParserUnavailable extends Schema.TaggedError<ParserUnavailable>()("ParserUnavailable", message) {
  static readonly reason = "parser_unavailable"
}

/** The database or its connections failed for a moment (refused, restarting, read-only, timed out). */
export class DatabaseUnavailable extends Schema.TaggedError<DatabaseUnavailable>()("DatabaseUnavailable", {
  ...message,
  /** Seconds a client should wait before retrying (also the Retry-After header). */
  retry_after: Schema.Finite
}) {
  static readonly reason = "service_unavailable"
}

/** Every refusal of a domain rule that a batch item can fail with, as its class. */
export const ItemRefusals = [
  InvalidInput,
  NotFound,
  DuplicateWechatNumber,
  DuplicatePhone,
  DuplicateDeviceId,
  DuplicateGroupNo,
  HasAssociations,
  GroupHasMembers,
  AlreadyMember,
  AlreadyAssociated,
  AccountDisabled,
  InvalidTransition,
  QuotaFull,
  AlreadyRegistered,
  ActivityNotOpen,
  MatchExists,
  ImageBlacklisted,
  UnsupportedImage,
  BatchTooLarge
] as const

export type DomainError =
  | InstanceType<(typeof ItemRefusals)[number]>
  | TaskLocked
  | ParserUnavailable
  | WebhookOff
  | DatabaseUnavailable

const reasons: Record<DomainError["_tag"], string> = {
  InvalidInput: InvalidInput.reason,
  NotFound: NotFound.reason,
  DuplicateWechatNumber: DuplicateWechatNumber.reason,
  DuplicatePhone: DuplicatePhone.reason,
  DuplicateDeviceId: DuplicateDeviceId.reason,
  DuplicateGroupNo: DuplicateGroupNo.reason,
  HasAssociations: HasAssociations.reason,
  GroupHasMembers: GroupHasMembers.reason,
  AlreadyMember: AlreadyMember.reason,
  AlreadyAssociated: AlreadyAssociated.reason,
  AccountDisabled: AccountDisabled.reason,
  InvalidTransition: InvalidTransition.reason,
  QuotaFull: QuotaFull.reason,
  AlreadyRegistered: AlreadyRegistered.reason,
  ActivityNotOpen: ActivityNotOpen.reason,
  MatchExists: MatchExists.reason,
  ImageBlacklisted: ImageBlacklisted.reason,
  UnsupportedImage: UnsupportedImage.reason,
  BatchTooLarge: BatchTooLarge.reason,
  TaskLocked: TaskLocked.reason,
  ParserUnavailable: ParserUnavailable.reason,
  WebhookOff: WebhookOff.reason,
  DatabaseUnavailable: DatabaseUnavailable.reason
}

export const isDomainError = (u: unknown): u is DomainError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && Object.hasOwn(reasons, u._tag)

/** The stable reason code of a domain failure (`has_members`), as a batch item's `error` shows it. */
export const reasonOf = (error: DomainError): string => reasons[error._tag]
