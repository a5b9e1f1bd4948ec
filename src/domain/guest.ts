// The derived data of a guest write (DECISIONS §6), in one place for create, update and both
// batches: requirement_tags → req_*, income amount/level, family income, req_income_text,
// region codes and completeness. Pure: the current state and what was sent in, the next state out.
import { completeness } from "./completeness.js"
import type { GuestStatus, RequirementTags } from "./guestFields.js"
import { type IncomeLevel, incomeLevelLowerBound, incomeLevelMinAmount, incomeLevelOf, parseIncomeText } from "./income.js"
import { locationCodes, nativePlaceCode } from "./regions.js"

/** Everything stored for a guest that a write can change (ids and timestamps aside). */
export type GuestState = {
  name: string
  gender: "male" | "female"
  company_id: number
  age: number | null
  phone: string | null
  wechat: string | null
  workplace: string | null
  height: number | null
  weight: number | null
  education: string | null
  occupation: string | null
  income_level: IncomeLevel | null
  income_amount: number | null
  family_income_amount: number | null
  family_income_level: IncomeLevel | null
  /** Whether the family income was sent; when not, it follows income_amount. */
  family_income_explicit: boolean
  marital_status: string | null
  has_children: string | null
  has_house: string | null
  has_car: string | null
  self_intro: string | null
  requirement: string | null
  requirement_tags: RequirementTags | null
  req_age_min: number | null
  req_age_max: number | null
  req_height_min: number | null
  req_education_min: number | null
  req_weight_min: number | null
  req_weight_max: number | null
  req_income_amount: number | null
  req_income_text: string | null
  req_location: string | null
  req_location_codes: ReadonlyArray<string>
  req_housing: string | null
  req_health: string | null
  native_place: string | null
  native_place_code: string | null
  photos: ReadonlyArray<string>
  photo_time: string | null
  birth_date: string | null
  personality: string | null
  source_id: string | null
  source: string | null
  matchmaker_id: number | null
  ethnicity: string | null
  hobbies: string | null
  family_members: string | null
  health_status: string | null
  dating_description: string | null
  accept_flash_marriage: string | null
  status: GuestStatus
  completeness: number
}

/** What a request sent: a key present (null included) was sent. */
export type GuestSent = { readonly [K in keyof GuestState]?: GuestState[K] | null }

/** Fields a client never writes: they are derived, computed or internal. */
const NOT_WRITABLE: ReadonlySet<string> = new Set([
  "req_location_codes",
  "native_place_code",
  "completeness",
  "family_income_explicit"
])

export const emptyGuestState = (input: { name: string; gender: "male" | "female"; company_id: number }): GuestState => ({
  ...input,
  age: null,
  phone: null,
  wechat: null,
  workplace: null,
  height: null,
  weight: null,
  education: null,
  occupation: null,
  income_level: null,
  income_amount: null,
  family_income_amount: null,
  family_income_level: null,
  family_income_explicit: false,
  marital_status: null,
  has_children: null,
  has_house: null,
  has_car: null,
  self_intro: null,
  requirement: null,
  requirement_tags: null,
  req_age_min: null,
  req_age_max: null,
  req_height_min: null,
  req_education_min: null,
  req_weight_min: null,
  req_weight_max: null,
  req_income_amount: null,
  req_income_text: null,
  req_location: null,
  req_location_codes: [],
  req_housing: null,
  req_health: null,
  native_place: null,
  native_place_code: null,
  photos: [],
  photo_time: null,
  birth_date: null,
  personality: null,
  source_id: null,
  source: null,
  matchmaker_id: null,
  ethnicity: null,
  hobbies: null,
  family_members: null,
  health_status: null,
  dating_description: null,
  accept_flash_marriage: null,
  status: "incomplete",
  completeness: 0
})

type TagKey = keyof RequirementTags
type ReqField = keyof GuestState

