// The contract is published unsigned and serves integrators' tools: an OpenAPI 3.1 document that
// lists every endpoint, whose references all resolve, that Redocly lints clean, from which
// openapi-typescript generates a client that signs in one middleware, and in which each
// operation documents only the statuses it can answer.
import { expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpApi from "effect/http-api/HttpApi"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"

import { OpenApiDef } from "../schema/Api.js"
import { Matchmaker } from "../schema/Matchmakers.js"
import { ALL_PERMISSIONS } from "../schema/Permissions.js"
import { makeOpenApiClient } from "../src/client/Client.js"
import { ROUTES } from "../src/http/routes.js"
import { BAD_REQUEST_REASONS } from "./support/decisions.js"
import { createCredentials, TestServer, testServerLayer } from "./support/harness.js"
import { checkGeneratedClient, lintDocument } from "./support/openapiTools.js"

const PREFIX = "/api/open/v1"

const ENDPOINTS = [
  ["get", `${PREFIX}/time`],
  ["get", `${PREFIX}/matchmakers`],
  ["get", `${PREFIX}/matchmakers/ids`],
  ["get", `${PREFIX}/matchmakers/{id}`],
  ["post", `${PREFIX}/matchmakers`],
  ["put", `${PREFIX}/matchmakers/{id}`],
  ["get", `${PREFIX}/companies`],
  ["get", `${PREFIX}/companies/{id}`],
  ["post", `${PREFIX}/companies`],
  ["put", `${PREFIX}/companies/{id}`],
  ["get", `${PREFIX}/follow-up/tasks`],
  ["get", `${PREFIX}/follow-up/tasks/{task_id}`],
  ["post", `${PREFIX}/follow-up/tasks/{task_id}/dispatch`],
  ["post", `${PREFIX}/follow-up/tasks/{task_id}/complete`],
  ["post", `${PREFIX}/follow-up/tasks/{task_id}/fail`],
  ["post", `${PREFIX}/follow-up/tasks/{task_id}/skip`],
  ["get", `${PREFIX}/webhook`],
  ["put", `${PREFIX}/webhook`],
  ["post", `${PREFIX}/webhook/rotate-secret`],
  ["post", `${PREFIX}/webhook/test`],
  ["get", `${PREFIX}/webhook/deliveries`],
  ["post", `${PREFIX}/webhook/deliveries/{id}/redeliver`],
  ["post", `${PREFIX}/webhook/redeliver`],
  ["post", `${PREFIX}/credentials/rotate`]
] as const

type Json = Record<string, unknown>

interface Parameter {
  readonly name: string
  readonly in: string
  readonly schema: Json
}

interface Operation {
  readonly operationId: string
  readonly summary?: string
  readonly parameters?: ReadonlyArray<Parameter>
  readonly requestBody?: unknown
  readonly responses: Record<string, unknown>
  readonly security?: ReadonlyArray<Record<string, ReadonlyArray<string>>>
}

interface Document {
  readonly openapi: string
  readonly servers?: ReadonlyArray<{ readonly url: string }>
  readonly tags: ReadonlyArray<{ readonly name: string; readonly description?: string }>
  readonly paths: Record<string, Record<string, Operation>>
  readonly components: { readonly schemas: Record<string, Json>; readonly securitySchemes: Record<string, Json> }
}

const METHODS = new Set(["get", "put", "post", "delete", "patch"])

const operationsOf = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).filter(([method]) => METHODS.has(method)).map(([method, op]) => ({ key: `${method} ${path}`, method, path, op }))
  )

const servedDocument = Effect.gen(function*() {
  const { baseUrl } = yield* TestServer
  return (yield* Effect.promise(() => fetch(`${baseUrl}${PREFIX}/openapi.json`).then((r) => r.json()))) as Document
})

