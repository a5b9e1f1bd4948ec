// Matchmakers (SPEC §2.1, §4.1): records, create/update bodies, list filters and endpoints.
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"

import * as Area from "./Area.js"
import {
  BooleanFromQuery,
  CsvStrings,
  Envelope,
  Id,
  IdPath,
  Int,
  ListOf,
  Paging,
  Phone,
  PositiveIntFromString,
  RequiredPermission,
  Text,
  Timestamp
} from "./Common.js"
import { ErrorEnvelopes } from "./Errors.js"

export const MatchmakerLevel = Schema.Literals(["normal", "silver", "gold"])
export const CertLevel = Schema.Literals(["none", "junior", "intermediate", "senior"])
export type CertLevel = typeof CertLevel.Type
export const MatchmakerStatus = Schema.Literals(["active", "disabled"])

export const Matchmaker = Schema.Struct({
  id: Schema.Int,
  company_id: Schema.NullOr(Schema.Int),
  store_id: Schema.NullOr(Schema.Int),
  name: Schema.String,
  phone: Schema.NullOr(Schema.String),
  wechat: Schema.NullOr(Schema.String),
  wechat_id: Schema.NullOr(Schema.String),
  country: Schema.NullOr(Schema.String),
  province: Schema.NullOr(Schema.String),
  city: Schema.NullOr(Schema.String),
  avatar: Schema.NullOr(Schema.String),
  years_exp: Schema.NullOr(Schema.Int),
  specialty: Schema.NullOr(Schema.String),
  intro: Schema.NullOr(Schema.String),
  guest_count: Schema.Int,
  match_count: Schema.Int,
  success_rate: Schema.Finite,
  credit_score: Schema.Int,
  level: MatchmakerLevel,
  cert_level: CertLevel,
  status: MatchmakerStatus,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotate({ identifier: "Matchmaker" })
export type Matchmaker = typeof Matchmaker.Type

const nullable = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))

/** Writable fields; null clears an optional one. */
export const MatchmakerWritable = {
  company_id: nullable(Id),
  store_id: nullable(Id),
  phone: nullable(Phone),
  wechat: nullable(Text(100)),
  wechat_id: nullable(Text(100)),
  country: nullable(Text(50)),
  province: nullable(Text(50)),
  city: nullable(Text(50)),
  avatar: nullable(Text(255)),
  years_exp: nullable(Int.check(Schema.isBetween({ minimum: 0, maximum: 80 }))),
  specialty: nullable(Text(200)),
  intro: nullable(Text(500)),
  level: Schema.optionalKey(MatchmakerLevel)
}

export const MatchmakerCreate = Schema.Struct({
  name: Text(50, 1),
  ...MatchmakerWritable
}).annotate({ identifier: "MatchmakerCreate" })
export type MatchmakerCreate = typeof MatchmakerCreate.Type

export const MatchmakerUpdate = Schema.Struct({
  name: Schema.optionalKey(Text(50, 1)),
  ...MatchmakerWritable
}).annotate({ identifier: "MatchmakerUpdate" })
export type MatchmakerUpdate = typeof MatchmakerUpdate.Type

