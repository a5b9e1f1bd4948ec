// Guests (SPEC §2.2, §2.3, §4.2): the record, the requirement_tags object, create/update bodies,
// batch bodies and results, list filters and endpoints. Limits are SPEC §8 and DECISIONS §4.
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"

import { Education, GuestStatus, MaritalStatus, RequirementTags } from "../src/domain/guestFields.js"
import * as Area from "./Area.js"
import {
  ComputedAnswer,
  documentedAs,
  Envelope,
  Id,
  IdPath,
  Int,
  ItemwiseField,
  ListOf,
  optionalOut,
  Paging,
  Phone,
  PositiveIntFromString,
  RequiredPermission,
  Text,
  Timestamp
} from "./Common.js"
import { ErrorEnvelopes, Issue } from "./Errors.js"

/** The fields the guest rules read are the domain's; the contract names them. */
export { Education, GuestStatus, MaritalStatus, RequirementTags }

export const GUEST_PAGE = { default: 20, max: 100 } as const
export const GUEST_BATCH_MAX = 50

export const Gender = Schema.Literals(["male", "female"])
export const IncomeLevel = Schema.Literals(["10万以下", "10-20万", "20-30万", "30-50万", "50-100万", "100万以上"])
export const YesNo = Schema.Literals(["yes", "no"])

const nullable = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))

const PhotoUrl = Text(500, 1)
/**
 * A real date from year 1 (PostgreSQL has no year 0: it would refuse the value with a message
 * quoting it, and a birth date is masked, DECISIONS §13).
 */
const DateText = Schema.String.check(
  Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/u, { message: "must be a date YYYY-MM-DD" }).abort(),
  Schema.makeFilter((s: string) =>
    s >= "0001-01-01" && !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s) ||
    "must be a real date"
  )
)
const DateTimeText = Schema.String.check(
  Schema.isPattern(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/u, { message: "must be YYYY-MM-DD HH:MM:SS" })
)

/** Fields a client may write on create and update (derived and computed ones are not here). */
export const guestWritableFields = {
  age: nullable(Int.check(Schema.isBetween({ minimum: 18, maximum: 80 }, { message: "must be an integer from 18 to 80" }))),
  phone: nullable(Phone),
  wechat: nullable(Text(100)),
  workplace: nullable(Text(100)),
  height: nullable(Int.check(Schema.isBetween({ minimum: 100, maximum: 250 }))),
  weight: nullable(Int.check(Schema.isBetween({ minimum: 30, maximum: 300 }))),
  education: nullable(Education),
  occupation: nullable(Text(100)),
  income_level: nullable(IncomeLevel),
  income_amount: nullable(Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000_000 }))),
  family_income_amount: nullable(Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000_000 }))),
  family_income_level: nullable(IncomeLevel),
  marital_status: nullable(MaritalStatus),
  has_children: nullable(YesNo),
  has_house: nullable(YesNo),
  has_car: nullable(YesNo),
  self_intro: nullable(Text(500)),
  requirement: nullable(Text(500)),
  requirement_tags: nullable(RequirementTags),
  req_age_min: nullable(Int.check(Schema.isBetween({ minimum: 18, maximum: 100 }))),
  req_age_max: nullable(Int.check(Schema.isBetween({ minimum: 18, maximum: 100 }))),
  req_height_min: nullable(Int.check(Schema.isBetween({ minimum: 100, maximum: 250 }))),
  req_education_min: nullable(Int.check(Schema.isBetween({ minimum: 1, maximum: 5 }))),
  req_weight_min: nullable(Int.check(Schema.isBetween({ minimum: 30, maximum: 300 }))),
  req_weight_max: nullable(Int.check(Schema.isBetween({ minimum: 30, maximum: 300 }))),
  req_income_amount: nullable(Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000_000 }))),
  req_income_text: nullable(Text(100)),
  req_location: nullable(Text(200)),
  req_housing: nullable(Text(100)),
  req_health: nullable(Text(200)),
  native_place: nullable(Text(100)),
  photos: nullable(Schema.Array(PhotoUrl).check(Schema.isMaxLength(9, { message: "at most 9 photos" }))),
  photo_time: nullable(DateTimeText),
  birth_date: nullable(DateText),
  personality: nullable(Text(200)),
  source_id: nullable(Text(150)),
  source: nullable(Text(150)),
  matchmaker_id: nullable(Id)
}

