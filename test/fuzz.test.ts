// A hostile integrator, derived from the served OpenAPI document: every operation is called,
// signed, with hostile strings, numbers, nesting and types in every field and parameter. No
// answer may be a 5xx, leave the envelope, or carry a status the operation does not document.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { createCredentials, TestServer, testServerLayer } from "./support/harness.js"
import { rawRequest, type RawResponse } from "./support/raw.js"

type Json = Record<string, unknown>
interface Parameter {
  readonly name: string
  readonly in: "query" | "path" | "header"
  readonly required?: boolean
  readonly schema?: Json
}
interface Operation {
  readonly operationId?: string
  readonly parameters?: ReadonlyArray<Parameter>
  readonly requestBody?: { readonly content: Record<string, { readonly schema?: Json }> }
  readonly responses: Record<string, unknown>
}
interface Document {
  readonly paths: Record<string, Record<string, Operation>>
  readonly components: { readonly schemas: Record<string, Json> }
}

/** A small seeded generator, so a failing case can be replayed from its seed. */
const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const deepArray = (levels: number): unknown => {
  let v: unknown = "x"
  for (let i = 0; i < levels; i++) v = [v]
  return v
}
const deepObject = (levels: number): unknown => {
  let v: unknown = 1
  for (let i = 0; i < levels; i++) v = { a: v }
  return v
}

/** Stands for a value nested 5,000 levels deep, spliced into the body text (JSON.stringify would overflow). */
const DEEP = "\u0001deep\u0001"
const DEEP_TEXT = `${"[".repeat(5000)}1${"]".repeat(5000)}`
const bodyText = (value: unknown): string => JSON.stringify(value).replace(JSON.stringify(DEEP), DEEP_TEXT)

/** Hostile JSON values for any field: text, numbers, types and nesting. */
const HOSTILE_VALUES: ReadonlyArray<unknown> = [
  "\u0000",
  DEEP,
  "",
  "a\u0000b",
  "\ud800",
  "\uFFFD\uFFFE",
  "x".repeat(20_000),
  "张".repeat(600),
  "😀😀",
  "' OR 1=1 --",
  "%FF%00",
  "<script>alert(1)</script>",
  "1",
  "null",
  " \t\n",
  0,
  -1,
  1.5,
  2_147_483_648,
  -2_147_483_649,
  9_007_199_254_740_992,
  1e308,
  -1e308,
  1e-7,
  null,
  true,
  false,
  [],
  {},
  ["a", 1, null],
  { "\u0000": 1 },
  deepArray(40),
  deepObject(40)
]

/** Hostile raw query values (already in the form they are sent). */
const HOSTILE_QUERY: ReadonlyArray<string> = [
  "",
  "%00",
  "%FF",
  "%E4%B8",
  "%",
  "%zz",
  "-1",
  "0",
  "1.5",
  "1e3",
  "2147483648",
  "99999999999999999999",
  "true",
  "abc",
  encodeURIComponent("' OR 1=1 --"),
  encodeURIComponent("张三"),
  "x".repeat(5000),
  "a,b,,c",
  "%2C%2C"
]

const HOSTILE_PATH: ReadonlyArray<string> = [
  "0",
  "-1",
  "1.5",
  "2147483648",
  "99999999999999999999",
  "abc",
  "%00",
  "%FF",
  "%20",
  "1e3",
  "ct_zz"
]

const resolve = (doc: Document, schema: Json | undefined, depth = 0): Json => {
  if (schema === undefined || depth > 20) return {}
  const ref = schema.$ref
  if (typeof ref === "string") {
    const name = ref.split("/").pop()!
    return resolve(doc, doc.components.schemas[name], depth + 1)
  }
  return schema
}

/** A plausible value for a schema (the starting point each mutation changes one field of). */
const plausible = (doc: Document, raw: Json | undefined, depth = 0): unknown => {
  const schema = resolve(doc, raw)
  if (depth > 6) return null
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key] as Array<Json> | undefined
    if (options) {
      const nonNull = options.map((o) => resolve(doc, o)).find((o) => o.type !== "null")
      return nonNull ? plausible(doc, nonNull, depth + 1) : null
    }
  }
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  if (schema.const !== undefined) return schema.const
  switch (schema.type) {
    case "string":
      return "x".repeat(Math.max(2, Number(schema.minLength ?? 2)))
    case "integer":
    case "number":
      return Number(schema.minimum ?? 1)
    case "boolean":
      return true
    case "array":
      return [plausible(doc, schema.items as Json | undefined, depth + 1)]
    case "object": {
      const props = (schema.properties ?? {}) as Record<string, Json>
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, plausible(doc, v, depth + 1)]))
    }
    default:
      return null
  }
}

