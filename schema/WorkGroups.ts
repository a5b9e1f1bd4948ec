// WeChat groups (SPEC §2.5, §4.4): records, matchmaker and work-account members, operation logs.
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"

import * as Area from "./Area.js"
import { Unscoped } from "./Auth.js"
import {
  BooleanFromQuery,
  EmptyEnvelope,
  Envelope,
  Id,
  IdOnly,
  IdPath,
  ListOf,
  PageParams,
  Paging,
  PositiveIntFromString,
  RequiredPermission,
  Text,
  Timestamp
} from "./Common.js"
import { ErrorEnvelopes } from "./Errors.js"
import { AccountStatus, StatusParams, WorkGroupLogFields } from "./WorkWechats.js"

export const GROUP_PAGE = { default: 20, max: 1000 } as const
export const GROUP_MATCHMAKER_PAGE = { default: 20, max: 1000 } as const
export const GROUP_ACCOUNT_PAGE = { default: 20, max: 100 } as const
export const GROUP_LOG_PAGE = { default: 20, max: 100 } as const

export const WorkGroup = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  group_no: Schema.String,
  qr_code: Schema.NullOr(Schema.String),
  status: AccountStatus,
  remark: Schema.NullOr(Schema.String),
  matchmaker_count: Schema.Int,
  work_wechat_count: Schema.Int,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotate({ identifier: "WorkGroup" })
export type WorkGroup = typeof WorkGroup.Type

const nullable = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))

const groupFields = {
  group_no: nullable(Text(64)),
  qr_code: nullable(Text(255)),
  status: Schema.optionalKey(AccountStatus),
  remark: nullable(Text(500))
}

export const WorkGroupCreate = Schema.Struct({ name: Text(100, 1), ...groupFields })
  .annotate({ identifier: "WorkGroupCreate" })
export type WorkGroupCreate = typeof WorkGroupCreate.Type

export const WorkGroupUpdate = Schema.Struct({ name: Schema.optionalKey(Text(100, 1)), ...groupFields })
  .annotate({ identifier: "WorkGroupUpdate" })
export type WorkGroupUpdate = typeof WorkGroupUpdate.Type

const IdList = Schema.Array(Id).check(Schema.isMinLength(1), Schema.isMaxLength(1000))

export const AddMatchmaker = Schema.Struct({ matchmaker_id: Id, remark: nullable(Text(500)) })
  .annotate({ identifier: "WorkGroupAddMatchmaker" })
export const AddMatchmakers = Schema.Struct({ matchmaker_ids: IdList, remark: nullable(Text(500)) })
  .annotate({ identifier: "WorkGroupAddMatchmakers" })
export const AddWorkWechat = Schema.Struct({ work_wechat_id: Id, remark: nullable(Text(500)) })
  .annotate({ identifier: "WorkGroupAddWorkWechat" })
export const AddWorkWechats = Schema.Struct({ work_wechat_ids: IdList, remark: nullable(Text(500)) })
  .annotate({ identifier: "WorkGroupAddWorkWechats" })

export const MatchmakerMember = Schema.Struct({
  id: Schema.Int,
  work_group_id: Schema.Int,
  matchmaker_id: Schema.Int,
  matchmaker_name: Schema.String,
  matchmaker_wechat: Schema.NullOr(Schema.String),
  matchmaker_wechat_id: Schema.NullOr(Schema.String),
  remark: Schema.NullOr(Schema.String),
  joined_at: Timestamp
}).annotate({ identifier: "WorkGroupMatchmakerMember" })
export type MatchmakerMember = typeof MatchmakerMember.Type

export const WorkWechatMember = Schema.Struct({
  id: Schema.Int,
  work_group_id: Schema.Int,
  work_wechat_id: Schema.Int,
  wechat_number: Schema.String,
  wechat_nickname: Schema.NullOr(Schema.String),
  phone: Schema.String,
  remark: Schema.NullOr(Schema.String),
  joined_at: Timestamp
}).annotate({ identifier: "WorkGroupWorkWechatMember" })
export type WorkWechatMember = typeof WorkWechatMember.Type