/** Accepted only by the single-record update (DECISIONS §4); refused per item by batch update. */
export const guestUpdateOnlyFields = {
  ethnicity: nullable(Text(20)),
  hobbies: nullable(Text(200)),
  family_members: nullable(Text(200)),
  health_status: nullable(Text(100)),
  dating_description: nullable(Text(500)),
  accept_flash_marriage: nullable(YesNo)
}
export const UPDATE_ONLY_FIELDS = Object.keys(guestUpdateOnlyFields) as ReadonlyArray<keyof typeof guestUpdateOnlyFields>

export const GuestCreate = Schema.Struct({
  name: Text(20, 1),
  gender: Gender,
  company_id: Id,
  ...guestWritableFields
}).annotate({ identifier: "GuestCreate" })
export type GuestCreate = typeof GuestCreate.Type

export const GuestUpdate = Schema.Struct({
  name: Schema.optionalKey(Text(20, 1)),
  gender: Schema.optionalKey(Gender),
  company_id: Schema.optionalKey(Id),
  ...guestWritableFields,
  ...guestUpdateOnlyFields
}).annotate({ identifier: "GuestUpdate" })
export type GuestUpdate = typeof GuestUpdate.Type

/** One item of a batch update: an id, the single-update fields but the update-only ones, status. */
export const GuestBatchUpdateItem = Schema.Struct({
  id: Id,
  name: Schema.optionalKey(Text(20, 1)),
  gender: Schema.optionalKey(Gender),
  company_id: Schema.optionalKey(Id),
  status: Schema.optionalKey(GuestStatus),
  ...guestWritableFields
}).annotate({ identifier: "GuestBatchUpdateItem" })
export type GuestBatchUpdateItem = typeof GuestBatchUpdateItem.Type

const nullableOut = <S extends Schema.Top>(s: S) => Schema.NullOr(s)

const listFields = {
  id: Schema.Int,
  name: Schema.String,
  gender: Gender,
  age: nullableOut(Schema.Int),
  phone: nullableOut(Schema.String),
  workplace: nullableOut(Schema.String),
  height: nullableOut(Schema.Int),
  weight: nullableOut(Schema.Int),
  education: nullableOut(Education),
  occupation: nullableOut(Schema.String),
  income_level: nullableOut(IncomeLevel),
  income_amount: nullableOut(Schema.Int),
  family_income_amount: nullableOut(Schema.Int),
  family_income_level: nullableOut(IncomeLevel),
  req_income_amount: nullableOut(Schema.Int),
  req_income_text: nullableOut(Schema.String),
  marital_status: nullableOut(MaritalStatus),
  requirement: nullableOut(Schema.String),
  requirement_tags: nullableOut(RequirementTags),
  photos: Schema.Array(Schema.String),
  photo_time: Timestamp,
  company_id: Schema.Int,
  status: GuestStatus,
  created_at: Timestamp,
  updated_at: Timestamp
}

export const GuestListItem = Schema.Struct(listFields).annotate({ identifier: "GuestListItem" })
export type GuestListItem = typeof GuestListItem.Type

export const Guest = Schema.Struct({
  ...listFields,
  wechat: nullableOut(Schema.String),
  has_children: nullableOut(YesNo),
  has_house: nullableOut(YesNo),
  has_car: nullableOut(YesNo),
  self_intro: nullableOut(Schema.String),
  req_age_min: nullableOut(Schema.Int),
  req_age_max: nullableOut(Schema.Int),
  req_height_min: nullableOut(Schema.Int),
  req_education_min: nullableOut(Schema.Int),
  req_weight_min: nullableOut(Schema.Int),
  req_weight_max: nullableOut(Schema.Int),
  req_location: nullableOut(Schema.String),
  req_location_codes: Schema.Array(Schema.String),
  req_housing: nullableOut(Schema.String),
  req_health: nullableOut(Schema.String),
  native_place: nullableOut(Schema.String),
  native_place_code: nullableOut(Schema.String),
  birth_date: nullableOut(Schema.String),
  personality: nullableOut(Schema.String),
  source_id: nullableOut(Schema.String),
  source: nullableOut(Schema.String),
  matchmaker_id: nullableOut(Schema.Int),
  ethnicity: nullableOut(Schema.String),
  hobbies: nullableOut(Schema.String),
  family_members: nullableOut(Schema.String),
  health_status: nullableOut(Schema.String),
  dating_description: nullableOut(Schema.String),
  accept_flash_marriage: nullableOut(YesNo),
  completeness: Schema.Finite.annotate({ description: "share of the 20 profile fields filled, 0 to 1" })
}).annotate({ identifier: "Guest" })
export type Guest = typeof Guest.Type

export const GuestCreated = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  gender: Gender,
  age: nullableOut(Schema.Int),
  requirement: nullableOut(Schema.String),
  requirement_tags: nullableOut(RequirementTags),
  status: GuestStatus,
  created_at: Timestamp
}).annotate({ identifier: "GuestCreated" })

