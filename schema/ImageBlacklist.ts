// Image blacklist (SPEC §2.7, §4.6; DECISIONS §4, §8): MD5 records for synchronisation and upload
// checks.
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"

import * as Area from "./Area.js"
import { Unscoped } from "./Auth.js"
import { EmptyEnvelope, Envelope, ItemwiseField, ListOf, optionalOut, Paging, PositiveIntFromString, RequiredPermission } from "./Common.js"
import { ErrorEnvelopes } from "./Errors.js"

export const BLACKLIST_PAGE = { default: 100, max: 10000 } as const
export const BLACKLIST_ADD_MAX = 1000
export const BLACKLIST_CHECK_MAX = 500

export const BlacklistSource = Schema.Literals(["external", "upload", "manual", "sync"])
export type BlacklistSource = typeof BlacklistSource.Type
export const BlacklistStatus = Schema.Literals(["active", "disabled"])

export const BlacklistRecord = Schema.Struct({
  id: Schema.Int,
  md5: Schema.String,
  source: BlacklistSource,
  status: BlacklistStatus,
  hit_count: Schema.Int,
  created_at: Schema.String.annotate({ description: "ISO 8601, YYYY-MM-DDTHH:MM:SS (platform time zone)" })
}).annotate({ identifier: "ImageBlacklistRecord" })
export type BlacklistRecord = typeof BlacklistRecord.Type

export const BlacklistListParams = Schema.Struct({
  ...Paging(BLACKLIST_PAGE),
  status: Schema.optional(BlacklistStatus),
  source: Schema.optional(BlacklistSource)
})
export type BlacklistListParams = typeof BlacklistListParams.Type

/** Items are checked one by one (a bad item is reported in `errors`), so they arrive as JSON. */
export const BlacklistAdd = Schema.Struct({
  items: Schema.Array(Schema.Unknown).annotate({
    description:
      `at most ${BLACKLIST_ADD_MAX} items of {md5 (32 hex), source (external|upload|manual|sync, default external), reject_reason}`
  })
}).annotate({ identifier: "ImageBlacklistAdd" })

export const BlacklistAddOutcome = Schema.Struct({
  added: Schema.Int,
  skipped: Schema.Int,
  restored: Schema.Int,
  errors: Schema.Array(Schema.Struct({ index: Schema.Int, md5: Schema.NullOr(Schema.String), reason: Schema.String }))
}).annotate({ identifier: "ImageBlacklistAddOutcome" })
export type BlacklistAddOutcome = typeof BlacklistAddOutcome.Type

export const BlacklistCheck = Schema.Struct({
  md5_list: Schema.Array(Schema.String).annotate({ description: `at most ${BLACKLIST_CHECK_MAX} md5 values` })
}).annotate({ identifier: "ImageBlacklistCheck" })

export const BlacklistCheckOutcome = Schema.Struct({
  blocked: Schema.Array(Schema.String),
  allowed: Schema.Array(Schema.String),
  invalid: optionalOut(Schema.Array(Schema.String))
}).annotate({ identifier: "ImageBlacklistCheckOutcome" })
export type BlacklistCheckOutcome = typeof BlacklistCheckOutcome.Type

const read = "open:image_blacklist:read" as const
const write = "open:image_blacklist:write" as const

export class ImageBlacklistApi extends HttpApiGroup.make("imageBlacklist")
  .add(
    HttpApiEndpoint.get("list", "/image-blacklist", {
      disableCodecs: true,
      query: BlacklistListParams.fields,
      success: Envelope(ListOf(BlacklistRecord), "ImageBlacklistListEnvelope")
    })
      .annotate(RequiredPermission, read)
      .annotate(OpenApi.Summary, "List image blacklist records")
  )
  .add(
    HttpApiEndpoint.post("check", "/image-blacklist/check", {
      disableCodecs: true,
      error: ErrorEnvelopes.BatchTooLarge,
      payload: BlacklistCheck,
      success: Envelope(BlacklistCheckOutcome, "ImageBlacklistCheckEnvelope")
    })
      .annotate(RequiredPermission, read)
      .annotate(OpenApi.Summary, "Check image MD5s against the blacklist")
      .annotate(
        OpenApi.Description,
        "Up to 500 values. blocked lists those matching an active record (each hit is counted); malformed values are listed in invalid."
      )
  )
  .add(
    HttpApiEndpoint.post("add", "/image-blacklist", {
      disableCodecs: true,
      error: ErrorEnvelopes.BatchTooLarge,
      payload: BlacklistAdd,
      success: Envelope(BlacklistAddOutcome, "ImageBlacklistAddEnvelope")
    })
      .annotate(RequiredPermission, write)
      .annotate(ItemwiseField, "items")
      .annotate(OpenApi.Summary, "Add image MD5s to the blacklist")
      .annotate(
        OpenApi.Description,
        "Up to 1000 items. An md5 already active is skipped, a disabled one restored; a bad item is reported in errors and the others proceed."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/image-blacklist/:record_id", {
      disableCodecs: true,
      params: Schema.Struct({ record_id: PositiveIntFromString }),
      success: EmptyEnvelope("ImageBlacklistDeletedEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, write)
      .annotate(OpenApi.Summary, "Delete an image blacklist record")
      .annotate(OpenApi.Description, "Permanent removal.")
  )
  .annotate(OpenApi.Description, "MD5s of images refused at card import, for synchronisation with other systems and checks before upload.")
  // Platform-wide (SPEC 2.4, 2.5, 2.7): no company owns these records (DECISIONS §14).
  .middleware(Unscoped)
{}

/** The area: the group, how it is signed, and the names it owns. */
export const ImageBlacklistArea = Area.permitted(ImageBlacklistApi, {
  permissions: ["open:image_blacklist:read", "open:image_blacklist:write"],
  resources: ["image_blacklist"]
})

// The resource names this area's 404s carry (`resources` above), for the domain's `NotFound`.
declare module "../src/domain/errors.js" {
  interface ResourceNames {
    readonly image_blacklist: true
  }
}
