// Work WeChat accounts (SPEC §2.4, §4.3): records, associations with matchmakers, companies and
// franchisees, transfers, operation logs.
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"

import { parseLogValue, renderLogValue } from "../src/domain/operationLog.js"
import * as Area from "./Area.js"
import { Unscoped } from "./Auth.js"
import { EmptyEnvelope, Envelope, Id, IdOnly, IdPath, ListOf, PageParams, Paging, RequiredPermission, Text, Timestamp } from "./Common.js"
import { ErrorEnvelopes } from "./Errors.js"

export const WORK_WECHAT_PAGE = { default: 20, max: 100 } as const

export const AccountStatus = Schema.Literals(["active", "disabled"])
export type AccountStatus = typeof AccountStatus.Type
export const TargetType = Schema.Literals(["matchmaker", "company", "franchisee"])
export type TargetType = typeof TargetType.Type

export const WorkWechat = Schema.Struct({
  id: Schema.Int,
  admin_id: Schema.NullOr(Schema.Int),
  wechat_number: Schema.String,
  phone: Schema.String,
  device_id: Schema.NullOr(Schema.String),
  wechat_nickname: Schema.NullOr(Schema.String),
  avatar: Schema.NullOr(Schema.String),
  qr_code: Schema.NullOr(Schema.String),
  status: AccountStatus,
  remark: Schema.NullOr(Schema.String),
  association_count: Schema.Int,
  user_count: Schema.Int,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotate({ identifier: "WorkWechat" })
export type WorkWechat = typeof WorkWechat.Type

const nullable = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))

/** Phones of work accounts are up to 30 characters (SPEC §2.4), digits and + - space. */
const AccountPhone = Text(30, 1).check(Schema.isPattern(/^[0-9+\- ]+$/u, { message: "must be digits (with + - or spaces)" }))

const optionalFields = {
  device_id: nullable(Text(100)),
  wechat_nickname: nullable(Text(100)),
  avatar: nullable(Text(255)),
  qr_code: nullable(Text(255)),
  remark: nullable(Text(500))
}

export const WorkWechatCreate = Schema.Struct({
  wechat_number: Text(100, 1),
  phone: AccountPhone,
  ...optionalFields
}).annotate({ identifier: "WorkWechatCreate" })
export type WorkWechatCreate = typeof WorkWechatCreate.Type

export const WorkWechatUpdate = Schema.Struct({
  wechat_number: Schema.optionalKey(Text(100, 1)),
  phone: Schema.optionalKey(AccountPhone),
  ...optionalFields
}).annotate({ identifier: "WorkWechatUpdate" })
export type WorkWechatUpdate = typeof WorkWechatUpdate.Type

export const StatusParams = Schema.Struct({ status: AccountStatus })

export const Associate = Schema.Struct({
  target_type: TargetType,
  target_id: Id,
  remark: nullable(Text(500))
}).annotate({ identifier: "WorkWechatAssociate" })
export type Associate = typeof Associate.Type

const IdList = Schema.Array(Id).check(Schema.isMinLength(1), Schema.isMaxLength(1000))

export const BatchAssociate = Schema.Struct({
  target_type: TargetType,
  target_ids: IdList,
  remark: nullable(Text(500))
}).annotate({ identifier: "WorkWechatBatchAssociate" })
export type BatchAssociate = typeof BatchAssociate.Type

export const Disassociate = Schema.Struct({
  target_type: TargetType,
  target_id: Id,
  remark: nullable(Text(500))
}).annotate({ identifier: "WorkWechatDisassociate" })
export type Disassociate = typeof Disassociate.Type

export const Transfer = Schema.Struct({
  target_type: TargetType,
  target_ids: Schema.optionalKey(IdList),
  target_work_wechat_id: Id,
  remark: nullable(Text(500))
}).annotate({ identifier: "WorkWechatTransfer" })
export type Transfer = typeof Transfer.Type

export const TransferAdmin = Schema.Struct({
  target_admin_id: Id,
  remark: nullable(Text(500))
}).annotate({ identifier: "WorkWechatTransferAdmin" })
export type TransferAdmin = typeof TransferAdmin.Type

export const BatchCounts = Schema.Struct({ success_count: Schema.Int, skip_count: Schema.Int }).annotate({ identifier: "BatchCounts" })

export const TransferOutcome = Schema.Struct({
  success_count: Schema.Int,
  skip_count: Schema.Int,
  details: Schema.Array(Schema.Struct({ target_id: Schema.Int, status: Schema.Literals(["transferred", "skipped"]) }))
}).annotate({ identifier: "TransferOutcome" })
export type TransferOutcome = typeof TransferOutcome.Type