/** PUT answer: id, company_id, name, every sent field with its stored value, updated_at. */
export const MatchmakerUpdated = Schema.StructWithRest(
  Schema.Struct({
    id: Schema.Int,
    company_id: Schema.NullOr(Schema.Int),
    name: Schema.String,
    updated_at: Timestamp
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
).annotate({ identifier: "MatchmakerUpdated" })

export const MATCHMAKER_PAGE = { default: 20, max: 500 } as const
export const MATCHMAKER_IDS_PAGE = { default: 10000, max: 10000 } as const

export const WorkWechatScope = Schema.Literals(["all", "direct", "group"])
export const WorkWechatFilter = Schema.Literals(["empty", "has"])

export const MatchmakerListParams = Schema.Struct({
  ...Paging(MATCHMAKER_PAGE),
  company_id: Schema.optional(PositiveIntFromString),
  keyword: Schema.optional(Schema.String),
  status: Schema.optional(MatchmakerStatus),
  level: Schema.optional(MatchmakerLevel),
  has_guests: Schema.optional(BooleanFromQuery),
  work_wechat_id: Schema.optional(PositiveIntFromString),
  group_nos: Schema.optional(CsvStrings),
  work_wechat_scope: Schema.optional(WorkWechatScope),
  work_wechat_filter: Schema.optional(WorkWechatFilter)
})
export type MatchmakerListParams = typeof MatchmakerListParams.Type

export const MatchmakerIdsParams = Schema.Struct({
  ...Paging(MATCHMAKER_IDS_PAGE),
  company_id: Schema.optional(PositiveIntFromString),
  work_wechat_id: Schema.optional(PositiveIntFromString),
  group_nos: Schema.optional(CsvStrings),
  work_wechat_scope: Schema.optional(WorkWechatScope)
})
export type MatchmakerIdsParams = typeof MatchmakerIdsParams.Type

export const MatchmakerIdItem = Schema.Struct({
  id: Schema.Int,
  wechat_id: Schema.String,
  group_nos: Schema.Array(Schema.String),
  work_wechat_ids: Schema.Array(Schema.Int)
}).annotate({ identifier: "MatchmakerIdItem" })
export type MatchmakerIdItem = typeof MatchmakerIdItem.Type

export class MatchmakersApi extends HttpApiGroup.make("matchmakers")
  .add(
    HttpApiEndpoint.get("list", "/matchmakers", {
      disableCodecs: true,
      query: MatchmakerListParams.fields,
      success: Envelope(ListOf(Matchmaker), "MatchmakerListEnvelope")
    })
      .annotate(RequiredPermission, "open:matchmaker:read")
      .annotate(OpenApi.Summary, "List matchmakers")
      .annotate(
        OpenApi.Description,
        "Filters combine. keyword matches name, phone or wechat (for a masking client only name). work_wechat_id, group_nos, work_wechat_scope and work_wechat_filter select by the reach of work WeChat accounts: a direct association, a shared group, or either (all, the default)."
      )
  )
  .add(
    HttpApiEndpoint.get("ids", "/matchmakers/ids", {
      disableCodecs: true,
      query: MatchmakerIdsParams.fields,
      success: Envelope(ListOf(MatchmakerIdItem), "MatchmakerIdsEnvelope")
    })
      .annotate(RequiredPermission, "open:matchmaker:read")
      .annotate(OpenApi.Summary, "List matchmaker WeChat ids with their groups and accounts")
      .annotate(
        OpenApi.Description,
        "Only matchmakers that have a wechat_id. work_wechat_ids are the accounts that reach the matchmaker under work_wechat_scope; group_nos are all of its groups."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/matchmakers/:id", {
      disableCodecs: true,
      params: IdPath,
      success: Envelope(Matchmaker, "MatchmakerEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, "open:matchmaker:read")
      .annotate(OpenApi.Summary, "Get a matchmaker")
  )
  .add(
    HttpApiEndpoint.post("create", "/matchmakers", {
      disableCodecs: true,
      payload: MatchmakerCreate,
      success: Envelope(Matchmaker, "MatchmakerCreatedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.InvalidInput, ErrorEnvelopes.OutOfScope]
    })
      .annotate(RequiredPermission, "open:matchmaker:manage")
      .annotate(OpenApi.Summary, "Create a matchmaker")
      .annotate(OpenApi.Description, "404 when company_id names no company.")
  )
  .add(
    HttpApiEndpoint.put("update", "/matchmakers/:id", {
      disableCodecs: true,
      params: IdPath,
      payload: MatchmakerUpdate,
      success: Envelope(MatchmakerUpdated, "MatchmakerUpdatedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.OutOfScope]
    })
      .annotate(RequiredPermission, "open:matchmaker:manage")
      .annotate(OpenApi.Summary, "Update a matchmaker")
      .annotate(
        OpenApi.Description,
        "Partial update: the answer lists the sent fields with their stored values. 404 for an unknown matchmaker or company_id."
      )
  )
  .annotate(OpenApi.Description, "Matchmakers: records, statistics, and their reach through work WeChat accounts and groups.")
{}

/** The area: the group, how it is signed, and the names it owns. */
export const MatchmakersArea = Area.permitted(MatchmakersApi, {
  permissions: ["open:matchmaker:read", "open:matchmaker:manage"],
  resources: ["matchmaker"]
})

// The resource names this area's 404s carry (`resources` above), for the domain's `NotFound`.
declare module "../src/domain/errors.js" {
  interface ResourceNames {
    readonly matchmaker: true
  }
}
