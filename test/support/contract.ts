// The contract of an OpenAPI document as flat field paths, and the rule that it only grows
// (SPEC §9: adding fields keeps the version; removing or changing them needs a new path version).
// Plain TypeScript over JSON: `contractOf` reads any OpenAPI 3.1 document, `compareContracts`
// says what changed and whether a client written against the recorded contract breaks.
//
// Which direction breaks whom:
// - responses are read by clients: a removed field, status or enum value, a field that may now be
//   absent, a type the client has not seen (string → string|null, integer → number) or a looser
//   bound breaks them; a new field, status or enum value does not (clients ignore what they do not
//   know, SPEC §9, and must tolerate values added to an enumeration);
// - requests are written by clients: a removed field or parameter (the server would ignore what
//   they send), a new required one, an optional one made required, a narrower type, a removed enum
//   value, a new restriction to an enumeration or a tighter bound breaks them; a new optional field
//   or parameter, a wider type or a looser bound does not.

/** What a field (or parameter, body, response) allows. */
export interface Shape {
  /** JSON types, sorted: string, integer, number, boolean, null, object, array; `any` for `{}`. */
  readonly types: ReadonlyArray<string>
  /** May be absent from its parent object (a parameter or body: not required). */
  readonly optional?: true
  /** The allowed values, sorted by their JSON text, when the field is an enumeration (`enum`/`const`). */
  readonly enum?: ReadonlyArray<unknown>
  readonly minimum?: number
  readonly exclusiveMinimum?: number
  readonly minLength?: number
  readonly minItems?: number
  readonly maximum?: number
  readonly exclusiveMaximum?: number
  readonly maxLength?: number
  readonly maxItems?: number
  readonly pattern?: string
  readonly format?: string
}

/**
 * One operation's contract. Keys are `<where> <what> <path>`: `query page`, `path id`, `header X`,
 * `body application/json name`, `200 application/json data.list[].id` (`[]` an array's items,
 * `{}` a map's values), `query group_nos []`.
 */
export interface OperationContract {
  readonly request: Record<string, Shape>
  readonly response: Record<string, Shape>
}

/** Every operation, keyed `METHOD /path`. */
export type Contract = Record<string, OperationContract>

export interface Change {
  readonly operation: string
  /** The field path, absent when the whole operation is meant. */
  readonly field?: string
  readonly what: string
  readonly breaking: boolean
}

type Json = Record<string, unknown>
type Flat = Record<string, Shape>
type Mutable<A> = { -readonly [K in keyof A]: A[K] }

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]
const LOWER_BOUNDS = ["minimum", "exclusiveMinimum", "minLength", "minItems"] as const
const UPPER_BOUNDS = ["maximum", "exclusiveMaximum", "maxLength", "maxItems"] as const
const EXACT = ["pattern", "format"] as const
const SHAPE_KEYS = ["types", "optional", "enum", ...LOWER_BOUNDS, ...UPPER_BOUNDS, ...EXACT] as const

const unique = (values: ReadonlyArray<string>): Array<string> => [...new Set(values)].sort()

/** Enumeration values without repeats, in the order of their JSON texts. */
const uniqueValues = (values: ReadonlyArray<unknown>): Array<unknown> =>
  unique(values.map((v) => JSON.stringify(v))).map((text) => JSON.parse(text) as unknown)

const hasValue = (values: ReadonlyArray<unknown>, value: unknown): boolean =>
  values.some((v) => JSON.stringify(v) === JSON.stringify(value))

const jsonType = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "array"
    : typeof value === "number"
    ? (Number.isInteger(value) ? "integer" : "number")
    : typeof value === "object"
    ? "object"
    : typeof value

/** The value a local `$ref` names. */
const resolve = (doc: Json, ref: string): unknown =>
  ref.slice(2).split("/").reduce<unknown>(
    (at, key) => (isObject(at) ? at[decodeURIComponent(key).replace(/~1/g, "/").replace(/~0/g, "~")] : undefined),
    doc
  )

