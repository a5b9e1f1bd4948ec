// Masking of sensitive fields for clients configured for it (DECISIONS.md §3): the one list of the
// fields and how each is starred. Applied by field name at any depth of a success's typed data (so
// every read that returns those fields is covered, free-form event data included); only plain
// objects and arrays are walked, other values are kept as they are.

/** Fields starred like a phone: first 3 and last 4 characters kept. */
const PHONE_FIELDS: ReadonlySet<string> = new Set(["phone", "contact_phone"])
/** Fields replaced by `***`. */
const STAR_FIELDS: ReadonlySet<string> = new Set([
  "workplace",
  "birth_date",
  "wechat",
  "wechat_id",
  "source_id",
  "matchmaker_wechat",
  "matchmaker_wechat_id",
  "credit_code"
])

export const maskPhone = (value: string): string =>
  [...value].length < 7 ? "***" : `${[...value].slice(0, 3).join("")}****${[...value].slice(-4).join("")}`

const isEmpty = (v: unknown): boolean => v === null || v === undefined || v === ""

const maskField = (key: string, value: unknown): unknown => {
  if (isEmpty(value)) return value
  if (PHONE_FIELDS.has(key) && typeof value === "string") return maskPhone(value)
  if (STAR_FIELDS.has(key) && (typeof value === "string" || typeof value === "number")) return "***"
  return maskDeep(value)
}

const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Returns a copy of `value` with every sensitive field masked, at any depth. */
export const maskDeep = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(maskDeep)
  if (value !== null && typeof value === "object" && isPlain(value)) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = maskField(k, v)
    return out
  }
  return value
}