interface Call {
  readonly label: string
  readonly method: string
  readonly path: string
  readonly query: string
  readonly body?: string | Uint8Array
  readonly contentType?: string
}

const multipart = (fields: Record<string, string>, file: Uint8Array | undefined): { body: Uint8Array; contentType: string } => {
  const boundary = "----fuzzBoundary7MA4YWxkTrZu0gW"
  const parts: Array<Uint8Array> = []
  const enc = new TextEncoder()
  for (const [k, v] of Object.entries(fields)) {
    parts.push(enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`))
  }
  if (file) {
    parts.push(
      enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="card.png"\r\nContent-Type: image/png\r\n\r\n`)
    )
    parts.push(file)
    parts.push(enc.encode("\r\n"))
  }
  parts.push(enc.encode(`--${boundary}--\r\n`))
  return { body: new Uint8Array(Buffer.concat(parts)), contentType: `multipart/form-data; boundary=${boundary}` }
}

/** `n` values drawn from `values` (always with the first `keep`), so every field meets varied abuse cheaply. */
const sample = <A>(values: ReadonlyArray<A>, n: number, random: () => number, keep = 0): Array<A> => {
  const rest = values.slice(keep).map((v) => [random(), v] as const).sort((a, b) => a[0] - b[0]).map(([, v]) => v)
  return [...values.slice(0, keep), ...rest].slice(0, Math.max(n, keep))
}