/** A child's path under its parent's: `a` + `b` → `a.b`, `a` + `[]` → `a[]`. */
const join = (prefix: string, rel: string): string =>
  rel === "" ? prefix : prefix === "" ? rel : rel.startsWith("[") || rel.startsWith("{") ? prefix + rel : `${prefix}.${rel}`

/** The parent of a path within a schema (`data.list[].id` → `data.list[]`), "" for a top field. */
const parentWithin = (rel: string): string => rel.replace(/(\[\]|\{\}|\.[^.[\]{}]+|^[^.[\]{}]+)$/, "")

/**
 * The parent of a contract key: keys are `<where> <what> <path>` (`200 application/json data.id`,
 * `query page`, `query group_nos []`); the parent of a top path is `<where> <what>`, whose parent is "".
 */
const parentOf = (key: string): string => {
  const parts = key.split(" ")
  if (parts.length <= 2) return ""
  const top = parts.slice(0, 2).join(" ")
  const up = parentWithin(parts.slice(2).join(" "))
  return up === "" ? top : `${top} ${up}`
}

const prefixed = (flat: Flat, prefix: string): Flat =>
  Object.fromEntries(Object.entries(flat).map(([key, shape]) => [join(prefix, key), shape]))

/** A schema's paths under a contract key's `<where> <what>`. */
const underTop = (flat: Flat, top: string): Flat =>
  Object.fromEntries(Object.entries(flat).map(([key, shape]) => [key === "" ? top : `${top} ${key}`, shape]))

/** One shape that admits what any of `shapes` admits (the members of a union). */
const either = (shapes: ReadonlyArray<Shape>): Mutable<Shape> => {
  const out: Mutable<Shape> = { types: unique(shapes.flatMap((s) => s.types)) }
  if (shapes.some((s) => s.optional)) out.optional = true
  if (shapes.every((s) => s.enum !== undefined)) out.enum = uniqueValues(shapes.flatMap((s) => s.enum ?? []))
  for (const key of LOWER_BOUNDS) {
    const values = shapes.map((s) => s[key])
    if (values.every((v) => v !== undefined)) out[key] = Math.min(...values)
  }
  for (const key of UPPER_BOUNDS) {
    const values = shapes.map((s) => s[key])
    if (values.every((v) => v !== undefined)) out[key] = Math.max(...values)
  }
  for (const key of EXACT) {
    const values = unique(shapes.map((s) => s[key] ?? ""))
    if (values.length === 1 && values[0] !== "") out[key] = values[0]!
  }
  return out
}

/** One shape that admits only what all of `shapes` admit (the members of an allOf). */
const both = (shapes: ReadonlyArray<Shape>): Mutable<Shape> => {
  const typed = shapes.filter((s) => !s.types.includes("any"))
  const out: Mutable<Shape> = {
    types: typed.length === 0 ? ["any"] : typed.map((s) => s.types).reduce((a, b) => a.filter((t) => b.includes(t)))
  }
  if (shapes.every((s) => s.optional)) out.optional = true
  const enums = shapes.flatMap((s) => (s.enum !== undefined ? [s.enum] : []))
  if (enums.length > 0) out.enum = enums.reduce((a, b) => a.filter((v) => hasValue(b, v)))
  for (const key of LOWER_BOUNDS) {
    const values = shapes.flatMap((s) => (s[key] !== undefined ? [s[key]] : []))
    if (values.length > 0) out[key] = Math.max(...values)
  }
  for (const key of UPPER_BOUNDS) {
    const values = shapes.flatMap((s) => (s[key] !== undefined ? [s[key]] : []))
    if (values.length > 0) out[key] = Math.min(...values)
  }
  for (const key of EXACT) {
    const value = shapes.find((s) => s[key] !== undefined)?.[key]
    if (value !== undefined) out[key] = value
  }
  return out
}

const canHoldChildren = (shape: Shape | undefined): boolean =>
  shape !== undefined && shape.types.some((t) => t === "object" || t === "array" || t === "any")

