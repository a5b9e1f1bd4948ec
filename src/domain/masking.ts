// Masking of sensitive fields for clients configured for it (DECISIONS §3), and what such a client
// may search by (DECISIONS §1, "Masking and search"). One table, MASKED_FIELDS, says which fields of
// each resource are masked and how; the masker (maskDeep) and the search rules (keywordFields,
// maskedFilters) are both derived from it, so what a client sees starred is exactly what it cannot
// search by.
//
// The masker applies by field name at any depth of a success's typed data (so every read that
// returns those fields is covered, free-form event data included); only plain objects and arrays
// are walked, other values are kept as they are.

/** How a masked field is shown: `phone` keeps the first 3 and last 4 characters, `stars` is `***`. */
export type Starring = "phone" | "stars"

/** The masked fields of each resource (its record's field names), and how each is shown. */
export const MASKED_FIELDS = {
  guest: { phone: "phone", workplace: "stars", birth_date: "stars", wechat: "stars", source_id: "stars" },
  matchmaker: { phone: "phone", wechat: "stars", wechat_id: "stars" },
  company: { contact_phone: "phone", credit_code: "stars" },
  work_wechat: { phone: "phone" },
  work_group: {},
  /** A work group's member records, and a follow-up task's matchmaker brief. */
  group_member: { phone: "phone", matchmaker_wechat: "stars", matchmaker_wechat_id: "stars" },
  /** Activity registration records. */
  registration: { phone: "phone" }
} as const satisfies Record<string, Readonly<Record<string, Starring>>>

export type MaskedResource = keyof typeof MASKED_FIELDS

/** What each list's `keyword` matches without masking (the record's field names). */
export const KEYWORD_FIELDS = {
  guest: ["name", "phone"],
  matchmaker: ["name", "phone", "wechat"],
  company: ["name"],
  work_wechat: ["wechat_number", "phone", "device_id", "wechat_nickname"],
  work_group: ["name", "group_no", "remark"]
} as const satisfies { readonly [R in MaskedResource]?: ReadonlyArray<string> }

export type SearchedResource = keyof typeof KEYWORD_FIELDS
export type KeywordField<R extends SearchedResource> = (typeof KEYWORD_FIELDS)[R][number]

/** Whether a field of the resource is masked for a masking client. */
export const isMasked = (resource: MaskedResource, field: string): boolean => Object.hasOwn(MASKED_FIELDS[resource], field)

/**
 * The fields a list's `keyword` may match for this caller: all of them, or for a masking client
 * only those it sees unmasked (a masked value must not be recoverable by searching).
 */
export const keywordFields = <R extends SearchedResource>(resource: R, masking: boolean): ReadonlyArray<KeywordField<R>> => {
  const all: ReadonlyArray<KeywordField<R>> = KEYWORD_FIELDS[resource]
  return masking ? all.filter((field) => !isMasked(resource, field)) : all
}

/**
 * The query parameters a masking client may not send: a filter named after a masked field of the
 * resource (guest `workplace`), if present. None for a client without masking.
 */
export const maskedFilters = (resource: MaskedResource, masking: boolean, query: object): ReadonlyArray<string> =>
  masking
    ? Object.entries(query).filter(([key, value]) => value !== undefined && isMasked(resource, key)).map(([key]) => key)
    : []

/** The masker's view of the table: a field name, at any depth, and how it is shown. */
const STARRING_BY_NAME: ReadonlyMap<string, Starring> = (() => {
  const byName = new Map<string, Starring>()
  for (const fields of Object.values(MASKED_FIELDS)) {
    for (const [name, starring] of Object.entries(fields) as ReadonlyArray<[string, Starring]>) {
      const known = byName.get(name)
      if (known !== undefined && known !== starring) throw new Error(`masking: ${name} is starred two ways`)
      byName.set(name, starring)
    }
  }
  return byName
})()

/** Every field name the masker stars, with how (the union of MASKED_FIELDS over resources). */
export const maskedFieldNames = (): ReadonlyMap<string, Starring> => STARRING_BY_NAME

/**
 * The request parameters whose values traces and logs never carry, for any client (DECISIONS §13):
 * every masked field's name (a filter or a body field of that name), and `keyword` where a list's
 * keyword matches a masked field. Derived from the tables, so a new masked field is covered.
 */
export const REDACTED_PARAMETERS: ReadonlyArray<string> = [
  ...STARRING_BY_NAME.keys(),
  ...(Object.entries(KEYWORD_FIELDS).some(([resource, fields]) =>
      fields.some((field: string) => isMasked(resource as SearchedResource, field))
    )
    ? ["keyword"]
    : [])
]

export const maskPhone = (value: string): string =>
  [...value].length < 7 ? "***" : `${[...value].slice(0, 3).join("")}****${[...value].slice(-4).join("")}`

const isEmpty = (v: unknown): boolean => v === null || v === undefined || v === ""

const maskField = (key: string, value: unknown): unknown => {
  if (isEmpty(value)) return value
  const starring = STARRING_BY_NAME.get(key)
  if (starring === "phone" && typeof value === "string") return maskPhone(value)
  if (starring === "stars" && (typeof value === "string" || typeof value === "number")) return "***"
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
