// Work WeChat accounts (SPEC §2.4, §4.3): records, associations with matchmakers, companies and
// franchisees, transfers, operation logs.
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"

import { EmptyEnvelope, Envelope, Id, IdOnly, IdPath, ListOf, PageParams, Paging, RequiredPermission, Text, Timestamp } from "./Common.js"
import { NotFoundEnvelope } from "./Errors.js"

export const WORK_WECHAT_PAGE = { default: 20, max: 100 } as const

export const AccountStatus = Schema.Literal("active", "disabled")
export type AccountStatus = typeof AccountStatus.Type
export const TargetType = Schema.Literal("matchmaker", "company", "franchisee")
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
}).annotations({ identifier: "WorkWechat" })
export type WorkWechat = typeof WorkWechat.Type

const nullable = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(Schema.NullOr(s), { exact: true })

/** Phones of work accounts are up to 30 characters (SPEC §2.4), digits and + - space. */
const AccountPhone = Text(30, 1).pipe(Schema.pattern(/^[0-9+\- ]+$/, { message: () => "must be digits (with + - or spaces)" }))

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
}).annotations({ identifier: "WorkWechatCreate", parseOptions: { errors: "all" } })
export type WorkWechatCreate = typeof WorkWechatCreate.Type

export const WorkWechatUpdate = Schema.Struct({
  wechat_number: Schema.optionalWith(Text(100, 1), { exact: true }),
  phone: Schema.optionalWith(AccountPhone, { exact: true }),
  ...optionalFields
}).annotations({ identifier: "WorkWechatUpdate", parseOptions: { errors: "all" } })
export type WorkWechatUpdate = typeof WorkWechatUpdate.Type

export const StatusParams = Schema.Struct({ status: AccountStatus }).annotations({ parseOptions: { errors: "all" } })

export const Associate = Schema.Struct({
  target_type: TargetType,
  target_id: Id,
  remark: nullable(Text(500))
}).annotations({ identifier: "WorkWechatAssociate", parseOptions: { errors: "all" } })
export type Associate = typeof Associate.Type

const IdList = Schema.Array(Id).pipe(Schema.minItems(1), Schema.maxItems(1000))

export const BatchAssociate = Schema.Struct({
  target_type: TargetType,
  target_ids: IdList,
  remark: nullable(Text(500))
}).annotations({ identifier: "WorkWechatBatchAssociate", parseOptions: { errors: "all" } })
export type BatchAssociate = typeof BatchAssociate.Type

export const Disassociate = Schema.Struct({
  target_type: TargetType,
  target_id: Id,
  remark: nullable(Text(500))
}).annotations({ identifier: "WorkWechatDisassociate", parseOptions: { errors: "all" } })
export type Disassociate = typeof Disassociate.Type

export const Transfer = Schema.Struct({
  target_type: TargetType,
  target_ids: Schema.optionalWith(IdList, { exact: true }),
  target_work_wechat_id: Id,
  remark: nullable(Text(500))
}).annotations({ identifier: "WorkWechatTransfer", parseOptions: { errors: "all" } })
export type Transfer = typeof Transfer.Type

export const TransferAdmin = Schema.Struct({
  target_admin_id: Id,
  remark: nullable(Text(500))
}).annotations({ identifier: "WorkWechatTransferAdmin", parseOptions: { errors: "all" } })
export type TransferAdmin = typeof TransferAdmin.Type

export const BatchCounts = Schema.Struct({ success_count: Schema.Int, skip_count: Schema.Int }).annotations({ identifier: "BatchCounts" })

export const TransferOutcome = Schema.Struct({
  success_count: Schema.Int,
  skip_count: Schema.Int,
  details: Schema.Array(Schema.Struct({ target_id: Schema.Int, status: Schema.Literal("transferred", "skipped") }))
}).annotations({ identifier: "TransferOutcome" })
export type TransferOutcome = typeof TransferOutcome.Type

export const Association = Schema.Struct({
  id: Schema.Int,
  work_wechat_id: Schema.Int,
  target_type: TargetType,
  target_id: Schema.Int,
  target_name: Schema.NullOr(Schema.String),
  remark: Schema.NullOr(Schema.String),
  created_at: Timestamp
}).annotations({ identifier: "WorkWechatAssociation" })
export type Association = typeof Association.Type

export const LogAction = Schema.Literal(
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
)
export type LogAction = typeof LogAction.Type

const logFields = {
  id: Schema.Int,
  action: LogAction,
  target_type: Schema.NullOr(Schema.String),
  target_id: Schema.NullOr(Schema.Int),
  from_value: Schema.NullOr(Schema.String),
  to_value: Schema.NullOr(Schema.String),
  operator_id: Schema.Int,
  operator_name: Schema.String,
  remark: Schema.NullOr(Schema.String),
  created_at: Timestamp
}

export const WorkWechatLog = Schema.Struct({ ...logFields, work_wechat_id: Schema.Int }).annotations({ identifier: "WorkWechatLog" })
export type WorkWechatLog = typeof WorkWechatLog.Type
export const WorkGroupLogFields = logFields

export const WorkWechatListParams = Schema.Struct({
  ...Paging(WORK_WECHAT_PAGE),
  keyword: Schema.optional(Schema.String),
  status: Schema.optional(AccountStatus)
}).annotations({ parseOptions: { errors: "all" } })
export type WorkWechatListParams = typeof WorkWechatListParams.Type

export const AssociationListParams = Schema.Struct({
  ...Paging(WORK_WECHAT_PAGE),
  target_type: Schema.optional(TargetType)
}).annotations({ parseOptions: { errors: "all" } })
export type AssociationListParams = typeof AssociationListParams.Type