/** The value a local JSON pointer (`#/a/b`) names in the document, or undefined. */
const resolvePointer = (doc: unknown, ref: string): unknown =>
  ref.slice(2).split("/").reduce<unknown>((node, raw) => {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~")
    return typeof node === "object" && node !== null && key in node ? (node as Json)[key] : undefined
  }, doc)

/** Every `$ref` in the document with the JSON path where it occurs. */
const refsOf = (node: unknown, at = "#", out: Array<{ at: string; ref: unknown }> = []) => {
  if (Array.isArray(node)) node.forEach((item, i) => refsOf(item, `${at}/${i}`, out))
  else if (typeof node === "object" && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref") out.push({ at, ref: value })
      else refsOf(value, `${at}/${key}`, out)
    }
  }
  return out
}

/** A body as a later server version might answer it: one more field in every JSON object. */
const withFieldAddedLater = (node: unknown): unknown =>
  Array.isArray(node)
    ? node.map(withFieldAddedLater)
    : typeof node === "object" && node !== null
    ? { ...Object.fromEntries(Object.entries(node).map(([k, v]) => [k, withFieldAddedLater(v)])), added_later: { n: 1 } }
    : node

/** Rewrites every JSON answer with `withFieldAddedLater`, keeping each rewritten body in `seen`. */
const answeringWithFieldsAddedLater = (seen: Array<Json>) =>
  HttpClient.transformResponse(
    Effect.flatMap((response: HttpClientResponse.HttpClientResponse) =>
      Effect.map(Effect.orDie(response.json), (body) => {
        const grown = withFieldAddedLater(body) as Json
        seen.push(grown)
        const headers = Object.entries(response.headers).filter(([name]) => name !== "content-length")
        return HttpClientResponse.fromWeb(
          response.request,
          new Response(JSON.stringify(grown), { status: response.status, headers: headers as Array<[string, string]> })
        )
      })
    )
  )

const SIGNING = { AppKey: "X-App-Key", Timestamp: "X-Timestamp", Nonce: "X-Nonce", Signature: "X-Signature" } as const

/** What every signed operation can answer: 400 (decoding), 401, 403, 429, 500, 503. */
const SIGNED_STATUSES = ["200", "400", "401", "403", "408", "417", "429", "431", "500", "503"]
/** Operations whose body names other records by id (company_id, matchmaker_id) that may be unknown. */
const BODY_REFERENCES = new Set([
  `post ${PREFIX}/matchmakers`,
  `post ${PREFIX}/guests`,
  `post ${PREFIX}/guests/parse-card`,
  `post ${PREFIX}/guests/create-from-card`,
  `post ${PREFIX}/activities`,
  `post ${PREFIX}/matches`,
  `post ${PREFIX}/memberships`
])

const NO_PERMISSION = new RegExp(`^${PREFIX}/(events$|webhook|credentials/)`)
/** Self-service writes refused to the previous secret in its grace (DECISIONS §13): their 403. */
const CURRENT_SECRET_ONLY = new Set([`put ${PREFIX}/webhook`, `post ${PREFIX}/webhook/rotate-secret`, `post ${PREFIX}/credentials/rotate`])

const expectedStatuses = (o: { key: string; path: string; op: Operation }): Array<string> => {
  if (o.path === `${PREFIX}/time`) return ["200", "400", "408", "417", "431", "500"]
  return [
    // The events feed needs no permission of its own (it filters each event), nor does self-service
    // (it acts on the caller only), so neither answers 403, but for the self-service writes that
    // need the current secret.
    ...SIGNED_STATUSES.filter((s) => !(NO_PERMISSION.test(o.path) && s === "403" && !CURRENT_SECRET_ONLY.has(o.key))),
    ...(o.path.includes("{") || BODY_REFERENCES.has(o.key) ? ["404"] : []),
    // The edge reads (and limits) the body of any request but a GET; only a body endpoint checks its type.
    ...(o.key.startsWith("get ") ? [] : ["413"]),
    ...(o.op.requestBody !== undefined ? ["415"] : []),
    // A POST may carry an Idempotency-Key: 409 idempotency_key_in_progress, 422 idempotency_key_reused.
    ...(o.key.startsWith("post ") ? ["409", "422"] : [])
  ].filter((s, i, all) => all.indexOf(s) === i).sort()
}

