// Follow-up tasks (SPEC §2.6, §3.1, §4.5; DECISIONS §4, §5, §7): the daily work queue external
// matching systems list, lock (dispatch), read in full and report on (complete, fail, skip).
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"

import * as Area from "./Area.js"
import { documentedAs, Envelope, Id, ListOf, Paging, PositiveIntFromString, RequiredPermission, Text } from "./Common.js"
import { ErrorEnvelopes } from "./Errors.js"
import { Education, Gender, IncomeLevel, RequirementTags } from "./Guests.js"

export const FOLLOW_UP_PAGE = { default: 50, max: 1000 } as const

export const TaskStatus = Schema.Literals(["pending", "dispatched", "completed", "failed", "skipped"])
export type TaskStatus = typeof TaskStatus.Type
export const TaskType = Schema.Literals(["recommend", "revisit", "reactivate"]).annotate({
  description: "recommend (find and report a partner), revisit (check on an earlier recommendation), reactivate (re-engage a quiet guest)"
})
export type TaskType = typeof TaskType.Type

/** A calendar date `YYYY-MM-DD` that exists (2024-02-30 does not). */
export const DateText = documentedAs(
  Schema.String.check(
    Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/u, { message: "must be a date YYYY-MM-DD" }).abort(),
    Schema.makeFilter((s: string) => {
      const t = Date.parse(`${s}T00:00:00Z`)
      return (!Number.isNaN(t) && s >= "0001-01-01" && new Date(t).toISOString().startsWith(s)) || "must be a real date"
    })
  ),
  { type: "string", format: "date" }
)

const IsoTime = Schema.String.annotate({ description: "ISO 8601, YYYY-MM-DDTHH:MM:SS (platform time zone)" })
const Null = <S extends Schema.Top>(s: S) => Schema.NullOr(s)

/** The brief of a list item's guest. `city` is the city of the guest's native place (a guest has no city field). */
export const GuestBrief = Schema.Struct({
  gender: Gender,
  age: Null(Schema.Int),
  city: Null(Schema.String),
  education: Null(Education),
  occupation: Null(Schema.String)
}).annotate({ identifier: "FollowUpGuestBrief" })

export const MatchmakerBrief = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  company_name: Null(Schema.String),
  wechat: Null(Schema.String),
  wechat_id: Null(Schema.String)
}).annotate({ identifier: "FollowUpMatchmakerBrief" })

export const FollowUpTaskListItem = Schema.Struct({
  id: Schema.Int,
  follow_up_id: Schema.Int,
  guest_id: Schema.Int,
  guest_name: Schema.String,
  company_id: Schema.Int,
  task_type: TaskType,
  task_day: Schema.Int,
  scheduled_date: Schema.String.annotate({ description: "YYYY-MM-DD" }),
  status: TaskStatus,
  guest_brief: GuestBrief,
  matchmaker_brief: Null(MatchmakerBrief)
}).annotate({ identifier: "FollowUpTaskListItem" })
export type FollowUpTaskListItem = typeof FollowUpTaskListItem.Type

/** What complete, fail and skip stored; every field null until then. */
export const TaskResult = Schema.Struct({
  matched_guest_id: Null(Schema.Int),
  match_score: Null(Schema.Finite),
  share_link: Null(Schema.String),
  share_channel: Null(Schema.String),
  extra: Null(Schema.Record(Schema.String, Schema.Unknown)),
  error_code: Null(Schema.String),
  error_msg: Null(Schema.String),
  reason: Null(Schema.String)
}).annotate({ identifier: "FollowUpTaskResult" })
export type TaskResult = typeof TaskResult.Type

export const FollowUpTask = Schema.Struct({
  id: Schema.Int,
  follow_up_id: Schema.Int,
  guest_id: Schema.Int,
  company_id: Schema.Int,
  task_type: TaskType,
  task_day: Schema.Int,
  scheduled_date: Schema.String.annotate({ description: "YYYY-MM-DD" }),
  status: TaskStatus,
  dispatched_to: Null(Schema.String).annotate({ description: "the app_key holding the lock (null while pending)" }),
  dispatched_at: Null(IsoTime),
  finished_at: Null(IsoTime),
  result: Null(TaskResult)
}).annotate({ identifier: "FollowUpTask" })

const YesNoCode = Null(Schema.Literals([0, 1])).annotate({ description: "1 yes, 0 no, null unknown" })

