// Profile completeness of a guest: the share of the profile fields that are filled. Pure: no I/O.

/** The fields that make up a complete profile, in this order. */
export const COMPLETENESS_FIELDS = [
  "name",
  "gender",
  "age",
  "phone",
  "height",
  "weight",
  "education",
  "occupation",
  "income_amount",
  "marital_status",
  "has_children",
  "has_house",
  "has_car",
  "self_intro",
  "requirement",
  "native_place",
  "photos",
  "birth_date",
  "personality",
  "workplace"
] as const
export type CompletenessField = (typeof COMPLETENESS_FIELDS)[number]

/**
 * Whether a value counts as filled: not null/undefined/NaN, not an empty or whitespace-only
 * string, not an empty array. `0`, `false` and `"no"` are filled.
 */
const isFilled = (value: unknown): boolean => {
  if (value === null || value === undefined) return false
  if (typeof value === "string") return value.trim() !== ""
  if (typeof value === "number") return !Number.isNaN(value)
  if (Array.isArray(value)) return value.length > 0
  return true
}

/** A plain (non-array) object with at least one filled value. */
const hasFilledTag = (tags: unknown): boolean =>
  tags !== null &&
  typeof tags === "object" &&
  !Array.isArray(tags) &&
  Object.values(tags).some(isFilled)

const fieldFilled = (guest: Readonly<Record<string, unknown>>, field: CompletenessField): boolean =>
  field === "requirement"
    ? isFilled(guest["requirement"]) || hasFilledTag(guest["requirement_tags"])
    : isFilled(guest[field])

/**
 * The share (0 to 1, rounded to two decimals) of COMPLETENESS_FIELDS that the guest has filled.
 * `requirement` also counts as filled when `requirement_tags` holds at least one filled value.
 */
export const completeness = (guest: Readonly<Record<string, unknown>>): number => {
  const filled = COMPLETENESS_FIELDS.filter((f) => fieldFilled(guest, f)).length
  return Math.round((filled * 100) / COMPLETENESS_FIELDS.length) / 100
}