export const WorkGroupLog = Schema.Struct({ ...WorkGroupLogFields, work_group_id: Schema.Int }).annotate({ identifier: "WorkGroupLog" })
export type WorkGroupLog = typeof WorkGroupLog.Type

export const WorkGroupListParams = Schema.Struct({
  ...Paging(GROUP_PAGE),
  keyword: Schema.optional(Schema.String),
  status: Schema.optional(AccountStatus),
  has_matchmaker: Schema.optional(BooleanFromQuery),
  has_work_wechat: Schema.optional(BooleanFromQuery),
  matchmaker_id: Schema.optional(PositiveIntFromString),
  work_wechat_id: Schema.optional(PositiveIntFromString)
})
export type WorkGroupListParams = typeof WorkGroupListParams.Type

export const MemberPath = Schema.Struct({ id: PositiveIntFromString, matchmaker_id: PositiveIntFromString })
export const AccountMemberPath = Schema.Struct({ id: PositiveIntFromString, work_wechat_id: PositiveIntFromString })

const read = "open:work_group:read" as const
const write = "open:work_group:write" as const

export class WorkGroupsApi extends HttpApiGroup.make("workGroups")
  .add(
    HttpApiEndpoint.get("list", "/work-groups", {
      disableCodecs: true,
      query: WorkGroupListParams.fields,
      success: Envelope(ListOf(WorkGroup), "WorkGroupListEnvelope")
    })
      .annotate(RequiredPermission, read)
      .annotate(OpenApi.Summary, "List WeChat groups")
      .annotate(
        OpenApi.Description,
        "keyword matches name, group_no or remark; matchmaker_id and work_wechat_id select the groups of that member."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/work-groups/:id", {
      disableCodecs: true,
      params: IdPath,
      success: Envelope(WorkGroup, "WorkGroupEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, read)
      .annotate(OpenApi.Summary, "Get a WeChat group")
  )
  .add(
    HttpApiEndpoint.post("create", "/work-groups", {
      disableCodecs: true,
      error: ErrorEnvelopes.DuplicateGroupNo,
      payload: WorkGroupCreate,
      success: Envelope(IdOnly, "WorkGroupCreatedEnvelope")
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Create a WeChat group")
      .annotate(OpenApi.Description, "400 duplicate_group_no when a non-empty group_no is taken.")
  )
  .add(
    HttpApiEndpoint.put("update", "/work-groups/:id", {
      disableCodecs: true,
      params: IdPath,
      payload: WorkGroupUpdate,
      success: EmptyEnvelope("WorkGroupUpdatedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.DuplicateGroupNo]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Update a WeChat group")
  )
  .add(
    HttpApiEndpoint.put("setStatus", "/work-groups/:id/status", {
      disableCodecs: true,
      params: IdPath,
      query: StatusParams.fields,
      success: EmptyEnvelope("WorkGroupStatusEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.DuplicateGroupNo]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Enable or disable a WeChat group")
  )
  .add(
    HttpApiEndpoint.delete("remove", "/work-groups/:id", {
      disableCodecs: true,
      params: IdPath,
      success: EmptyEnvelope("WorkGroupDeletedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.GroupHasMembers]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Delete a WeChat group")
      .annotate(OpenApi.Description, "Soft delete; 400 has_members while any member remains. Its logs stay readable.")
  )
  .add(
    HttpApiEndpoint.post("addMatchmakersBatch", "/work-groups/:id/matchmakers/batch", {
      disableCodecs: true,
      params: IdPath,
      payload: AddMatchmakers,
      success: Envelope(Schema.Struct({ success_count: Schema.Int, skip_count: Schema.Int }), "WorkGroupMatchmakersAddedEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Add matchmakers to a group")
      .annotate(
        OpenApi.Description,
        "Members already in the group count in skip_count; unknown ids give 404 with data.missing_ids, and nothing changes."
      )
  )
  .add(
    HttpApiEndpoint.post("addMatchmaker", "/work-groups/:id/matchmakers", {
      disableCodecs: true,
      params: IdPath,
      payload: AddMatchmaker,
      success: EmptyEnvelope("WorkGroupMatchmakerAddedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.AlreadyMember]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Add a matchmaker to a group")
      .annotate(OpenApi.Description, "400 already_member when it is a member.")
  )
  .add(
    HttpApiEndpoint.delete("removeMatchmaker", "/work-groups/:id/matchmakers/:matchmaker_id", {
      disableCodecs: true,
      params: MemberPath,
      success: EmptyEnvelope("WorkGroupMatchmakerRemovedEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Remove a matchmaker from a group")
      .annotate(OpenApi.Description, "404 when the matchmaker is not a member.")
  )
  .add(
    HttpApiEndpoint.post("addWorkWechatsBatch", "/work-groups/:id/work-wechats/batch", {
      disableCodecs: true,
      params: IdPath,
      payload: AddWorkWechats,
      success: Envelope(Schema.Struct({ success_count: Schema.Int, skip_count: Schema.Int }), "WorkGroupWorkWechatsAddedEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Add work WeChat accounts to a group")
      .annotate(
        OpenApi.Description,
        "Members already in the group count in skip_count; unknown ids give 404 with data.missing_ids, and nothing changes."
      )
  )
  .add(
    HttpApiEndpoint.post("addWorkWechat", "/work-groups/:id/work-wechats", {
      disableCodecs: true,
      params: IdPath,
      payload: AddWorkWechat,
      success: EmptyEnvelope("WorkGroupWorkWechatAddedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.AlreadyMember]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Add a work WeChat account to a group")
      .annotate(OpenApi.Description, "400 already_member when it is a member.")
  )
  .add(
    HttpApiEndpoint.delete("removeWorkWechat", "/work-groups/:id/work-wechats/:work_wechat_id", {
      disableCodecs: true,
      params: AccountMemberPath,
      success: EmptyEnvelope("WorkGroupWorkWechatRemovedEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Remove a work WeChat account from a group")
      .annotate(OpenApi.Description, "404 when the account is not a member.")
  )
  .add(
    HttpApiEndpoint.get("matchmakers", "/work-groups/:id/matchmakers", {
      disableCodecs: true,
      params: IdPath,
      query: PageParams(GROUP_MATCHMAKER_PAGE).fields,
      success: Envelope(ListOf(MatchmakerMember), "WorkGroupMatchmakerMembersEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(
        RequiredPermission,
        read
      )
      .annotate(OpenApi.Summary, "List a group's matchmakers")
  )
  .add(
    HttpApiEndpoint.get("workWechats", "/work-groups/:id/work-wechats", {
      disableCodecs: true,
      params: IdPath,
      query: PageParams(GROUP_ACCOUNT_PAGE).fields,
      success: Envelope(ListOf(WorkWechatMember), "WorkGroupWorkWechatMembersEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(
        RequiredPermission,
        read
      )
      .annotate(OpenApi.Summary, "List a group's work WeChat accounts")
  )
  .add(
    HttpApiEndpoint.get("logs", "/work-groups/:id/logs", {
      disableCodecs: true,
      params: IdPath,
      query: PageParams(GROUP_LOG_PAGE).fields,
      success: Envelope(ListOf(WorkGroupLog), "WorkGroupLogsEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, read)
      .annotate(OpenApi.Summary, "List a group's operation logs")
      .annotate(OpenApi.Description, "Readable after the group is deleted: the audit trail outlives the record.")
  )
  .annotate(OpenApi.Description, "WeChat groups and their members (matchmakers and work WeChat accounts), with operation logs.")
  // Platform-wide (SPEC 2.4, 2.5, 2.7): no company owns these records (DECISIONS §14).
  .middleware(Unscoped)
{}

/** The area: the group, how it is signed, and the names it owns. */
export const WorkGroupsArea = Area.permitted(WorkGroupsApi, {
  permissions: ["open:work_group:read", "open:work_group:write"],
  resources: ["work_group"]
})

// The resource names this area's 404s carry (`resources` above), for the domain's `NotFound`.
declare module "../src/domain/errors.js" {
  interface ResourceNames {
    readonly work_group: true
  }
}