/** PUT answer: id, updated_at and every sent field with its stored value. */
export const GuestUpdated = Schema.StructWithRest(
  Schema.Struct({ id: Schema.Int, updated_at: Timestamp }),
  [Schema.Record(Schema.String, Schema.Unknown)]
).annotate({ identifier: "GuestUpdated" })

export const BatchResult = Schema.Union([
  Schema.Struct({ index: Schema.Int, status: Schema.Literal("success"), id: Schema.Int }),
  Schema.Struct({
    index: Schema.Int,
    status: Schema.Literal("failure"),
    id: optionalOut(Schema.Int),
    error: Schema.String,
    reason: Schema.String,
    issues: optionalOut(Schema.Array(Issue))
  })
]).annotate({ identifier: "GuestBatchResult" })
export type BatchResult = typeof BatchResult.Type

export const BatchOutcome = Schema.Struct({
  success_count: Schema.Int,
  failed_count: Schema.Int,
  results: Schema.Array(BatchResult)
}).annotate({ identifier: "GuestBatchOutcome" })
export type BatchOutcome = typeof BatchOutcome.Type

/**
 * Batch bodies are validated item by item (a bad item fails only itself), so the items are
 * taken as JSON here and decoded one at a time; the documentation shows their real schema, a
 * component of the document (GuestBatchUpdateItem is registered by Api.ts, GuestCreate is the
 * body of POST /guests).
 */
const batchItems = (itemIdentifier: string) =>
  documentedAs(Schema.Array(Schema.Unknown), {
    type: "array",
    maxItems: GUEST_BATCH_MAX,
    items: { $ref: `#/components/schemas/${itemIdentifier}` }
  })

export const GuestBatchCreate = Schema.Struct({ guests: batchItems("GuestCreate") }).annotate({ identifier: "GuestBatchCreate" })
export const GuestBatchUpdate = Schema.Struct({ guests: batchItems("GuestBatchUpdateItem") }).annotate({
  identifier: "GuestBatchUpdate"
})

/** Schemas the document shows only through a batch body's items (see batchItems). */
export const GuestBatchItemSchemas = [GuestBatchUpdateItem] as const

export const GuestListParams = Schema.Struct({
  ...Paging(GUEST_PAGE),
  keyword: Schema.optional(Schema.String),
  gender: Schema.optional(Gender),
  workplace: Schema.optional(Schema.String),
  status: Schema.optional(GuestStatus),
  company_id: Schema.optional(PositiveIntFromString),
  order_by: Schema.optional(Schema.Literals(["created_at", "updated_at"])),
  order_dir: Schema.optional(Schema.Literals(["desc", "asc"]))
})
export type GuestListParams = typeof GuestListParams.Type

/** The parsed keys of a card (SPEC §4.2; camelCase), null where nothing was recognised. */
export const ParsedCard = Schema.Struct({
  name: Schema.NullOr(Schema.String),
  gender: Schema.NullOr(Gender),
  age: Schema.NullOr(Schema.Finite),
  height: Schema.NullOr(Schema.Finite),
  education: Schema.NullOr(Schema.String),
  occupation: Schema.NullOr(Schema.String),
  incomeAmount: Schema.NullOr(Schema.Finite),
  reqIncomeAmount: Schema.NullOr(Schema.Finite),
  selfIntro: Schema.NullOr(Schema.String),
  requirement: Schema.NullOr(Schema.String),
  requirementTags: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  weight: optionalOut(Schema.NullOr(Schema.Finite)),
  maritalStatus: optionalOut(Schema.NullOr(Schema.String)),
  nativePlace: optionalOut(Schema.NullOr(Schema.String)),
  phone: optionalOut(Schema.NullOr(Schema.String)),
  workplace: optionalOut(Schema.NullOr(Schema.String))
}).annotate({ identifier: "ParsedCard" })

export const ExistingGuest = Schema.Struct({ id: Schema.Int, name: Schema.String }).annotate({ identifier: "ExistingGuest" })

export const ParseCardResult = Schema.Struct({
  duplicate: Schema.Boolean,
  image_hash: Schema.String,
  method: Schema.Literals(["ai", "ocr"]),
  parsed: ParsedCard,
  confidence: Schema.Literals(["high", "medium", "low"]),
  existing_guest: optionalOut(ExistingGuest)
}).annotate({ identifier: "ParseCardResult" })
export type ParseCardResult = typeof ParseCardResult.Type

