// What a guest card gives (DECISIONS §8): the parsed card itself, and from it the fields of a
// guest — SPEC's camelCase parsed keys become guest field names, overrides replace or add fields,
// and a short summary is written. The recognisers in src/card produce ParsedCard values.
import type { Education, MaritalStatus } from "./guestFields.js"

/** The structured partner requirement read from a card (a subset of the API's requirement_tags). */
export interface CardRequirementTags {
  age_min?: number | null
  age_max?: number | null
  height_min?: number | null
  height_max?: number | null
  /** 1 高中及以下, 2 大专, 3 本科, 4 硕士, 5 博士 (the position in the contract's Education, + 1). */
  education_min?: number | null
  locations?: Array<string> | null
  /** 1 未婚, 2 离异, 3 丧偶 (the position in the contract's MaritalStatus, + 1). */
  marriage_status?: Array<number> | null
  has_house?: 0 | 1 | null
  has_car?: 0 | 1 | null
  other?: string
}

/** What was read from one card (SPEC keys in camelCase); null wherever nothing was recognised. */
export interface ParsedCard {
  name: string | null
  gender: "male" | "female" | null
  age: number | null
  /** cm. */
  height: number | null
  education: Education | null
  occupation: string | null
  /** Own yearly income, yuan. */
  incomeAmount: number | null
  /** Lower bound of the partner's income asked for, yearly yuan. */
  reqIncomeAmount: number | null
  selfIntro: string | null
  /** The free text of 择偶要求. */
  requirement: string | null
  requirementTags: CardRequirementTags | null
  // Extra keys beyond SPEC's list (clients ignore unknown keys):
  /** kg. */
  weight: number | null
  maritalStatus: MaritalStatus | null
  nativePlace: string | null
  phone: string | null
  workplace: string | null
}

const PARSED_TO_FIELD: Readonly<Record<keyof ParsedCard, string>> = {
  name: "name",
  gender: "gender",
  age: "age",
  height: "height",
  education: "education",
  occupation: "occupation",
  incomeAmount: "income_amount",
  reqIncomeAmount: "req_income_amount",
  selfIntro: "self_intro",
  requirement: "requirement",
  requirementTags: "requirement_tags",
  weight: "weight",
  maritalStatus: "marital_status",
  nativePlace: "native_place",
  phone: "phone",
  workplace: "workplace"
}

/** `selfIntro` → `self_intro`; snake_case keys stay as they are. */
export const snakeCase = (key: string): string =>
  (PARSED_TO_FIELD as Record<string, string>)[key] ?? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** The guest fields a card gives: recognised values only (nulls are left out). */
export const cardGuestFields = (parsed: ParsedCard): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(PARSED_TO_FIELD)) {
    const value = parsed[key as keyof ParsedCard]
    if (value === null || value === undefined) continue
    if (typeof value === "number" && !Number.isFinite(value)) continue
    out[field] = typeof value === "number" && field !== "income_amount" && field !== "req_income_amount"
      ? Math.round(value)
      // A recogniser may emit control characters; U+0000 is never storable text (DECISIONS §1).
      : typeof value === "string"
      ? value.replaceAll("\u0000", "")
      : value
  }
  return out
}

/** Overrides use guest field names (camelCase parsed keys accepted too). */
export const normalizeOverrides = (overrides: Readonly<Record<string, unknown>>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(overrides).map(([k, v]) => [snakeCase(k), v]))

/** `李明 男 31岁 硕士`: what was read, in a few words. */
export const cardSummary = (fields: Readonly<Record<string, unknown>>): string =>
  [
    typeof fields.name === "string" ? fields.name : null,
    fields.gender === "male" ? "男" : fields.gender === "female" ? "女" : null,
    typeof fields.age === "number" ? `${fields.age}岁` : null,
    typeof fields.education === "string" ? fields.education : null,
    typeof fields.occupation === "string" ? fields.occupation : null
  ].filter((x): x is string => x !== null).join(" ")