/** The guest as an external matcher needs it, with the numeric codes of DECISIONS §4. */
export const FollowUpGuest = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  gender: Schema.Literals([1, 2]).annotate({ description: "1 male, 2 female" }),
  age: Null(Schema.Int),
  height: Null(Schema.Int),
  weight: Null(Schema.Int),
  education_level: Null(Schema.Int).annotate({ description: "1 高中及以下, 2 大专, 3 本科, 4 硕士, 5 博士" }),
  income_level: Null(Schema.Int).annotate({ description: "1 10万以下, 2 10-20万, 3 20-30万, 4 30-50万, 5 50-100万, 6 100万以上" }),
  income_amount: Null(Schema.Int),
  family_income_amount: Null(Schema.Int),
  family_income_level: Null(IncomeLevel),
  occupation: Null(Schema.String),
  workplace: Null(Schema.String),
  native_place: Null(Schema.String),
  native_place_code: Null(Schema.String),
  marriage_status: Null(Schema.Int).annotate({ description: "1 未婚, 2 离异, 3 丧偶" }),
  has_children: YesNoCode,
  has_car: YesNoCode,
  has_house: YesNoCode,
  hobbies: Null(Schema.String),
  personality: Null(Schema.String),
  self_intro: Null(Schema.String),
  photos: Schema.Array(Schema.String),
  req_age_min: Null(Schema.Int),
  req_age_max: Null(Schema.Int),
  req_height_min: Null(Schema.Int),
  req_weight_min: Null(Schema.Int),
  req_weight_max: Null(Schema.Int),
  req_education_min: Null(Schema.Int),
  req_income_amount: Null(Schema.Int),
  req_income_text: Null(Schema.String),
  req_location: Null(Schema.String),
  req_location_codes: Schema.Array(Schema.String),
  req_housing: Null(Schema.String),
  req_health: Null(Schema.String),
  requirement: Null(Schema.String),
  requirement_tags: Null(RequirementTags),
  company_id: Schema.Int
}).annotate({ identifier: "FollowUpGuest" })
export type FollowUpGuest = typeof FollowUpGuest.Type

export const FollowUpMatchmaker = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  phone: Null(Schema.String),
  wechat: Null(Schema.String),
  wechat_id: Null(Schema.String),
  avatar: Null(Schema.String),
  company_id: Null(Schema.Int),
  company_name: Null(Schema.String),
  certified: Schema.Boolean.annotate({ description: "cert_level is not none" }),
  guest_count: Schema.Int,
  match_count: Schema.Int
}).annotate({ identifier: "FollowUpMatchmaker" })

export const FollowUpTaskDetail = Schema.Struct({
  task: FollowUpTask,
  guest: FollowUpGuest,
  matchmaker: Null(FollowUpMatchmaker),
  already_recommended_guest_ids: Schema.Array(Schema.Int).annotate({
    description: "matched_guest_id of the plan's completed tasks, oldest first: do not recommend them again"
  }),
  history_match_count: Schema.Int.annotate({ description: "matches the guest has been in, either side, any status" })
}).annotate({ identifier: "FollowUpTaskDetail" })
export type FollowUpTaskDetail = typeof FollowUpTaskDetail.Type

export const FollowUpTaskListParams = Schema.Struct({
  ...Paging(FOLLOW_UP_PAGE),
  status: Schema.optional(TaskStatus.annotate({ description: "default pending" })),
  task_type: Schema.optional(TaskType),
  date: Schema.optional(DateText.annotate({ description: "scheduled date, YYYY-MM-DD; default today (platform time zone)" })),
  company_id: Schema.optional(PositiveIntFromString)
})
export type FollowUpTaskListParams = typeof FollowUpTaskListParams.Type

export const TaskPath = Schema.Struct({ task_id: PositiveIntFromString })

export const Dispatched = Schema.Struct({
  id: Schema.Int,
  status: Schema.Literal("dispatched"),
  dispatched_at: IsoTime,
  dispatched_to: Schema.String.annotate({ description: "the caller's app_key" }),
  idempotent: Schema.Boolean.annotate({ description: "true when the caller already held this lock (the same lock is returned)" })
}).annotate({ identifier: "FollowUpTaskDispatched" })
export type Dispatched = typeof Dispatched.Type

const opt = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))

export const CompleteBody = Schema.Struct({
  matched_guest_id: opt(Id),
  match_score: opt(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 100 }, { message: "must be a number from 0 to 100" }))),
  share_link: opt(Text(1000)),
  share_channel: opt(Text(50)),
  extra: opt(Schema.Record(Schema.String, Schema.Unknown))
}).annotate({ identifier: "FollowUpTaskComplete" })
export type CompleteBody = typeof CompleteBody.Type

export const FailBody = Schema.Struct({
  error_code: opt(Text(100)),
  error_msg: opt(Text(1000))
}).annotate({ identifier: "FollowUpTaskFail" })
export type FailBody = typeof FailBody.Type

export const SkipBody = Schema.Struct({
  reason: opt(Text(500))
}).annotate({ identifier: "FollowUpTaskSkip" })
export type SkipBody = typeof SkipBody.Type

export const TaskReported = Schema.Struct({
  task_id: Schema.Int,
  status: TaskStatus,
  idempotent: Schema.Boolean.annotate({ description: "true when the task was already in this final state (nothing changed)" })
}).annotate({ identifier: "FollowUpTaskReported" })
export type TaskReported = typeof TaskReported.Type