export const CreateFromCardResult = Schema.Union([
  Schema.Struct({
    task_id: Schema.String,
    status: Schema.Literals(["pending", "processing"]),
    async: Schema.Literal(true),
    message: Schema.String
  }),
  Schema.Struct({ duplicate: Schema.Literal(true), existing_guest: ExistingGuest, message: Schema.String })
]).annotate({ identifier: "CreateFromCardResult" })
export type CreateFromCardResult = typeof CreateFromCardResult.Type

export const CardTask = Schema.Struct({
  task_id: Schema.String,
  status: Schema.Literals(["pending", "processing", "done", "failed"]),
  created_at: Schema.String.annotate({ description: "ISO 8601, YYYY-MM-DDTHH:MM:SS" }),
  completed_at: Schema.NullOr(Schema.String),
  result: optionalOut(Schema.Struct({
    method: Schema.Literals(["ai", "ocr"]),
    summary: Schema.String,
    completeness: Schema.Finite,
    saved: Schema.Boolean,
    guest_id: optionalOut(Schema.Int)
  })),
  error: optionalOut(Schema.String)
}).annotate({ identifier: "CardTask" })
export type CardTask = typeof CardTask.Type

/**
 * The guest fields a card upload's `overrides` may set, replacing or adding to the parsed ones;
 * the matchmaker and company come from the form's own fields. Unknown keys are ignored (the
 * default of Schema's `onExcessProperty`); decode it with `{ errors: "all" }`.
 */
const { matchmaker_id: _matchmakerId, ...overridableFields } = guestWritableFields
export const CardOverrides = Schema.Struct({
  name: Schema.optionalKey(Text(20, 1)),
  gender: Schema.optionalKey(Gender),
  ...overridableFields
})
export type CardOverrides = typeof CardOverrides.Type

/**
 * One file part. The service reads the form itself, so this only documents it (as a binary part:
 * the document's own rendering of a persisted file would drop the description).
 */
const CardFile = documentedAs(Schema.Unknown, {
  type: "string",
  format: "binary",
  description: "JPEG or PNG, at most 10 MiB"
})

/**
 * Card uploads are multipart/form-data. The form is read from the exact bytes that were signed,
 * so the contract declares it as a stream (documented fields, decoded by the service).
 */
export const ParseCardForm = Schema.Struct({
  file: CardFile,
  matchmaker_id: Schema.optionalKey(Schema.String.annotate({ description: "int; enables the duplicate check" }))
}).annotate({ identifier: "ParseCardForm" }).pipe(HttpApiSchema.asMultipartStream())

export const CreateFromCardForm = Schema.Struct({
  file: CardFile,
  matchmaker_id: Schema.String.annotate({ description: "int, required" }),
  company_id: Schema.optionalKey(Schema.String.annotate({ description: "int; the matchmaker's company when absent" })),
  overrides: Schema.optionalKey(
    Schema.String.annotate({
      description: "a JSON object of guest fields replacing or adding to the parsed ones; may include photo_time"
    })
  )
}).annotate({ identifier: "CreateFromCardForm" }).pipe(HttpApiSchema.asMultipartStream())