/** A union's flattening: a field is optional unless every member that can hold it has it, required. */
const unionOf = (members: ReadonlyArray<Flat>): Flat => {
  const out: Flat = { "": either(members.map((m) => m[""]!)) }
  const keys = unique(members.flatMap((m) => Object.keys(m))).filter((k) => k !== "")
  for (const key of keys) {
    const eligible = members.filter((m) => canHoldChildren(m[parentWithin(key)]))
    const present = eligible.flatMap((m) => (m[key] !== undefined ? [m[key]] : []))
    const shape = either(present)
    if (present.length < eligible.length) shape.optional = true
    out[key] = shape
  }
  return out
}

/** An allOf's flattening: every member's fields, each as strict as all members make it. */
const intersectionOf = (members: ReadonlyArray<Flat>): Flat => {
  const keys = unique(members.flatMap((m) => Object.keys(m)))
  return Object.fromEntries(keys.map((key) => [key, both(members.flatMap((m) => (m[key] !== undefined ? [m[key]] : [])))]))
}

/** A JSON schema as field paths relative to it ("" is the schema itself). */
export const flattenSchema = (doc: Json, node: unknown, refs: ReadonlyArray<string> = []): Flat => {
  if (!isObject(node)) return { "": { types: node === false ? [] : ["any"] } }
  if (typeof node.$ref === "string") {
    const ref = node.$ref
    const { $ref: _ref, ...siblings } = node
    const target: Flat = refs.includes(ref)
      ? { "": { types: [`recursive ${ref.split("/").pop()}`] } }
      : flattenSchema(doc, resolve(doc, ref), [...refs, ref])
    return Object.keys(siblings).length === 0 ? target : intersectionOf([target, flattenSchema(doc, siblings, refs)])
  }
  const union = node.anyOf ?? node.oneOf
  if (Array.isArray(union) || Array.isArray(node.allOf)) {
    const { anyOf: _a, oneOf: _o, allOf, ...own } = node
    const parts: Array<Flat> = []
    if (Array.isArray(union)) parts.push(unionOf(union.map((m) => flattenSchema(doc, m, refs))))
    if (Array.isArray(allOf)) parts.push(...allOf.map((m) => flattenSchema(doc, m, refs)))
    const constraining = ["type", "properties", "items", "enum", "const"].some((k) => k in own)
    return intersectionOf(constraining ? [...parts, flattenSchema(doc, own, refs)] : parts)
  }
  const shape: Mutable<Shape> = { types: [] }
  const values = "const" in node ? [node.const] : Array.isArray(node.enum) ? node.enum : undefined
  if (values !== undefined) shape.enum = uniqueValues(values)
  shape.types = typeof node.type === "string"
    ? [node.type]
    : Array.isArray(node.type)
    ? unique(node.type.map(String))
    : values !== undefined
    ? unique(values.map(jsonType))
    : isObject(node.properties)
    ? ["object"]
    : "items" in node
    ? ["array"]
    : ["any"]
  for (const key of [...LOWER_BOUNDS, ...UPPER_BOUNDS]) if (typeof node[key] === "number") shape[key] = node[key]
  for (const key of EXACT) if (typeof node[key] === "string") shape[key] = node[key]
  const out: Flat = { "": shape }
  const required = new Set(Array.isArray(node.required) ? node.required.map(String) : [])
  for (const [name, sub] of Object.entries(isObject(node.properties) ? node.properties : {})) {
    const child = flattenSchema(doc, sub, refs)
    if (!required.has(name)) child[""] = { ...child[""]!, optional: true }
    Object.assign(out, prefixed(child, name))
  }
  if ("items" in node) Object.assign(out, prefixed(flattenSchema(doc, node.items, refs), "[]"))
  if (isObject(node.additionalProperties)) {
    Object.assign(out, prefixed(flattenSchema(doc, node.additionalProperties, refs), "{}"))
  }
  return out
}

const withOptional = (flat: Flat, optional: boolean): Flat => optional ? { ...flat, "": { ...flat[""]!, optional: true } } : flat