layer(testServerLayer())("published contract", (it) => {
  it.effect("GET /api/open/v1/openapi.json is an unsigned OpenAPI 3.1 document with every endpoint", () =>
    Effect.gen(function*() {
      const spec = yield* servedDocument
      expect(spec.openapi).toBe("3.1.0")
      for (const [method, path] of ENDPOINTS) expect(spec.paths[path]?.[method], `${method} ${path}`).toBeDefined()
      // Every route the server serves is documented.
      for (const key of ROUTES.keys()) {
        const [method, path] = key.split(" ") as [string, string]
        const openApiPath = path.replace(/:(\w+)/g, "{$1}")
        expect(spec.paths[openApiPath]?.[method.toLowerCase()], key).toBeDefined()
      }
      expect(ROUTES.size).toBeGreaterThan(50)
      expect(JSON.stringify(spec)).not.toContain("HttpApiDecodeError")
      const params = spec.paths[`${PREFIX}/matchmakers`]!.get!.parameters!.map((p) => p.name)
      expect(params).toEqual(expect.arrayContaining(["keyword", "has_guests", "page_size"]))
    }))

  it.effect("every $ref in the served document resolves within it (no nested $defs remain)", () =>
    Effect.gen(function*() {
      const spec = yield* servedDocument
      const refs = refsOf(spec)
      expect(refs.length).toBeGreaterThan(100)
      const dangling = refs.filter(({ ref }) => typeof ref !== "string" || !ref.startsWith("#/") || resolvePointer(spec, ref) === undefined)
      expect(dangling).toEqual([])
      expect(JSON.stringify(spec)).not.toContain("\"$defs\"")
      // The batch item schemas (formerly nested definitions) are components of their own.
      expect(spec.components.schemas.GuestBatchUpdateItem).toBeDefined()
    }))

  it.effect("every operation has a summary, every tag a description, and the document a server", () =>
    Effect.gen(function*() {
      const spec = yield* servedDocument
      for (const { key, op } of operationsOf(spec)) expect(op.summary, key).toMatch(/\S/)
      for (const tag of spec.tags) expect(tag.description, tag.name).toMatch(/\S/)
      expect(spec.servers?.length).toBeGreaterThan(0)
    }))

  it.effect("signing is four apiKey header schemes required on every operation but GET /time, not header parameters", () =>
    Effect.gen(function*() {
      const spec = yield* servedDocument
      for (const [scheme, header] of Object.entries(SIGNING)) {
        expect(spec.components.securitySchemes[scheme], scheme).toMatchObject({ type: "apiKey", in: "header", name: header })
        expect(spec.components.securitySchemes[scheme]!.description, scheme).toMatch(/\S/)
      }
      for (const { key, path, op } of operationsOf(spec)) {
        expect(op.security, key).toEqual(path === `${PREFIX}/time` ? [] : [{ AppKey: [], Timestamp: [], Nonce: [], Signature: [] }])
        // The only header parameter is the optional Idempotency-Key of every POST (DECISIONS §11).
        expect((op.parameters ?? []).filter((p) => p.in === "header").map((p) => p.name), key).toEqual(
          key.startsWith("post ") ? ["Idempotency-Key"] : []
        )
      }
    }))

  it.effect("integer query and path parameters are integers within int4 (>= 1); query booleans are booleans", () =>
    Effect.gen(function*() {
      const spec = yield* servedDocument
      const schemaOf = (p: Parameter): Json => typeof p.schema.$ref === "string" ? (resolvePointer(spec, p.schema.$ref) as Json) : p.schema
      const integers = new Set([
        "page",
        "page_size",
        "id",
        "company_id",
        "matchmaker_id",
        "work_wechat_id",
        "record_id",
        "guest_id",
        "user_id"
      ])
      const booleans = new Set(["has_guests", "has_matchmaker", "has_work_wechat"])
      const seen = new Set<string>()
      for (const { key, op } of operationsOf(spec)) {
        for (const p of op.parameters ?? []) {
          const schema = schemaOf(p)
          // task_id is the follow-up task's integer id; the card task's task_id is a string.
          if (integers.has(p.name) || (p.name === "task_id" && key.includes("/follow-up/"))) {
            seen.add(p.name === "task_id" ? "follow-up task_id" : p.name)
            expect(schema, `${key} ${p.name}`).toMatchObject({ type: "integer", minimum: 1, maximum: 2147483647 })
          } else if (booleans.has(p.name)) {
            seen.add(p.name)
            expect(schema, `${key} ${p.name}`).toMatchObject({ type: "boolean" })
          } else {
            // No other parameter is a number or boolean in disguise.
            expect(schema.type, `${key} ${p.name}`).not.toBe("integer")
          }
        }
      }
      expect([...seen].sort()).toEqual([...integers, ...booleans, "follow-up task_id"].sort())
    }))

  it.effect("each operation documents only what it can answer: 404 with an id in the path or body, 413 unless a GET, 415 with a body", () =>
    Effect.gen(function*() {
      const spec = yield* servedDocument
      const operations = operationsOf(spec)
      for (const o of operations) expect(Object.keys(o.op.responses).sort(), o.key).toEqual(expectedStatuses(o))
      const statuses = (key: string) => Object.keys(operations.find((o) => o.key === key)!.op.responses)
      expect(statuses(`get ${PREFIX}/guests`)).not.toEqual(expect.arrayContaining(["404"]))
      expect(statuses(`get ${PREFIX}/guests`).filter((s) => ["404", "413", "415"].includes(s))).toEqual([])
      expect(statuses(`put ${PREFIX}/guests/{id}`)).toEqual(expect.arrayContaining(["404", "413", "415"]))
      expect(statuses(`put ${PREFIX}/work-wechats/{id}/status`).filter((s) => ["413", "415"].includes(s))).toEqual(["413"])
      expect(operations.filter((o) => "409" in o.op.responses && !o.key.startsWith("post ")).map((o) => o.key)).toEqual([])
    }))

  it.effect("the redocly linter (recommended rules, redocly.yaml) reports no problem in the served document", () =>
    Effect.gen(function*() {
      const spec = yield* servedDocument
      const report = yield* Effect.promise(() => lintDocument(spec))
      const problems = report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? "?"}`)
      expect(problems).toEqual([])
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
    }))

  it.effect(
    "a client generated by openapi-typescript type-checks strictly and, signing in one openapi-fetch middleware, gets 200 envelopes",
    () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const spec = yield* servedDocument
        const credentials = yield* createCredentials()
        const result = yield* Effect.promise(() => checkGeneratedClient(spec, { baseUrl, ...credentials }))
        expect(result.typeCheck.stdout + result.typeCheck.stderr).toBe("")
        expect(result.typeCheck.code).toBe(0)
        expect(result.run?.stderr).toBe("")
        expect(result.run?.code).toBe(0)
        const out = JSON.parse(result.run!.stdout) as Record<string, { code: number; message: string; data: Json }>
        expect(out.created).toMatchObject({
          code: 200,
          message: "ok",
          data: { id: expect.any(Number), name: "生成客户端婚介", city: "长沙" }
        })
        expect(out.company).toMatchObject({ code: 200, data: { id: out.created!.data.id, name: "生成客户端婚介" } })
        expect(out.guests).toEqual({ code: 200, message: "ok", data: { list: [], total: 0, next_cursor: null } })
        expect(out.matchmakers).toMatchObject({ code: 200, data: { list: expect.any(Array), total: expect.any(Number) } })
        expect(out.missing).toEqual({ status: 404, reason: "not_found" })
      }),
    45_000
  )

  it.effect("the served document leaves every object open: no additionalProperties false, requests and responses alike", () =>
    Effect.gen(function*() {
      const spec = yield* servedDocument
      expect(JSON.stringify(spec)).not.toContain("\"additionalProperties\":false")
      // The served document is the one the contract check (test/contract.test.ts) reads.
      expect(spec).toEqual(JSON.parse(JSON.stringify(OpenApi.fromApi(OpenApiDef))))
    }))

  it.effect("the typed client ignores response fields it does not know: in records, in lists and in error data (SPEC §9)", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const plain = yield* makeOpenApiClient(baseUrl, credentials, { retries: 0 })
      const seen: Array<Json> = []
      const http = yield* HttpClient.HttpClient
      const growing = yield* makeOpenApiClient(baseUrl, credentials, { retries: 0 }).pipe(
        Effect.provideService(HttpClient.HttpClient, http.pipe(answeringWithFieldsAddedLater(seen)))
      )
      const created = yield* growing.matchmakers.create({ payload: { name: "后来字段红娘", city: "长沙" } })
      expect(created).toEqual(yield* plain.matchmakers.get({ params: { id: created.id } }))
      expect(yield* growing.matchmakers.get({ params: { id: created.id } })).toEqual(created)
      const query = { keyword: "后来字段" }
      const list = yield* growing.matchmakers.list({ query })
      expect(list).toEqual(yield* plain.matchmakers.list({ query }))
      expect(list.list.map((m) => m.id)).toEqual([created.id])
      const missing = yield* Effect.flip(growing.matchmakers.get({ params: { id: 999999 } }))
      expect(missing).toMatchObject({ _tag: "NotFound", resource: "matchmaker" })
      expect(missing).not.toHaveProperty("added_later")
      // The answers did carry the field, where a strict decoder refuses it.
      expect(seen.map((body) => [body.code, body.added_later])).toEqual([[200, { n: 1 }], [200, { n: 1 }], [200, { n: 1 }], [404, {
        n: 1
      }]])
      expect((seen[1]!.data as Json).added_later).toEqual({ n: 1 })
      expect(Schema.decodeUnknownExit(Matchmaker, { onExcessProperty: "error" })(seen[1]!.data)._tag).toBe("Failure")
      expect(Schema.decodeUnknownExit(Matchmaker)(seen[1]!.data)._tag).toBe("Success")
    }))

  it.effect("GET /docs is a self-contained page (no external scripts) embedding the document", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const res = yield* Effect.promise(() => fetch(`${baseUrl}/docs`))
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toMatch(/text\/html/)
      const html = yield* Effect.promise(() => res.text())
      expect(html).not.toMatch(/<script[^>]+src=/)
      for (const [, path] of ENDPOINTS) expect(html).toContain(path)
    }))
})

it("every signed endpoint declares one of SPEC's permission strings, but the events feed and self-service", () => {
  for (const [key, info] of ROUTES) {
    if (key.endsWith("/time")) continue
    // The events feed filters each event by the read permission of its resource (DECISIONS §9).
    if (key === `GET ${PREFIX}/events`) {
      expect([info.perRecord, info.permission], key).toEqual([true, undefined])
      continue
    }
    // Self-service acts only on the calling client (DECISIONS §12).
    if (info.group === "selfService") {
      expect([info.callerOnly, info.perRecord, info.permission], key).toEqual([true, false, undefined])
      continue
    }
    expect([info.perRecord, info.callerOnly], key).toEqual([false, false])
    expect(ALL_PERMISSIONS, key).toContain(info.permission)
  }
})

it("the typed client decodes every error status the document lists for an operation", () => {
  const documented = new Map(
    operationsOf(OpenApi.fromApi(OpenApiDef) as unknown as Document).map((
      { key, op }
    ) => [key, Object.keys(op.responses).filter((s) => s !== "200")])
  )
  HttpApi.reflect(OpenApiDef, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, errors }) => {
      const key = `${endpoint.method.toLowerCase()} ${endpoint.path.replace(/:(\w+)/g, "{$1}")}`
      const declared = [...errors.keys()].map(String)
      expect(declared, key).toEqual(expect.arrayContaining(documented.get(key) ?? ["(undocumented)"]))
    }
  })
})

/** The `data.error` values a response of an operation can carry, following `$ref`s and unions. */
const reasonsOf = (doc: Json, node: unknown, seen = new Set<unknown>()): Array<string> => {
  if (typeof node !== "object" || node === null || seen.has(node)) return []
  seen.add(node)
  const n = node as Json
  if (typeof n.$ref === "string") return reasonsOf(doc, resolvePointer(doc, n.$ref), seen)
  const nested = [n.anyOf, n.oneOf].flatMap((u) => (Array.isArray(u) ? u.flatMap((m) => reasonsOf(doc, m, seen)) : []))
  const content = (n.content as Record<string, { schema?: unknown }> | undefined)?.["application/json"]?.schema
  const data = (n.properties as Json | undefined)?.data
  const error = typeof data === "object" && data !== null
    ? ((resolveSchema(doc, data) as Json).properties as Json | undefined)?.error as Json | undefined
    : undefined
  const own = error === undefined
    ? []
    : error.const !== undefined
    ? [String(error.const)]
    : Array.isArray(error.enum)
    ? error.enum.map(String)
    : []
  return [...nested, ...(content !== undefined ? reasonsOf(doc, content, seen) : []), ...own]
}
const resolveSchema = (doc: Json, node: unknown): unknown =>
  typeof node === "object" && node !== null && typeof (node as Json).$ref === "string"
    ? resolveSchema(doc, resolvePointer(doc, (node as Json).$ref as string))
    : node

it("each operation lists, per status, the reasons its domain can refuse it with (data.error values)", () => {
  const doc = OpenApi.fromApi(OpenApiDef) as unknown as Document & Json
  const reasons = (method: string, path: string, status: string) =>
    [...new Set(reasonsOf(doc, doc.paths[`${PREFIX}${path}`]![method]!.responses[status]))].sort()
  expect(reasons("delete", "/work-groups/{id}", "400")).toEqual(["has_members", "invalid_parameter"])
  expect(reasons("delete", "/work-wechats/{id}", "400")).toEqual(["has_associations", "invalid_parameter"])
  expect(reasons("post", "/activities/{id}/register", "400")).toEqual(
    ["activity_not_open", "already_registered", "invalid_parameter", "quota_full"]
  )
  expect(reasons("post", "/follow-up/tasks/{task_id}/dispatch", "409")).toEqual(["idempotency_key_in_progress", "task_locked"])
  expect(reasons("post", "/guests/parse-card", "503")).toEqual(["parser_unavailable", "service_unavailable"])
  // A read refuses only bad parameters.
  expect(reasons("get", "/guests", "400")).toEqual(["invalid_parameter"])
  // 403: a missing permission where one is needed; the previous secret on the self-service writes
  // that need the current one (DECISIONS §13), and nothing else.
  expect(reasons("get", "/guests", "403")).toEqual(["permission_denied"])
  for (const key of CURRENT_SECRET_ONLY) {
    const [method, path] = key.split(" ") as [string, string]
    expect(reasons(method, path.slice(PREFIX.length), "403"), key).toEqual(["deprecated_secret"])
  }
  // Every reason of DECISIONS §1's 400 row is listed by some operation.
  const all = new Set(
    operationsOf(doc).flatMap(({ op }) => Object.values(op.responses).flatMap((r) => reasonsOf(doc, r)))
  )
  for (const reason of [...BAD_REQUEST_REASONS, "not_found", "task_locked"]) expect(all.has(reason), reason).toBe(true)
})