const read = "open:follow-up:read" as const
const write = "open:follow-up:write" as const

export class FollowUpsApi extends HttpApiGroup.make("followUps")
  .add(
    HttpApiEndpoint.get("list", "/follow-up/tasks", {
      disableCodecs: true,
      query: FollowUpTaskListParams.fields,
      success: Envelope(ListOf(FollowUpTaskListItem), "FollowUpTaskListEnvelope")
    })
      .annotate(RequiredPermission, read)
      .annotate(OpenApi.Summary, "List follow-up tasks")
      .annotate(
        OpenApi.Description,
        "The day's work queue, ordered by scheduled_date then id. status defaults to pending (a dispatched task whose lock " +
          "ran out is pending again), date to today in the platform time zone."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/follow-up/tasks/:task_id", {
      disableCodecs: true,
      params: TaskPath,
      success: Envelope(FollowUpTaskDetail, "FollowUpTaskDetailEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, read)
      .annotate(OpenApi.Summary, "Get a follow-up task with its guest and matchmaker")
      .annotate(
        OpenApi.Description,
        "Everything an external matcher needs: the task, the guest with numeric codes, the matchmaker, the guests the plan " +
          "already recommended and the guest's match count."
      )
  )
  .add(
    HttpApiEndpoint.post("dispatch", "/follow-up/tasks/:task_id/dispatch", {
      disableCodecs: true,
      params: TaskPath,
      success: Envelope(Dispatched, "FollowUpTaskDispatchedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.IdempotencyKeyInProgress, ErrorEnvelopes.InvalidTransition, ErrorEnvelopes.TaskLocked]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Lock a follow-up task")
      .annotate(
        OpenApi.Description,
        "pending → dispatched to the caller. 409 task_locked (data.dispatched_to) while another client holds it; the holder's " +
          "repeat returns the same lock with idempotent true; a lock older than the lease (default 2 h) may be taken over. " +
          "400 invalid_transition on a completed, failed or skipped task. No body."
      )
  )
  .add(
    HttpApiEndpoint.post("complete", "/follow-up/tasks/:task_id/complete", {
      disableCodecs: true,
      params: TaskPath,
      payload: CompleteBody,
      success: Envelope(TaskReported, "FollowUpTaskCompletedEnvelope"),
      error: [
        ErrorEnvelopes.NotFound,
        ErrorEnvelopes.IdempotencyKeyInProgress,
        ErrorEnvelopes.InvalidInput,
        ErrorEnvelopes.InvalidTransition,
        ErrorEnvelopes.TaskLocked
      ]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Report a follow-up task's result")
      .annotate(
        OpenApi.Description,
        "dispatched → completed, by the lock holder only (409 task_locked otherwise); the result is stored and " +
          "follow_up.task_completed is recorded. Again on a completed task: idempotent true. 400 invalid_transition on a " +
          "pending, failed or skipped task; 404 for an unknown matched_guest_id."
      )
  )
  .add(
    HttpApiEndpoint.post("fail", "/follow-up/tasks/:task_id/fail", {
      disableCodecs: true,
      params: TaskPath,
      payload: FailBody,
      success: Envelope(TaskReported, "FollowUpTaskFailedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.IdempotencyKeyInProgress, ErrorEnvelopes.InvalidTransition, ErrorEnvelopes.TaskLocked]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Report a follow-up task as failed")
      .annotate(
        OpenApi.Description,
        "dispatched → failed, by the lock holder only (409 task_locked otherwise), storing error_code and error_msg. Again " +
          "on a failed task: idempotent true. 400 invalid_transition on a pending, completed or skipped task."
      )
  )
  .add(
    HttpApiEndpoint.post("skip", "/follow-up/tasks/:task_id/skip", {
      disableCodecs: true,
      params: TaskPath,
      payload: SkipBody,
      success: Envelope(TaskReported, "FollowUpTaskSkippedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.InvalidTransition, ErrorEnvelopes.TaskLocked]
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Skip a follow-up task")
      .annotate(
        OpenApi.Description,
        "pending or dispatched → skipped, by any client, storing the reason. Again on a skipped task: idempotent true. " +
          "400 invalid_transition on a completed or failed task."
      )
  )
  .annotate(OpenApi.Description, "Follow-up tasks: the daily work queue of external matching systems (list, lock, read, report).")
{}

/** The area: the group, how it is signed, and the names it owns. */
export const FollowUpsArea = Area.permitted(FollowUpsApi, {
  permissions: ["open:follow-up:read", "open:follow-up:write"],
  resources: ["follow_up_task"]
})

// The resource names this area's 404s carry (`resources` above), for the domain's `NotFound`.
declare module "../src/domain/errors.js" {
  interface ResourceNames {
    readonly follow_up_task: true
  }
}
