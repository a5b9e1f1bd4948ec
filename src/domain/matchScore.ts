// The match score of DECISIONS §6: 0-100, how well each guest meets the other's hard filters
// (req_* fields and the tags only the score reads), averaged over both directions.
import { Education, type RequirementTags } from "./guestFields.js"
import { incomeLevelCode, incomeLevelOf } from "./income.js"

/** What the score reads of a guest: its own profile and its requirements of a partner. */
export interface MatchProfile {
  readonly age: number | null
  readonly height: number | null
  readonly weight: number | null
  readonly education: string | null
  readonly income_amount: number | null
  readonly marital_status: string | null
  readonly has_children: string | null
  readonly has_house: string | null
  readonly has_car: string | null
  readonly native_place_code: string | null
  readonly req_age_min: number | null
  readonly req_age_max: number | null
  readonly req_height_min: number | null
  readonly req_weight_min: number | null
  readonly req_weight_max: number | null
  readonly req_education_min: number | null
  readonly req_income_amount: number | null
  readonly req_location_codes: ReadonlyArray<string>
  readonly requirement_tags: RequirementTags | null
}

/** One filter's outcome: met 1, not met 0, unknown (the candidate's value is missing) ½. */
export type Outcome = 1 | 0 | 0.5

export const CRITERIA = [
  "age",
  "height",
  "weight",
  "education",
  "income",
  "marital_status",
  "has_children",
  "has_house",
  "has_car",
  "location"
] as const
export type Criterion = (typeof CRITERIA)[number]

const UNKNOWN: Outcome = 0.5

const bounded = (value: number | null, min: number | null | undefined, max: number | null | undefined): Outcome | undefined => {
  if (min == null && max == null) return undefined
  if (value === null) return UNKNOWN
  return (min == null || value >= min) && (max == null || value <= max) ? 1 : 0
}

/** 1 高中及以下 … 5 博士 (DECISIONS §4), or null for a value outside the set. */
const educationCode = (education: string | null): number | null => {
  const i = (Education.literals as ReadonlyArray<string>).indexOf(education ?? "")
  return i === -1 ? null : i + 1
}

const MARRIAGE_CODES: Readonly<Record<string, number>> = { 未婚: 1, 离异: 2, 丧偶: 3 }

/** A yes/no answer against a 0/1 requirement (0 = has none, 1 = has; SPEC §2.3). */
const yesNo = (value: string | null, wanted: 0 | 1 | null | undefined): Outcome | undefined => {
  if (wanted == null) return undefined
  if (value !== "yes" && value !== "no") return UNKNOWN
  return (value === "yes" ? 1 : 0) === wanted ? 1 : 0
}

/** A region code covers the codes under it: 430000 covers 4301xx, 430100 covers 430102. */
export const regionCovers = (required: string, code: string): boolean => {
  const prefix = required.replace(/(00)+$/, "")
  return code.startsWith(prefix)
}

/** Whether `candidate` meets one of `requirer`'s filters (undefined: `requirer` sets no such filter). */
export const criterionOutcome = (criterion: Criterion, requirer: MatchProfile, candidate: MatchProfile): Outcome | undefined => {
  const tags = requirer.requirement_tags
  switch (criterion) {
    case "age":
      return bounded(candidate.age, requirer.req_age_min, requirer.req_age_max)
    case "height":
      return bounded(candidate.height, requirer.req_height_min, tags?.height_max)
    case "weight":
      return bounded(candidate.weight, requirer.req_weight_min, requirer.req_weight_max)
    case "education": {
      if (requirer.req_education_min === null) return undefined
      const code = educationCode(candidate.education)
      return code === null ? UNKNOWN : code >= requirer.req_education_min ? 1 : 0
    }
    case "income": {
      const min = requirer.req_income_amount
      const maxLevel = tags?.income_max
      if (min === null && maxLevel == null) return undefined
      const amount = candidate.income_amount
      if (amount === null) return UNKNOWN
      const level = incomeLevelCode(incomeLevelOf(amount))
      return (min === null || amount >= min) && (maxLevel == null || level <= maxLevel) ? 1 : 0
    }
    case "marital_status": {
      const accepted = tags?.marriage_status
      if (accepted == null || accepted.length === 0) return undefined
      const code = MARRIAGE_CODES[candidate.marital_status ?? ""]
      return code === undefined ? UNKNOWN : accepted.includes(code) ? 1 : 0
    }
    case "has_children":
      return yesNo(candidate.has_children, tags?.has_children)
    case "has_house":
      return yesNo(candidate.has_house, tags?.has_house)
    case "has_car":
      return yesNo(candidate.has_car, tags?.has_car)
    case "location": {
      if (requirer.req_location_codes.length === 0) return undefined
      const code = candidate.native_place_code
      return code === null ? UNKNOWN : requirer.req_location_codes.some((r) => regionCovers(r, code)) ? 1 : 0
    }
  }
}

/**
 * How well `candidate` meets `requirer`'s filters, 0 to 1: the mean over the filters `requirer`
 * sets; a guest who sets none is fully met.
 */
export const directionScore = (requirer: MatchProfile, candidate: MatchProfile): number => {
  const outcomes = CRITERIA.flatMap((c) => {
    const o = criterionOutcome(c, requirer, candidate)
    return o === undefined ? [] : [o]
  })
  return outcomes.length === 0 ? 1 : outcomes.reduce<number>((sum, o) => sum + o, 0) / outcomes.length
}

/** The match score, 0-100 with two decimals: both directions averaged. */
export const matchScore = (a: MatchProfile, b: MatchProfile): number =>
  Math.round(((directionScore(a, b) + directionScore(b, a)) / 2) * 10_000) / 100