/** The contract of an OpenAPI document: every operation's parameters, bodies and responses. */
export const contractOf = (document: unknown): Contract => {
  if (!isObject(document) || !isObject(document.paths)) throw new Error("not an OpenAPI document: no paths")
  const doc = document
  const follow = (node: unknown): Json => {
    let current = node
    for (let i = 0; i < 10 && isObject(current) && typeof current.$ref === "string"; i++) current = resolve(doc, current.$ref)
    return isObject(current) ? current : {}
  }
  const contract: Contract = {}
  for (const [path, item] of Object.entries(document.paths)) {
    if (!isObject(item)) continue
    for (const method of METHODS) {
      const op = item[method]
      if (!isObject(op)) continue
      const request: Flat = {}
      const parameters = [
        ...(Array.isArray(item.parameters) ? item.parameters : []),
        ...(Array.isArray(op.parameters) ? op.parameters : [])
      ]
      for (const raw of parameters) {
        const p = follow(raw)
        const flat = withOptional(flattenSchema(doc, p.schema ?? {}), p.required !== true)
        Object.assign(request, underTop(flat, `${String(p.in)} ${String(p.name)}`))
      }
      const body = follow(op.requestBody)
      for (const [media, content] of Object.entries(isObject(body.content) ? body.content : {})) {
        const flat = withOptional(flattenSchema(doc, follow(content).schema ?? {}), body.required !== true)
        Object.assign(request, underTop(flat, `body ${media}`))
      }
      const response: Flat = {}
      for (const [status, raw] of Object.entries(isObject(op.responses) ? op.responses : {})) {
        const content = follow(raw).content
        if (!isObject(content) || Object.keys(content).length === 0) response[status] = { types: ["empty"] }
        for (const [media, c] of Object.entries(isObject(content) ? content : {})) {
          Object.assign(response, underTop(flattenSchema(doc, follow(c).schema ?? {}), `${status} ${media}`))
        }
      }
      contract[`${method.toUpperCase()} ${path}`] = { request, response }
    }
  }
  return contract
}

const texts = (values: ReadonlyArray<unknown>): string => values.map((v) => JSON.stringify(v)).join(", ")

/** `t` is one of `types` (an integer is a number; `any` admits everything). */
const admits = (types: ReadonlyArray<string>, t: string): boolean =>
  types.includes(t) || types.includes("any") || (t === "integer" && types.includes("number"))

/** How `now` differs from `was` for one field; `side` says who reads it. */
const shapeChanges = (side: "request" | "response", was: Shape, now: Shape): Array<{ what: string; breaking: boolean }> => {
  const out: Array<{ what: string; breaking: boolean }> = []
  if (was.optional && !now.optional) {
    out.push({ what: side === "request" ? "optional, now required" : "may be absent, now always present", breaking: side === "request" })
  }
  if (!was.optional && now.optional) {
    out.push({ what: side === "request" ? "required, now optional" : "always present, now may be absent", breaking: side === "response" })
  }
  // A reader must know every type it may get; a writer must still be allowed every type it sends.
  const [reader, written] = side === "response" ? [was.types, now.types] : [now.types, was.types]
  const unadmitted = written.filter((t) => !admits(reader, t))
  if (unadmitted.length > 0) {
    out.push({ what: `type ${was.types.join("|")}, now ${now.types.join("|")}`, breaking: true })
  } else if (was.types.join("|") !== now.types.join("|")) {
    out.push({ what: `type ${was.types.join("|")}, now ${now.types.join("|")}`, breaking: false })
  }
  if (was.enum !== undefined && now.enum !== undefined) {
    const removed = was.enum.filter((v) => !hasValue(now.enum!, v))
    const added = now.enum.filter((v) => !hasValue(was.enum!, v))
    if (removed.length > 0) out.push({ what: `enum values removed: ${texts(removed)}`, breaking: true })
    if (added.length > 0) out.push({ what: `enum values added: ${texts(added)}`, breaking: false })
  } else if (was.enum === undefined && now.enum !== undefined) {
    out.push({ what: `now restricted to ${texts(now.enum)}`, breaking: side === "request" })
  } else if (was.enum !== undefined && now.enum === undefined) {
    out.push({ what: "no longer an enumeration", breaking: false })
  }
  // A bound tightens when a lower one rises or an upper one falls (or one appears).
  const bounds = [
    ...LOWER_BOUNDS.map((key) => [key, was[key], now[key], (a: number, b: number) => b > a] as const),
    ...UPPER_BOUNDS.map((key) => [key, was[key], now[key], (a: number, b: number) => b < a] as const)
  ]
  for (const [key, a, b, tighter] of bounds) {
    if (a === b) continue
    const tightened = a === undefined || (b !== undefined && tighter(a, b))
    out.push({ what: `${key} ${a ?? "none"}, now ${b ?? "none"}`, breaking: side === "request" ? tightened : !tightened })
  }
  for (const key of EXACT) {
    const [a, b] = [was[key], now[key]]
    if (a === b) continue
    const breaking = a !== undefined && b !== undefined ? true : side === "request" ? b !== undefined : a !== undefined
    out.push({ what: `${key} ${a ?? "none"}, now ${b ?? "none"}`, breaking })
  }
  return out
}

