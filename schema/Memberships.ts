// Memberships (SPEC §2.11, §4.10; DECISIONS §3, §5): the record, the create-or-renew body, list
// filters and endpoints; plans are the operator's.
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"

import { MembershipStatus } from "../src/domain/memberships.js"
import * as Area from "./Area.js"
import { Envelope, Id, ListOf, Paging, PositiveIntFromString, RequiredPermission, Timestamp } from "./Common.js"
import { ErrorEnvelopes } from "./Errors.js"

/** The status literals are the domain's (its moves are written over them); the contract names them. */
export { MembershipStatus }

export const MEMBERSHIP_PAGE = { default: 20, max: 100 } as const

export const Membership = Schema.Struct({
  id: Schema.Int,
  user_id: Schema.Int,
  guest_id: Schema.NullOr(Schema.Int),
  plan_name: Schema.String,
  plan_id: Schema.Int,
  status: MembershipStatus,
  started_at: Timestamp,
  expire_at: Timestamp,
  created_at: Timestamp
}).annotate({ identifier: "Membership" })
export type Membership = typeof Membership.Type

export const MembershipCreate = Schema.Struct({
  user_id: Id,
  plan_id: Id,
  guest_id: Schema.optionalKey(Schema.NullOr(Id))
}).annotate({ identifier: "MembershipCreate" })
export type MembershipCreate = typeof MembershipCreate.Type

/** The create-or-renew answer of SPEC §4.10. */
export const MembershipSaved = Schema.Struct({
  id: Schema.Int,
  status: MembershipStatus,
  expire_at: Timestamp
}).annotate({ identifier: "MembershipSaved" })

export const MembershipListParams = Schema.Struct({
  ...Paging(MEMBERSHIP_PAGE),
  user_id: Schema.optional(PositiveIntFromString),
  status: Schema.optional(MembershipStatus),
  company_id: Schema.optional(PositiveIntFromString)
})
export type MembershipListParams = typeof MembershipListParams.Type

export class MembershipsApi extends HttpApiGroup.make("memberships")
  .add(
    HttpApiEndpoint.get("list", "/memberships", {
      disableCodecs: true,
      query: MembershipListParams.fields,
      success: Envelope(ListOf(Membership), "MembershipListEnvelope"),
      error: ErrorEnvelopes.OutOfScope
    })
      .annotate(RequiredPermission, "open:membership:read")
      .annotate(OpenApi.Summary, "List memberships")
      .annotate(
        OpenApi.Description,
        "Newest first; company_id is the company of the linked guest. A client bound to companies lists the memberships of " +
          "its companies' guests (a company_id outside them: 403 out_of_scope)."
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/memberships", {
      disableCodecs: true,
      payload: MembershipCreate,
      success: Envelope(MembershipSaved, "MembershipSavedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.OutOfScope]
    })
      .annotate(RequiredPermission, "open:membership:write")
      .annotate(OpenApi.Summary, "Create or renew a membership")
      .annotate(
        OpenApi.Description,
        "An active membership of the same user and plan is renewed in place: same id, expire_at extended by the plan's " +
          "days. Otherwise a new active membership starts now. Unknown user_id, plan_id or guest_id gives 404. A client bound " +
          "to companies must link a guest of one of them (another company's guest: 404; none: 403 out_of_scope), and may not " +
          "renew an active membership of another company's guest or of none (403 out_of_scope)."
      )
  )
  .annotate(OpenApi.Description, "Platform users' memberships, bought by plan; they expire at expire_at.")
{}

/** The area: the group, how it is signed, and the names it owns. */
export const MembershipsArea = Area.permitted(MembershipsApi, {
  permissions: ["open:membership:read", "open:membership:write"],
  resources: ["membership", "plan"]
})

// The resource names this area's 404s carry (`resources` above), for the domain's `NotFound`.
declare module "../src/domain/errors.js" {
  interface ResourceNames {
    readonly membership: true
    readonly plan: true
  }
}