export class GuestsApi extends HttpApiGroup.make("guests")
  .add(
    HttpApiEndpoint.get("list", "/guests", {
      disableCodecs: true,
      query: GuestListParams.fields,
      success: Envelope(ListOf(GuestListItem), "GuestListEnvelope")
    })
      .annotate(RequiredPermission, "open:guest:read")
      .annotate(OpenApi.Summary, "List guests")
      .annotate(
        OpenApi.Description,
        "Newest first unless order_by is given (id breaks ties). keyword matches name or phone; for a masking client only name, and a workplace filter is a 400 invalid_parameter."
      )
  )
  .add(
    HttpApiEndpoint.post("batchCreate", "/guests/batch", {
      disableCodecs: true,
      error: ErrorEnvelopes.BatchTooLarge,
      payload: GuestBatchCreate,
      success: Envelope(BatchOutcome, "GuestBatchCreateEnvelope")
    })
      .annotate(RequiredPermission, "open:guest:write")
      .annotate(ItemwiseField, "guests")
      .annotate(OpenApi.Summary, "Create guests in a batch")
      .annotate(
        OpenApi.Description,
        "Up to 50 guests. Each item succeeds or fails on its own: a failure (an invalid item, an unknown company_id or matchmaker_id) is reported in results with error, reason and issues, and the request still answers 200."
      )
  )
  .add(
    HttpApiEndpoint.put("batchUpdate", "/guests/batch", {
      disableCodecs: true,
      error: ErrorEnvelopes.BatchTooLarge,
      payload: GuestBatchUpdate,
      success: Envelope(BatchOutcome, "GuestBatchUpdateEnvelope")
    })
      .annotate(RequiredPermission, "open:guest:write")
      .annotate(ItemwiseField, "guests")
      .annotate(OpenApi.Summary, "Update guests in a batch")
      .annotate(
        OpenApi.Description,
        "Up to 50 items, each with its id. Each item succeeds or fails on its own (an unknown id fails only that item); the update-only fields of the single update are refused per item."
      )
  )
  .add(
    HttpApiEndpoint.post("parseCard", "/guests/parse-card", {
      disableCodecs: true,
      payload: ParseCardForm,
      success: Envelope(ParseCardResult, "ParseCardEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.ImageBlacklisted, ErrorEnvelopes.UnsupportedImage, ErrorEnvelopes.ParserUnavailable]
    })
      .annotate(RequiredPermission, "open:guest:read")
      .annotate(ComputedAnswer, true)
      .annotate(OpenApi.Summary, "Parse a guest card image")
      .annotate(
        OpenApi.Description,
        "Reads a JPEG or PNG card and creates nothing. With matchmaker_id, an image already imported for that matchmaker answers duplicate: true with existing_guest (404 for an unknown matchmaker). 503 parser_unavailable when no parser is available."
      )
  )
  .add(
    HttpApiEndpoint.post("createFromCard", "/guests/create-from-card", {
      disableCodecs: true,
      payload: CreateFromCardForm,
      success: Envelope(CreateFromCardResult, "CreateFromCardEnvelope"),
      error: [
        ErrorEnvelopes.NotFound,
        ErrorEnvelopes.InvalidInput,
        ErrorEnvelopes.ImageBlacklisted,
        ErrorEnvelopes.UnsupportedImage,
        ErrorEnvelopes.OutOfScope
      ]
    })
      .annotate(RequiredPermission, "open:guest:write")
      .annotate(OpenApi.Summary, "Create a guest from a card image")
      .annotate(
        OpenApi.Description,
        "Asynchronous: answers a task_id to poll at GET /api/open/v1/guests/card-task/{task_id} (or wait for the guest.card_created event). A card already imported for the matchmaker answers duplicate: true with existing_guest. 404 for an unknown matchmaker_id or company_id."
      )
  )
  .add(
    HttpApiEndpoint.get("cardTask", "/guests/card-task/:task_id", {
      disableCodecs: true,
      params: Schema.Struct({ task_id: Schema.String.check(Schema.isPattern(/^ct_[0-9a-f]{24}$/u, { message: "not a card task id" })) }),
      success: Envelope(CardTask, "CardTaskEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, "open:guest:read")
      .annotate(OpenApi.Summary, "Get a card import task")
  )
  .add(
    HttpApiEndpoint.get("get", "/guests/:id", {
      disableCodecs: true,
      params: IdPath,
      success: Envelope(Guest, "GuestEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, "open:guest:read")
      .annotate(OpenApi.Summary, "Get a guest")
  )
  .add(
    HttpApiEndpoint.post("create", "/guests", {
      disableCodecs: true,
      payload: GuestCreate,
      success: Envelope(GuestCreated, "GuestCreatedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.OutOfScope]
    })
      .annotate(RequiredPermission, "open:guest:write")
      .annotate(OpenApi.Summary, "Create a guest")
      .annotate(
        OpenApi.Description,
        "Derived fields (req_* from requirement_tags, location codes, income levels, completeness) are computed. 404 when company_id or matchmaker_id names no record."
      )
  )
  .add(
    HttpApiEndpoint.put("update", "/guests/:id", {
      disableCodecs: true,
      params: IdPath,
      payload: GuestUpdate,
      success: Envelope(GuestUpdated, "GuestUpdatedEnvelope"),
      error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.OutOfScope]
    })
      .annotate(RequiredPermission, "open:guest:write")
      .annotate(OpenApi.Summary, "Update a guest")
      .annotate(
        OpenApi.Description,
        "Partial update: the answer lists the sent fields with their stored values. 404 for an unknown guest, company_id or matchmaker_id."
      )
  )
  .annotate(OpenApi.Description, "Guests: profiles with partner requirements, batch import and update, and import from card images.")
{}

/** The area: the group, how it is signed, and the names it owns. */
export const GuestsArea = Area.permitted(GuestsApi, {
  permissions: ["open:guest:read", "open:guest:write"],
  resources: ["guest", "card_task"]
})

// The resource names this area's 404s carry (`resources` above), for the domain's `NotFound`.
declare module "../src/domain/errors.js" {
  interface ResourceNames {
    readonly guest: true
    readonly card_task: true
  }
}