/** Every difference between a recorded contract and the current one, breaking ones first. */
export const compareContracts = (recorded: Contract, current: Contract): ReadonlyArray<Change> => {
  const changes: Array<Change> = []
  for (const operation of unique([...Object.keys(recorded), ...Object.keys(current)])) {
    const was = recorded[operation]
    const now = current[operation]
    if (now === undefined) {
      changes.push({ operation, what: "operation removed", breaking: true })
      continue
    }
    if (was === undefined) {
      changes.push({ operation, what: "operation added", breaking: false })
      continue
    }
    for (const side of ["request", "response"] as const) {
      const before = was[side]
      const after = now[side]
      for (const field of unique([...Object.keys(before), ...Object.keys(after)])) {
        const a = before[field]
        const b = after[field]
        const parent = parentOf(field)
        if (b === undefined) {
          // Report the outermost removal only.
          if (parent === "" || after[parent] !== undefined) changes.push({ operation, field, what: "removed", breaking: true })
        } else if (a === undefined) {
          // A new required request field breaks writers, unless its parent is new too (then the parent decides).
          const parentIsNew = parent !== "" && before[parent] === undefined
          const breaking = side === "request" && !b.optional && !parentIsNew
          changes.push({ operation, field, what: breaking ? "added, required" : "added", breaking })
        } else {
          for (const c of shapeChanges(side, a, b)) changes.push({ operation, field, ...c })
        }
      }
    }
  }
  return [...changes.filter((c) => c.breaking), ...changes.filter((c) => !c.breaking)]
}

/** A change as one line: `GET /x  200 application/json data.id: removed`. */
export const describeChange = (c: Change): string => `${c.operation}${c.field !== undefined ? `  ${c.field}` : ""}: ${c.what}`

const renderShape = (shape: Shape): string =>
  JSON.stringify(Object.fromEntries(SHAPE_KEYS.flatMap((key) => (shape[key] !== undefined ? [[key, shape[key]]] : []))))

/** The snapshot file's text: sorted keys, one line per field, so that a diff shows what changed. */
export const renderContract = (contract: Contract): string => {
  const lines: Array<string> = ["{"]
  const operations = Object.keys(contract).sort()
  operations.forEach((operation, i) => {
    lines.push(`  ${JSON.stringify(operation)}: {`)
    ;(["request", "response"] as const).forEach((side, j) => {
      const fields = Object.keys(contract[operation]![side]).sort()
      lines.push(`    ${JSON.stringify(side)}: {`)
      fields.forEach((field, k) => {
        const comma = k < fields.length - 1 ? "," : ""
        lines.push(`      ${JSON.stringify(field)}: ${renderShape(contract[operation]![side][field]!)}${comma}`)
      })
      lines.push(`    }${j === 0 ? "," : ""}`)
    })
    lines.push(`  }${i < operations.length - 1 ? "," : ""}`)
  })
  lines.push("}")
  return `${lines.join("\n")}\n`
}
