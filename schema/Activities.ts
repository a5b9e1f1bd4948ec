// Activities (SPEC §2.9, §4.8; DECISIONS §4, §5): records, the create and register bodies, the
// registration record, list filters and endpoints.
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"

import { ActivityStatus, AuditStatus } from "../src/domain/activities.js"
import * as Area from "./Area.js"
import { Envelope, Id, IdPath, Int, ListOf, Paging, Phone, PositiveIntFromString, RequiredPermission, Text, Timestamp } from "./Common.js"
import { ErrorEnvelopes } from "./Errors.js"

/** The status literals are the domain's (its moves are written over them); the contract names them. */
export { ActivityStatus, AuditStatus }

export const ACTIVITY_PAGE = { default: 20, max: 100 } as const

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate()

/**
 * `YYYY-MM-DD HH:MM:SS`, a real wall time in the platform time zone. Years before 1970 are refused:
 * an activity is not scheduled in the past century, and JavaScript dates misread years below 100.
 */
export const WallTime = Schema.String.check(
  Schema.isPattern(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/u, { message: "must be YYYY-MM-DD HH:MM:SS" }).abort(),
  Schema.makeFilter((s: string) => {
    const [y, mo, d, h, mi, se] = s.split(/[- :]/).map(Number) as [number, number, number, number, number, number]
    if (y < 1970) return "must be in 1970 or later"
    return mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo) && h <= 23 && mi <= 59 && se <= 59 ||
      "must be a real date and time"
  })
).annotate({ description: "YYYY-MM-DD HH:MM:SS (platform time zone)" })

/** A fee in yuan: 0 (free) or more, at most two decimals. */
export const Fee = Schema.Finite.check(
  Schema.makeFilter(
    (n: number) =>
      n >= 0 && n <= 99_999_999.99 && Math.abs(n * 100 - Math.round(n * 100)) < 1e-6 ||
      "must be an amount from 0 to 99999999.99 with at most two decimals",
    { toJsonSchema: () => ({ minimum: 0, maximum: 99_999_999.99, multipleOf: 0.01 }) }
  )
)

/** Places for one gender: 0 means none; absent or null means unlimited. */
export const Quota = Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000 }, { message: "must be an integer from 0 to 1000000" }))

export const Activity = Schema.Struct({
  id: Schema.Int,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  cover_url: Schema.NullOr(Schema.String),
  address: Schema.String,
  start_time: Timestamp,
  end_time: Timestamp,
  male_quota: Schema.NullOr(Schema.Int),
  female_quota: Schema.NullOr(Schema.Int),
  male_fee: Schema.Finite,
  female_fee: Schema.Finite,
  status: ActivityStatus,
  audit_status: AuditStatus,
  company_id: Schema.Int,
  created_at: Timestamp
}).annotate({ identifier: "Activity" })
export type Activity = typeof Activity.Type

const nullable = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))

export const ActivityCreate = Schema.Struct({
  title: Text(100, 1),
  address: Text(255, 1),
  start_time: WallTime,
  end_time: WallTime,
  company_id: Id,
  description: nullable(Text(2000)),
  cover_url: nullable(Text(500)),
  male_quota: nullable(Quota),
  female_quota: nullable(Quota),
  male_fee: Schema.optionalKey(Fee),
  female_fee: Schema.optionalKey(Fee)
}).annotate({ identifier: "ActivityCreate" })
export type ActivityCreate = typeof ActivityCreate.Type

/** The create answer of SPEC §4.8. */
export const ActivityCreated = Schema.Struct({
  id: Schema.Int,
  status: ActivityStatus,
  audit_status: AuditStatus,
  created_at: Timestamp
}).annotate({ identifier: "ActivityCreated" })

export const RegistrationCreate = Schema.Struct({
  guest_id: Id,
  name: nullable(Text(50, 1)),
  phone: nullable(Phone),
  remark: nullable(Text(500))
}).annotate({ identifier: "RegistrationCreate" })
export type RegistrationCreate = typeof RegistrationCreate.Type

/** The registration record (DECISIONS §4); `fee` is the activity's fee for the guest's gender. */
export const Registration = Schema.Struct({
  registration_id: Schema.Int,
  activity_id: Schema.Int,
  guest_id: Schema.Int,
  name: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  remark: Schema.NullOr(Schema.String),
  fee: Schema.Finite,
  registered_at: Timestamp
}).annotate({ identifier: "Registration" })
export type Registration = typeof Registration.Type

export const ActivityListParams = Schema.Struct({
  ...Paging(ACTIVITY_PAGE),
  status: Schema.optional(ActivityStatus),
  company_id: Schema.optional(PositiveIntFromString)
})
export type ActivityListParams = typeof ActivityListParams.Type

export class ActivitiesApi extends HttpApiGroup.make("activities")
  .add(
    HttpApiEndpoint.get("list", "/activities", {
      disableCodecs: true,
      query: ActivityListParams.fields,
      success: Envelope(ListOf(Activity), "ActivityListEnvelope"),
      error: ErrorEnvelopes.OutOfScope
    })
      .annotate(RequiredPermission, "open:activity:read")
      .annotate(OpenApi.Summary, "List activities")
      .annotate(
        OpenApi.Description,
        "Newest first; filters status and company_id. A client bound to companies lists only theirs (a company_id outside them: 403 out_of_scope)."
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/activities", {
      disableCodecs: true,
      payload: ActivityCreate,
      success: Envelope(ActivityCreated, "ActivityCreatedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.InvalidInput, ErrorEnvelopes.OutOfScope]
    })
      .annotate(RequiredPermission, "open:activity:write")
      .annotate(OpenApi.Summary, "Create an activity")
      .annotate(
        OpenApi.Description,
        "A new activity is a draft pending audit; the platform's operators approve and open it for registration. " +
          "end_time must be after start_time; a quota absent or null is unlimited, 0 gives no places; fees default to 0 (free). " +
          "A client bound to companies creates activities only of its companies (another company_id: 403 out_of_scope)."
      )
  )
  .add(
    HttpApiEndpoint.post("register", "/activities/:id/register", {
      disableCodecs: true,
      params: IdPath,
      payload: RegistrationCreate,
      success: Envelope(Registration, "RegistrationEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.QuotaFull, ErrorEnvelopes.AlreadyRegistered, ErrorEnvelopes.ActivityNotOpen]
    })
      .annotate(RequiredPermission, "open:activity:write")
      .annotate(OpenApi.Summary, "Register a guest for an activity")
      .annotate(
        OpenApi.Description,
        "Needs an activity in status registering (else 400 activity_not_open) and a place left in the quota of the guest's " +
          "gender (else 400 quota_full); a guest registers once (400 already_registered). name and phone default to the guest's. " +
          "For a client bound to companies, an activity or guest of another company is 404 as if unknown."
      )
  )
  .annotate(OpenApi.Description, "Activities (events with registration) that companies organise for their guests.")
{}

/** The area: the group, how it is signed, and the names it owns. */
export const ActivitiesArea = Area.permitted(ActivitiesApi, {
  permissions: ["open:activity:read", "open:activity:write"],
  resources: ["activity"]
})

// The resource names this area's 404s carry (`resources` above), for the domain's `NotFound`.
declare module "../src/domain/errors.js" {
  interface ResourceNames {
    readonly activity: true
  }
}