/** requirement_tags keys copied to a req_* field as they are (SPEC §2.3 rule 1). */
const DIRECT_TAGS: ReadonlyArray<readonly [TagKey, ReqField]> = [
  ["age_min", "req_age_min"],
  ["age_max", "req_age_max"],
  ["height_min", "req_height_min"],
  ["weight_min", "req_weight_min"],
  ["weight_max", "req_weight_max"],
  ["education_min", "req_education_min"]
]

const has = (o: object | null | undefined, key: string): boolean => o !== null && o !== undefined && Object.hasOwn(o, key)

const joinList = (items: ReadonlyArray<string> | null | undefined): string | null =>
  items === null || items === undefined || items.length === 0 ? null : items.join("、")

/**
 * The next state of a guest after a write. `current` is the stored state (undefined on create:
 * then `sent` must carry name, gender and company_id). `status` is applied only when the caller
 * allows it (batch update). A photo_time left null takes the creation time when stored.
 */
export const deriveGuest = (
  sent: GuestSent,
  current: GuestState | undefined,
  options: { readonly allowStatus?: boolean } = {}
): GuestState => {
  const next: GuestState = {
    ...(current ?? emptyGuestState({ name: sent.name!, gender: sent.gender!, company_id: sent.company_id! }))
  }
  // The same object seen field by field: what was sent is copied by name (the schema checked it).
  const fields: Record<string, unknown> = next
  for (const [key, value] of Object.entries(sent)) {
    if (value === undefined || NOT_WRITABLE.has(key)) continue
    if (key === "status" && options.allowStatus !== true) continue
    fields[key] = value
  }
  if (next.photos === null) next.photos = []

  // requirement_tags: stored as sent; each key present is copied unless its field was sent too.
  if (has(sent, "requirement_tags")) {
    const tags = sent.requirement_tags ?? null
    if (tags !== null) {
      for (const [tag, field] of DIRECT_TAGS) {
        if (has(tags, tag) && !has(sent, field)) fields[field] = tags[tag] ?? null
      }
      if (has(tags, "income_min") && !has(sent, "req_income_amount") && !has(sent, "req_income_text")) {
        next.req_income_amount = tags.income_min == null ? null : incomeLevelMinAmount(tags.income_min)
      }
      if (has(tags, "locations") && !has(sent, "req_location")) next.req_location = joinList(tags.locations)
      if (has(tags, "health") && !has(sent, "req_health")) next.req_health = joinList(tags.health)
    }
  }

  // req_income_text gives the amount when no explicit amount is sent.
  if (has(sent, "req_income_text") && !has(sent, "req_income_amount")) {
    next.req_income_amount = parseIncomeText(sent.req_income_text ?? null)
  }

  // Own income: the amount wins; a level alone gives its lower bound; the level always follows.
  if (has(sent, "income_amount") || has(sent, "income_level")) {
    next.income_amount = sent.income_amount != null
      ? sent.income_amount
      : sent.income_level != null
      ? incomeLevelLowerBound(sent.income_level)
      : null
  }
  next.income_level = next.income_amount == null ? null : incomeLevelOf(next.income_amount)

  // Family income follows the own income until one is sent; sending null makes it follow again.
  if (has(sent, "family_income_amount") || has(sent, "family_income_level")) {
    if (sent.family_income_amount != null) {
      next.family_income_amount = sent.family_income_amount
      next.family_income_explicit = true
    } else if (sent.family_income_level != null) {
      next.family_income_amount = incomeLevelLowerBound(sent.family_income_level)
      next.family_income_explicit = true
    } else {
      next.family_income_explicit = false
    }
  }
  if (next.family_income_explicit !== true) next.family_income_amount = next.income_amount
  next.family_income_level = next.family_income_amount == null ? null : incomeLevelOf(next.family_income_amount)

  next.req_location_codes = locationCodes(next.req_location)
  next.native_place_code = nativePlaceCode(next.native_place)
  next.completeness = completeness(next)
  return next
}
