// Matches between two guests (SPEC §2.10, §4.9; DECISIONS §5, §6): the record, the create and
// status bodies, list filters and endpoints.
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"

import { MatchStatus } from "../src/domain/matches.js"
import * as Area from "./Area.js"
import { Envelope, Id, IdPath, ListOf, Paging, PositiveIntFromString, RequiredPermission, Timestamp } from "./Common.js"
import { ErrorEnvelopes } from "./Errors.js"

/** The status literals are the domain's (its moves are written over them); the contract names them. */
export { MatchStatus }

/** The states a client may set (a match is created pending). */
export const MatchTargetStatus = Schema.Literals(["pending_date", "dating", "completed", "rejected", "closed"])

export const MATCH_PAGE = { default: 20, max: 100 } as const

/** `YYYY-MM-DD`, a real date (years 1000-9999, which PostgreSQL and JavaScript both read alike). */
export const CalendarDate = Schema.String.check(
  Schema.isPattern(/^[1-9]\d{3}-\d{2}-\d{2}$/u, { message: "must be a date YYYY-MM-DD" }).abort(),
  Schema.makeFilter((s: string) => {
    const date = new Date(`${s}T00:00:00Z`)
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(s) || "must be a real date"
  })
).annotate({ description: "YYYY-MM-DD (platform time zone)" })

export const Match = Schema.Struct({
  id: Schema.Int,
  guest_a_id: Schema.Int,
  guest_b_id: Schema.Int,
  guest_a_matchmaker_id: Schema.NullOr(Schema.Int),
  guest_b_matchmaker_id: Schema.NullOr(Schema.Int),
  match_score: Schema.Finite,
  status: MatchStatus,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotate({ identifier: "Match" })
export type Match = typeof Match.Type

const nullable = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))

export const MatchCreate = Schema.Struct({
  guest_a_id: Id,
  guest_b_id: Id,
  guest_a_matchmaker_id: nullable(Id),
  guest_b_matchmaker_id: nullable(Id)
}).annotate({ identifier: "MatchCreate" })
export type MatchCreate = typeof MatchCreate.Type

export const MatchCreated = Schema.Struct({ id: Schema.Int, status: MatchStatus, created_at: Timestamp })
  .annotate({ identifier: "MatchCreated" })

export const MatchStatusChange = Schema.Struct({ status: MatchTargetStatus })
  .annotate({ identifier: "MatchStatusChange" })

export const MatchStatusChanged = Schema.Struct({ id: Schema.Int, status: MatchStatus, updated_at: Timestamp })
  .annotate({ identifier: "MatchStatusChanged" })

export const MatchListParams = Schema.Struct({
  ...Paging(MATCH_PAGE),
  guest_id: Schema.optional(PositiveIntFromString),
  status: Schema.optional(MatchStatus),
  company_id: Schema.optional(PositiveIntFromString),
  start_date: Schema.optional(CalendarDate),
  end_date: Schema.optional(CalendarDate)
})
export type MatchListParams = typeof MatchListParams.Type

export class MatchesApi extends HttpApiGroup.make("matches")
  .add(
    HttpApiEndpoint.get("list", "/matches", {
      disableCodecs: true,
      query: MatchListParams.fields,
      success: Envelope(ListOf(Match), "MatchListEnvelope"),
      error: ErrorEnvelopes.OutOfScope
    })
      .annotate(RequiredPermission, "open:match:read")
      .annotate(OpenApi.Summary, "List matches")
      .annotate(
        OpenApi.Description,
        "Newest first. guest_id matches either side; company_id is the company of either guest; start_date and end_date " +
          "(inclusive, platform time zone) bound created_at. A client bound to companies lists the matches with a guest of one of " +
          "them (a company_id outside them: 403 out_of_scope)."
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/matches", {
      disableCodecs: true,
      payload: MatchCreate,
      success: Envelope(MatchCreated, "MatchCreatedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.InvalidInput, ErrorEnvelopes.MatchExists]
    })
      .annotate(RequiredPermission, "open:match:write")
      .annotate(OpenApi.Summary, "Create a match")
      .annotate(
        OpenApi.Description,
        "Two different existing guests; each matchmaker defaults to its guest's. An open match (pending, pending_date, " +
          "dating) of the same pair in either order gives 400 match_exists. The service computes match_score. For a client bound " +
          "to companies, a guest of another company is 404 as if unknown."
      )
  )
  .add(
    HttpApiEndpoint.put("updateStatus", "/matches/:id/status", {
      disableCodecs: true,
      params: IdPath,
      payload: MatchStatusChange,
      success: Envelope(MatchStatusChanged, "MatchStatusChangedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.InvalidTransition]
    })
      .annotate(RequiredPermission, "open:match:write")
      .annotate(OpenApi.Summary, "Change a match's status")
      .annotate(
        OpenApi.Description,
        "Allowed moves: pending → pending_date, rejected, closed; pending_date → dating, rejected, closed; dating → " +
          "completed, rejected, closed. Anything else is 400 invalid_transition; the current status again is a no-op."
      )
  )
  .annotate(OpenApi.Description, "Matches between two guests, with their status and score.")
{}

/** The area: the group, how it is signed, and the names it owns. */
export const MatchesArea = Area.permitted(MatchesApi, { permissions: ["open:match:read", "open:match:write"], resources: ["match"] })

// The resource names this area's 404s carry (`resources` above), for the domain's `NotFound`.
declare module "../src/domain/errors.js" {
  interface ResourceNames {
    readonly match: true
  }
}