export const Association = Schema.Struct({
  id: Schema.Int,
  work_wechat_id: Schema.Int,
  target_type: TargetType,
  target_id: Schema.Int,
  target_name: Schema.NullOr(Schema.String),
  remark: Schema.NullOr(Schema.String),
  created_at: Timestamp
}).annotate({ identifier: "WorkWechatAssociation" })
export type Association = typeof Association.Type

export const LogAction = Schema.Literals([
  "create",
  "update",
  "enable",
  "disable",
  "delete",
  "associate",
  "disassociate",
  "transfer_in",
  "transfer_out",
  "transfer_admin"
])
export type LogAction = typeof LogAction.Type

/** A log value as the service holds it: a status or an id as text, or an update's changed fields. */
export const LogValue = Schema.Union([Schema.String, Schema.Record(Schema.String, Schema.Unknown)])

/**
 * A log value on the wire: text, an update's changed fields being their JSON text. The service
 * keeps them as fields until the answer is written, so a masking client's mask reaches them.
 */
const LogValueText = Schema.String.pipe(
  Schema.decodeTo(LogValue, SchemaTransformation.transform({ decode: parseLogValue, encode: renderLogValue }))
)

const logFields = {
  id: Schema.Int,
  action: LogAction,
  target_type: Schema.NullOr(Schema.String),
  target_id: Schema.NullOr(Schema.Int),
  from_value: Schema.NullOr(LogValueText),
  to_value: Schema.NullOr(LogValueText),
  operator_id: Schema.Int,
  operator_name: Schema.String,
  remark: Schema.NullOr(Schema.String),
  created_at: Timestamp
}

export const WorkWechatLog = Schema.Struct({ ...logFields, work_wechat_id: Schema.Int }).annotate({ identifier: "WorkWechatLog" })
export type WorkWechatLog = typeof WorkWechatLog.Type
export const WorkGroupLogFields = logFields

export const WorkWechatListParams = Schema.Struct({
  ...Paging(WORK_WECHAT_PAGE),
  keyword: Schema.optional(Schema.String),
  status: Schema.optional(AccountStatus)
})
export type WorkWechatListParams = typeof WorkWechatListParams.Type

export const AssociationListParams = Schema.Struct({
  ...Paging(WORK_WECHAT_PAGE),
  target_type: Schema.optional(TargetType)
})
export type AssociationListParams = typeof AssociationListParams.Type

const read = "open:work_wechat:read" as const
const write = "open:work_wechat:write" as const