/** Every call the fuzzer makes for one operation: one hostile change at a time, plus whole-body abuse. */
const callsFor = (doc: Document, method: string, template: string, op: Operation, random: () => number): Array<Call> => {
  const params = op.parameters ?? []
  const pathParams = params.filter((p) => p.in === "path")
  const queryParams = params.filter((p) => p.in === "query")
  const fillPath = (override?: readonly [string, string]) =>
    template.replace(
      /\{([^}]+)\}/g,
      (_, name: string) => (override && override[0] === name ? override[1] : name === "task_id" ? "ct_0123456789abcdef01234567" : "1")
    )
  const calls: Array<Call> = []
  const base = { method: method.toUpperCase(), query: "" }
  for (const p of pathParams) {
    for (const v of HOSTILE_PATH) calls.push({ ...base, label: `path ${p.name}=${v}`, path: fillPath([p.name, v]) })
  }
  for (const p of queryParams) {
    for (const v of sample(HOSTILE_QUERY, 9, random, 3)) {
      calls.push({ ...base, label: `query ${p.name}=${v.slice(0, 20)}`, path: fillPath(), query: `${encodeURIComponent(p.name)}=${v}` })
    }
    calls.push({ ...base, label: `query ${p.name} repeated`, path: fillPath(), query: `${p.name}=1&${p.name}=2&${p.name}=%00` })
  }
  calls.push({ ...base, label: "unknown query parameter with NUL", path: fillPath(), query: "zz%00=%FF" })

  const json = op.requestBody?.content["application/json"]?.schema
  if (json !== undefined) {
    const schema = resolve(doc, json)
    const start = plausible(doc, schema) as Json
    const fields = Object.keys((schema.properties ?? {}) as Json)
    for (const field of fields) {
      for (const value of sample(HOSTILE_VALUES, 8, random, 2)) {
        const body = { ...start, [field]: value }
        calls.push({ ...base, label: `body ${field}=${JSON.stringify(value)?.slice(0, 30)}`, path: fillPath(), body: bodyText(body) })
      }
      // Inside arrays of objects (batch items), each item field too.
      const items = resolve(doc, resolve(doc, (schema.properties as Record<string, Json>)[field]).items as Json | undefined)
      const itemFields = Object.keys((items.properties ?? {}) as Json)
      for (const itemField of itemFields) {
        const value = HOSTILE_VALUES[Math.floor(random() * HOSTILE_VALUES.length)]
        const item = { ...(plausible(doc, items) as Json), [itemField]: value }
        calls.push({
          ...base,
          label: `body ${field}[0].${itemField}=${JSON.stringify(value)?.slice(0, 30)}`,
          path: fillPath(),
          body: bodyText({ ...start, [field]: [item, plausible(doc, items)] })
        })
      }
    }
    const raw: ReadonlyArray<readonly [string, string | Uint8Array]> = [
      ["empty body", ""],
      ["null body", "null"],
      ["array body", "[1,2]"],
      ["string body", "\"x\""],
      ["truncated JSON", "{\"a\": "],
      ["not UTF-8", new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
      ["NUL in an unknown key", "{\"x\\u0000\": \"\\u0000\"}"],
      ["deep body", `{"a": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`],
      ["duplicate keys", "{\"a\": 1, \"a\": 2}"]
    ]
    for (const [label, body] of raw) calls.push({ ...base, label, path: fillPath(), body })
    calls.push({ ...base, label: "wrong content type", path: fillPath(), body: JSON.stringify(start), contentType: "text/plain" })
  }
  const form = op.requestBody?.content["multipart/form-data"]?.schema
  if (form !== undefined) {
    const props = Object.keys((resolve(doc, form).properties ?? {}) as Json).filter((k) => k !== "file")
    const png = new Uint8Array(Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"))
    for (const field of props) {
      for (
        const value of [
          "\u0000",
          "%FF",
          "-1",
          "2147483648",
          "{\"name\": \"\\u0000\"}",
          "{\"a\":" + "[".repeat(50) + "]".repeat(50) + "}",
          "x".repeat(5000),
          "[]"
        ]
      ) {
        const { body, contentType } = multipart({ ...Object.fromEntries(props.map((p) => [p, "1"])), [field]: value }, png)
        calls.push({ ...base, label: `form ${field}=${value.slice(0, 20)}`, path: fillPath(), body, contentType })
      }
    }
    const noFile = multipart({ matchmaker_id: "1" }, undefined)
    calls.push({ ...base, label: "form without a file", path: fillPath(), ...noFile })
    calls.push({
      ...base,
      label: "garbage multipart",
      path: fillPath(),
      body: "--x\r\n\u0000",
      contentType: "multipart/form-data; boundary=x"
    })
  }
  return calls
}

const isEnvelope = (res: RawResponse) =>
  typeof res.json === "object" && res.json !== null && res.json.code === res.status && typeof res.json.message === "string" &&
  "data" in res.json &&
  (res.status === 200 || (typeof res.json.data === "object" && res.json.data !== null && typeof res.json.data.error === "string"))

layer(testServerLayer({ rateLimitRps: 1_000_000, rateLimitBurst: 1_000_000 }))("fuzzing from the OpenAPI document", (it) => {
  it.effect(
    "thousands of hostile signed calls over every operation: no 5xx, always the envelope, only documented statuses",
    () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const credentials = yield* createCredentials()
        const doc = yield* Effect.promise(() => fetch(`${baseUrl}/api/open/v1/openapi.json`).then((r) => r.json() as Promise<Document>))
        const random = seeded(20261123)
        const failures: Array<string> = []
        let total = 0
        const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
          Object.entries(ops).map(([method, op]) => ({ path, method, op }))
        )
        expect(operations.length).toBeGreaterThan(40)
        for (const { path, method, op } of operations) {
          const calls = callsFor(doc, method, path, op, random)
          const documented = new Set(Object.keys(op.responses))
          yield* Effect.forEach(calls, (call) =>
            Effect.gen(function*() {
              const res = yield* rawRequest(baseUrl, {
                method: call.method,
                path: call.path,
                query: call.query,
                ...(call.body !== undefined ? { body: call.body, contentType: call.contentType ?? "application/json" } : {}),
                credentials
              }).pipe(
                Effect.catchDefect((e) =>
                  Effect.succeed({ status: 0, headers: new Headers(), json: { code: 0, message: String(e), data: null } })
                )
              )
              total++
              const where = `${method.toUpperCase()} ${path} [${call.label}] → ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`
              if (res.status === 0 || res.status >= 500) {
                failures.push(`5xx or no answer: ${where}`)
              } else if (!isEnvelope(res)) failures.push(`outside the envelope: ${where}`)
              else if (!documented.has(String(res.status))) failures.push(`undocumented status: ${where}`)
            }), { concurrency: 8, discard: true })
        }
        expect(total).toBeGreaterThan(2000)
        expect(failures.slice(0, 30)).toEqual([])
      }),
    300_000
  )
})