const read = "open:work_wechat:read" as const
const write = "open:work_wechat:write" as const

export class WorkWechatsApi extends HttpApiGroup.make("workWechats")
  .add(
    HttpApiEndpoint.get("list", "/work-wechats").setUrlParams(WorkWechatListParams)
      .addSuccess(Envelope(ListOf(WorkWechat), "WorkWechatListEnvelope")).annotate(RequiredPermission, read)
      .annotate(OpenApi.Summary, "List work WeChat accounts")
      .annotate(OpenApi.Description, "keyword matches the WeChat number, phone, device id or nickname.")
  )
  .add(
    HttpApiEndpoint.get("get", "/work-wechats/:id").setPath(IdPath)
      .addSuccess(Envelope(WorkWechat, "WorkWechatEnvelope")).addError(NotFoundEnvelope).annotate(RequiredPermission, read)
      .annotate(OpenApi.Summary, "Get a work WeChat account")
  )
  .add(
    HttpApiEndpoint.post("create", "/work-wechats").setPayload(WorkWechatCreate)
      .addSuccess(Envelope(IdOnly, "WorkWechatCreatedEnvelope")).annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Create a work WeChat account")
      .annotate(OpenApi.Description, "400 duplicate_wechat_number, duplicate_phone or duplicate_device_id when the value is taken.")
  )
  .add(
    HttpApiEndpoint.put("update", "/work-wechats/:id").setPath(IdPath).setPayload(WorkWechatUpdate)
      .addSuccess(EmptyEnvelope("WorkWechatUpdatedEnvelope")).addError(NotFoundEnvelope).annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Update a work WeChat account")
  )
  .add(
    HttpApiEndpoint.put("setStatus", "/work-wechats/:id/status").setPath(IdPath).setUrlParams(StatusParams)
      .addSuccess(EmptyEnvelope("WorkWechatStatusEnvelope")).addError(NotFoundEnvelope).annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Enable or disable a work WeChat account")
  )
  .add(
    HttpApiEndpoint.del("remove", "/work-wechats/:id").setPath(IdPath)
      .addSuccess(EmptyEnvelope("WorkWechatDeletedEnvelope")).addError(NotFoundEnvelope).annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Delete a work WeChat account")
      .annotate(
        OpenApi.Description,
        "Soft delete that releases its unique values; 400 has_associations while associations or users remain. Its logs stay readable."
      )
  )
  .add(
    HttpApiEndpoint.post("associate", "/work-wechats/:id/associate").setPath(IdPath).setPayload(Associate)
      .addSuccess(EmptyEnvelope("WorkWechatAssociatedEnvelope")).addError(NotFoundEnvelope).annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Associate a matchmaker, company or franchisee")
      .annotate(
        OpenApi.Description,
        "400 already_associated, or account_disabled for a disabled account; 404 for an unknown account or target."
      )
  )
  .add(
    HttpApiEndpoint.post("batchAssociate", "/work-wechats/:id/batch-associate").setPath(IdPath).setPayload(BatchAssociate)
      .addSuccess(Envelope(BatchCounts, "WorkWechatBatchAssociatedEnvelope")).addError(NotFoundEnvelope).annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Associate several targets")
      .annotate(
        OpenApi.Description,
        "Targets already associated count in skip_count; unknown target ids give 404 with data.missing_ids, and nothing changes."
      )
  )
  .add(
    HttpApiEndpoint.post("disassociate", "/work-wechats/:id/disassociate").setPath(IdPath).setPayload(Disassociate)
      .addSuccess(EmptyEnvelope("WorkWechatDisassociatedEnvelope")).addError(NotFoundEnvelope).annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Remove an association")
  )
  .add(
    HttpApiEndpoint.post("transfer", "/work-wechats/:id/transfer").setPath(IdPath).setPayload(Transfer)
      .addSuccess(Envelope(TransferOutcome, "WorkWechatTransferEnvelope")).addError(NotFoundEnvelope).annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Transfer associations to another account")
      .annotate(
        OpenApi.Description,
        "{id} is the source account. Without target_ids every target of target_type moves; targets the destination already has, or the source lacks, are skipped."
      )
  )
  .add(
    HttpApiEndpoint.post("transferAdmin", "/work-wechats/:id/transfer-admin").setPath(IdPath).setPayload(TransferAdmin)
      .addSuccess(EmptyEnvelope("WorkWechatTransferAdminEnvelope")).addError(NotFoundEnvelope).annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Transfer the account to another admin")
  )
  .add(
    HttpApiEndpoint.get("associations", "/work-wechats/:id/associations").setPath(IdPath).setUrlParams(AssociationListParams)
      .addSuccess(Envelope(ListOf(Association), "WorkWechatAssociationsEnvelope")).addError(NotFoundEnvelope).annotate(
        RequiredPermission,
        read
      )
      .annotate(OpenApi.Summary, "List an account's associations")
  )
  .add(
    HttpApiEndpoint.get("logs", "/work-wechats/:id/logs").setPath(IdPath).setUrlParams(PageParams(WORK_WECHAT_PAGE))
      .addSuccess(Envelope(ListOf(WorkWechatLog), "WorkWechatLogsEnvelope")).addError(NotFoundEnvelope).annotate(RequiredPermission, read)
      .annotate(OpenApi.Summary, "List an account's operation logs")
      .annotate(OpenApi.Description, "Readable after the account is deleted: the audit trail outlives the record.")
  )
  .annotate(
    OpenApi.Description,
    "Work WeChat accounts: associations with matchmakers, companies and franchisees, transfers and operation logs."
  )
{}