export class WorkWechatsApi extends HttpApiGroup.make("workWechats")
  .add(
    HttpApiEndpoint.get("list", "/work-wechats", {
      disableCodecs: true,
      query: WorkWechatListParams.fields,
      success: Envelope(ListOf(WorkWechat), "WorkWechatListEnvelope")
    })
      .annotate(RequiredPermission, read)
      .annotate(OpenApi.Summary, "List work WeChat accounts")
      .annotate(
        OpenApi.Description,
        "keyword matches the WeChat number, phone, device id or nickname (for a masking client not the phone)."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/work-wechats/:id", {
      disableCodecs: true,
      params: IdPath,
      success: Envelope(WorkWechat, "WorkWechatEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, read)
      .annotate(OpenApi.Summary, "Get a work WeChat account")
  )
  .add(
    HttpApiEndpoint.post("create", "/work-wechats", {
      disableCodecs: true,
      error: [ErrorEnvelopes.DuplicateWechatNumber, ErrorEnvelopes.DuplicatePhone, ErrorEnvelopes.DuplicateDeviceId],
      payload: WorkWechatCreate,
      success: Envelope(IdOnly, "WorkWechatCreatedEnvelope")
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Create a work WeChat account")
      .annotate(OpenApi.Description, "400 duplicate_wechat_number, duplicate_phone or duplicate_device_id when the value is taken.")
  )
  .add(
    HttpApiEndpoint.put("update", "/work-wechats/:id", {
      disableCodecs: true,
      params: IdPath,
      payload: WorkWechatUpdate,
      success: EmptyEnvelope("WorkWechatUpdatedEnvelope"),
      error: [
        ErrorEnvelopes.NotFound,
        ErrorEnvelopes.DuplicateWechatNumber,
        ErrorEnvelopes.DuplicatePhone,
        ErrorEnvelopes.DuplicateDeviceId
      ]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Update a work WeChat account")
  )
  .add(
    HttpApiEndpoint.put("setStatus", "/work-wechats/:id/status", {
      disableCodecs: true,
      params: IdPath,
      query: StatusParams.fields,
      success: EmptyEnvelope("WorkWechatStatusEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Enable or disable a work WeChat account")
  )
  .add(
    HttpApiEndpoint.delete("remove", "/work-wechats/:id", {
      disableCodecs: true,
      params: IdPath,
      success: EmptyEnvelope("WorkWechatDeletedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.HasAssociations]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Delete a work WeChat account")
      .annotate(
        OpenApi.Description,
        "Soft delete that releases its unique values; 400 has_associations while associations or users remain. Its logs stay readable."
      )
  )
  .add(
    HttpApiEndpoint.post("associate", "/work-wechats/:id/associate", {
      disableCodecs: true,
      params: IdPath,
      payload: Associate,
      success: EmptyEnvelope("WorkWechatAssociatedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.InvalidInput, ErrorEnvelopes.AlreadyAssociated, ErrorEnvelopes.AccountDisabled]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Associate a matchmaker, company or franchisee")
      .annotate(
        OpenApi.Description,
        "400 already_associated, or account_disabled for a disabled account; 404 for an unknown account or target."
      )
  )
  .add(
    HttpApiEndpoint.post("batchAssociate", "/work-wechats/:id/batch-associate", {
      disableCodecs: true,
      params: IdPath,
      payload: BatchAssociate,
      success: Envelope(BatchCounts, "WorkWechatBatchAssociatedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.InvalidInput, ErrorEnvelopes.AccountDisabled]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Associate several targets")
      .annotate(
        OpenApi.Description,
        "Targets already associated count in skip_count; unknown target ids give 404 with data.missing_ids, and nothing changes."
      )
  )
  .add(
    HttpApiEndpoint.post("disassociate", "/work-wechats/:id/disassociate", {
      disableCodecs: true,
      params: IdPath,
      payload: Disassociate,
      success: EmptyEnvelope("WorkWechatDisassociatedEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Remove an association")
  )
  .add(
    HttpApiEndpoint.post("transfer", "/work-wechats/:id/transfer", {
      disableCodecs: true,
      params: IdPath,
      payload: Transfer,
      success: Envelope(TransferOutcome, "WorkWechatTransferEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.InvalidInput, ErrorEnvelopes.AccountDisabled]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Transfer associations to another account")
      .annotate(
        OpenApi.Description,
        "{id} is the source account. Without target_ids every target of target_type moves; targets the destination already has, or the source lacks, are skipped."
      )
  )
  .add(
    HttpApiEndpoint.post("transferAdmin", "/work-wechats/:id/transfer-admin", {
      disableCodecs: true,
      params: IdPath,
      payload: TransferAdmin,
      success: EmptyEnvelope("WorkWechatTransferAdminEnvelope"),
      error: [
        ErrorEnvelopes.NotFound,
        ErrorEnvelopes.DuplicateWechatNumber,
        ErrorEnvelopes.DuplicatePhone,
        ErrorEnvelopes.DuplicateDeviceId
      ]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Transfer the account to another admin")
  )
  .add(
    HttpApiEndpoint.get("associations", "/work-wechats/:id/associations", {
      disableCodecs: true,
      params: IdPath,
      query: AssociationListParams.fields,
      success: Envelope(ListOf(Association), "WorkWechatAssociationsEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(
        RequiredPermission,
        read
      )
      .annotate(OpenApi.Summary, "List an account's associations")
  )
  .add(
    HttpApiEndpoint.get("logs", "/work-wechats/:id/logs", {
      disableCodecs: true,
      params: IdPath,
      query: PageParams(WORK_WECHAT_PAGE).fields,
      success: Envelope(ListOf(WorkWechatLog), "WorkWechatLogsEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, read)
      .annotate(OpenApi.Summary, "List an account's operation logs")
      .annotate(OpenApi.Description, "Readable after the account is deleted: the audit trail outlives the record.")
  )
  .annotate(
    OpenApi.Description,
    "Work WeChat accounts: associations with matchmakers, companies and franchisees, transfers and operation logs."
  )
  // Platform-wide (SPEC 2.4, 2.5, 2.7): no company owns these records (DECISIONS §14).
  .middleware(Unscoped)
{}

/** The area: the group, how it is signed, and the names it owns. */
export const WorkWechatsArea = Area.permitted(WorkWechatsApi, {
  permissions: ["open:work_wechat:read", "open:work_wechat:write"],
  resources: ["work_wechat", "user"]
})

// The resource names this area's 404s carry (`resources` above), for the domain's `NotFound`.
declare module "../src/domain/errors.js" {
  interface ResourceNames {
    readonly work_wechat: true
    readonly user: true
  }
}
