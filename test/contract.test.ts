// The contract only grows (SPEC §9): the served OpenAPI document, read as field paths by
// test/support/contract.ts, is compared with the committed snapshot
// test/fixtures/contract-snapshot.json. Anything a client written against the snapshot relies on
// may not go away or change; additions pass, with a hint to record them. docs/contract.md.
//
// CONTRACT_SNAPSHOT_RECORD=1 npx vitest run test/contract.test.ts   records additions;
// CONTRACT_SNAPSHOT_RECORD=breaking ... also records a breaking change (see docs/contract.md).
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

import * as OpenApi from "effect/http-api/OpenApi"
import { describe, expect, it } from "vitest"

import { OpenApiDef } from "../schema/Api.js"
import { compareContracts, type Contract, contractOf, describeChange, renderContract } from "./support/contract.js"

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const SNAPSHOT_FILE = path.join(ROOT, "test/fixtures/contract-snapshot.json")
const DOCS_FILE = path.join(ROOT, "docs/contract.md")
const RECORD = process.env["CONTRACT_SNAPSHOT_RECORD"]
const RECORD_COMMAND = "CONTRACT_SNAPSHOT_RECORD=1 npx vitest run test/contract.test.ts"
const RECORD_BREAKING_COMMAND = "CONTRACT_SNAPSHOT_RECORD=breaking npx vitest run test/contract.test.ts"

/** The document GET /api/open/v1/openapi.json serves (test/openapi.test.ts checks they are equal). */
const served = (): unknown => JSON.parse(JSON.stringify(OpenApi.fromApi(OpenApiDef)))

describe("the contract only grows", () => {
  it("the served document removes, retypes or tightens nothing the snapshot records; additions pass", () => {
    const current = contractOf(served())
    const recorded = existsSync(SNAPSHOT_FILE) ? JSON.parse(readFileSync(SNAPSHOT_FILE, "utf8")) as Contract : {}
    const changes = compareContracts(recorded, current)
    const breaking = changes.filter((c) => c.breaking).map(describeChange)
    const additions = changes.filter((c) => !c.breaking).map(describeChange)
    if (RECORD === "breaking" || (RECORD === "1" && breaking.length === 0)) {
      writeFileSync(SNAPSHOT_FILE, renderContract(current))
      return
    }
    if (breaking.length === 0 && additions.length > 0) {
      console.warn(
        `The contract grew (${additions.length} additions), which is fine; record them so that they are kept:\n  ${RECORD_COMMAND}\n  ${
          additions.slice(0, 20).join("\n  ")
        }${additions.length > 20 ? "\n  …" : ""}`
      )
    }
    expect(
      breaking,
      `These changes break clients of /api/open/v1. Add a new path version instead (docs/contract.md); to accept them anyway: ${RECORD_BREAKING_COMMAND}`
    ).toEqual([])
    expect(Object.keys(recorded).length).toBeGreaterThan(50)
  })

  it("the snapshot file is in its canonical form: sorted keys, one line per field", () => {
    const text = readFileSync(SNAPSHOT_FILE, "utf8")
    expect(renderContract(JSON.parse(text) as Contract)).toBe(text)
    expect(renderContract(contractOf(served()))).toBe(renderContract(contractOf(served())))
  })

  it("docs/contract.md gives the commands this check prints", () => {
    const docs = readFileSync(DOCS_FILE, "utf8")
    for (const command of [RECORD_COMMAND, RECORD_BREAKING_COMMAND]) expect(docs).toContain(`\n${command}\n`)
  })
})

// ---------------------------------------------------------------------------------------------
// The rule itself, on small documents.

type Json = Record<string, unknown>
interface FakeOperation {
  readonly parameters?: ReadonlyArray<Json>
  readonly body?: Json
  readonly bodyRequired?: boolean
  readonly responses?: Record<string, Json>
}

const document = (operations: Record<string, FakeOperation>, schemas: Json = {}): Json => {
  const paths: Record<string, Record<string, Json>> = {}
  for (const [key, op] of Object.entries(operations)) {
    const [method, route] = key.split(" ") as [string, string]
    paths[route] = {
      ...paths[route],
      [method]: {
        ...(op.parameters ? { parameters: op.parameters } : {}),
        ...(op.body ? { requestBody: { required: op.bodyRequired ?? true, content: { "application/json": { schema: op.body } } } } : {}),
        responses: Object.fromEntries(
          Object.entries(op.responses ?? { "200": object({}) }).map((
            [status, schema]
          ) => [status, { description: status, content: { "application/json": { schema } } }])
        )
      }
    }
  }
  return { openapi: "3.1.0", paths, components: { schemas } }
}

const object = (properties: Record<string, Json>, required: ReadonlyArray<string> = Object.keys(properties)): Json => ({
  type: "object",
  properties,
  required
})
const string: Json = { type: "string" }
const integer: Json = { type: "integer" }
const nullable = (schema: Json): Json => ({ anyOf: [schema, { type: "null" }] })

/** GET /things/{id} answering `{code, data}` with this `data`, and these other statuses. */
const reading = (data: Json, more: Record<string, Json> = {}): Json =>
  document({ "get /things/{id}": { responses: { "200": object({ code: integer, data }), ...more } } })
/** POST /things taking this body (and these query parameters). */
const writing = (body: Json | undefined, parameters?: ReadonlyArray<Json>, bodyRequired?: boolean): Json =>
  document({
    "post /things": {
      ...(body ? { body } : {}),
      ...(parameters ? { parameters } : {}),
      ...(bodyRequired === undefined ? {} : { bodyRequired })
    }
  })
const query = (name: string, required: boolean, schema: Json = string): Json => ({ name, in: "query", required, schema })

const R = "GET /things/{id}  200 application/json"
const W = "POST /things  body application/json"

interface Case {
  readonly rule: string
  readonly before: Json
  readonly after: Json
  readonly breaking?: ReadonlyArray<string>
  readonly additions?: ReadonlyArray<string>
}

const CASES: ReadonlyArray<Case> = [
  // Responses: what clients read.
  {
    rule: "a new response field is an addition",
    before: reading(object({ id: integer })),
    after: reading(object({ id: integer, name: string })),
    additions: [`${R} data.name: added`]
  },
  {
    rule: "a removed response field breaks readers",
    before: reading(object({ id: integer, name: string })),
    after: reading(object({ id: integer })),
    breaking: [`${R} data.name: removed`]
  },
  {
    rule: "a removed response object is reported once, not field by field",
    before: reading(object({ id: integer, tag: object({ a: string, b: string }) })),
    after: reading(object({ id: integer })),
    breaking: [`${R} data.tag: removed`]
  },
  {
    rule: "a retyped response field breaks readers",
    before: reading(object({ name: string })),
    after: reading(object({ name: integer })),
    breaking: [`${R} data.name: type string, now integer`]
  },
  {
    rule: "a response field that may now be null breaks readers",
    before: reading(object({ name: string })),
    after: reading(object({ name: nullable(string) })),
    breaking: [`${R} data.name: type string, now null|string`]
  },
  {
    rule: "a response field that is no longer null is fine",
    before: reading(object({ name: { type: ["string", "null"] } })),
    after: reading(object({ name: string })),
    additions: [`${R} data.name: type null|string, now string`]
  },
  {
    rule: "a response field that may now be absent breaks readers",
    before: reading(object({ id: integer, name: string })),
    after: reading(object({ id: integer, name: string }, ["id"])),
    breaking: [`${R} data.name: always present, now may be absent`]
  },
  {
    rule: "a response integer that becomes a number breaks readers",
    before: reading(object({ score: integer })),
    after: reading(object({ score: { type: "number" } })),
    breaking: [`${R} data.score: type integer, now number`]
  },
  {
    rule: "a new enum value in a response is an addition (clients tolerate unknown values)",
    before: reading(object({ status: { type: "string", enum: ["active", "disabled"] } })),
    after: reading(object({ status: { type: "string", enum: ["active", "disabled", "paused"] } })),
    additions: [`${R} data.status: enum values added: "paused"`]
  },
  {
    rule: "a removed enum value in a response breaks readers",
    before: reading(object({ status: { type: "string", enum: ["active", "disabled"] } })),
    after: reading(object({ status: { type: "string", enum: ["active"] } })),
    breaking: [`${R} data.status: enum values removed: "disabled"`]
  },
  {
    rule: "a reason dropped from a union of error envelopes is a removed enum value",
    before: reading(object({}), {
      "400": {
        anyOf: [object({ error: { const: "has_members" } }), object({ error: { const: "invalid_parameter" }, issues: string }, ["error"])]
      }
    }),
    after: reading(object({}), { "400": object({ error: { const: "invalid_parameter" }, issues: string }, ["error"]) }),
    breaking: [`GET /things/{id}  400 application/json error: enum values removed: "has_members"`]
  },
  {
    rule: "a longer maximum length in a response breaks readers; a shorter one is fine",
    before: reading(object({ a: { type: "string", maxLength: 10 }, b: { type: "string", maxLength: 10 } })),
    after: reading(object({ a: { type: "string", maxLength: 20 }, b: { type: "string", maxLength: 5 } })),
    breaking: [`${R} data.a: maxLength 10, now 20`],
    additions: [`${R} data.b: maxLength 10, now 5`]
  },
  {
    rule: "a new response status is an addition; a removed one breaks readers",
    before: reading(object({}), { "404": object({ error: string }) }),
    after: reading(object({}), { "409": object({ error: string }) }),
    breaking: ["GET /things/{id}  404 application/json: removed"],
    additions: [
      "GET /things/{id}  409 application/json: added",
      "GET /things/{id}  409 application/json error: added"
    ]
  },
  {
    rule: "moving a schema into components changes nothing",
    before: reading(object({ id: integer, name: nullable(string) })),
    after: {
      ...reading({ $ref: "#/components/schemas/Thing" }),
      components: { schemas: { Thing: object({ id: integer, name: nullable(string) }) } }
    }
  },
  // Requests: what clients write.
  {
    rule: "a new optional request field is an addition",
    before: writing(object({ name: string })),
    after: writing(object({ name: string, city: string }, ["name"])),
    additions: [`${W} city: added`]
  },
  {
    rule: "a new required request field breaks writers",
    before: writing(object({ name: string })),
    after: writing(object({ name: string, city: string })),
    breaking: [`${W} city: added, required`]
  },
  {
    rule: "a new optional request object may require fields of its own",
    before: writing(object({ name: string })),
    after: writing(object({ name: string, place: object({ code: string }) }, ["name"])),
    additions: [`${W} place: added`, `${W} place.code: added`]
  },
  {
    rule: "an optional request field made required breaks writers; the reverse is an addition",
    before: writing(object({ a: string, b: string }, ["b"])),
    after: writing(object({ a: string, b: string }, ["a"])),
    breaking: [`${W} a: optional, now required`],
    additions: [`${W} b: required, now optional`]
  },
  {
    rule: "a removed request field breaks writers (the server would ignore what they send)",
    before: writing(object({ name: string, city: string }, ["name"])),
    after: writing(object({ name: string })),
    breaking: [`${W} city: removed`]
  },
  {
    rule: "a request number narrowed to an integer breaks writers",
    before: writing(object({ rate: { type: "number" } })),
    after: writing(object({ rate: integer })),
    breaking: [`${W} rate: type number, now integer`]
  },
  {
    rule: "a request integer widened to a number, or made nullable, is fine",
    before: writing(object({ rate: integer, note: string })),
    after: writing(object({ rate: { type: "number" }, note: nullable(string) })),
    additions: [`${W} note: type string, now null|string`, `${W} rate: type integer, now number`]
  },
  {
    rule: "a request field that no longer takes null breaks writers",
    before: writing(object({ note: nullable(string) })),
    after: writing(object({ note: string })),
    breaking: [`${W} note: type null|string, now string`]
  },
  {
    rule: "a removed request enum value breaks writers; a new one is an addition",
    before: writing(object({ level: { enum: ["gold", "normal"] } })),
    after: writing(object({ level: { enum: ["normal", "silver"] } })),
    breaking: [`${W} level: enum values removed: "gold"`],
    additions: [`${W} level: enum values added: "silver"`]
  },
  {
    rule: "a free request string restricted to an enumeration breaks writers",
    before: writing(object({ level: string })),
    after: writing(object({ level: { type: "string", enum: ["gold"] } })),
    breaking: [`${W} level: now restricted to "gold"`]
  },
  {
    rule: "a tighter request bound or pattern breaks writers; a looser one is an addition",
    before: writing(object({ name: { type: "string", maxLength: 50 }, age: { type: "integer", minimum: 18 } })),
    after: writing(object({ name: { type: "string", maxLength: 20, pattern: "^\\S+$" }, age: { type: "integer", minimum: 16 } })),
    breaking: [`${W} name: maxLength 50, now 20`, `${W} name: pattern none, now ^\\S+$`],
    additions: [`${W} age: minimum 18, now 16`]
  },
  {
    rule: "a new required query parameter breaks writers; a new optional one is an addition; a removed one breaks",
    before: writing(undefined, [query("page", false), query("status", false)]),
    after: writing(undefined, [query("page", false), query("company_id", true, integer), query("keyword", false)]),
    breaking: ["POST /things  query company_id: added, required", "POST /things  query status: removed"],
    additions: ["POST /things  query keyword: added"]
  },
  {
    rule: "a request body made required breaks writers",
    before: writing(object({ name: string }, []), undefined, false),
    after: writing(object({ name: string }, []), undefined, true),
    breaking: ["POST /things  body application/json: optional, now required"]
  },
  // Operations.
  {
    rule: "a removed operation breaks; a new one is an addition",
    before: document({ "get /old": {}, "get /kept": {} }),
    after: document({ "get /kept": {}, "get /new": {} }),
    breaking: ["GET /old: operation removed"],
    additions: ["GET /new: operation added"]
  }
]

describe("the rule: what breaks a client and what is an addition", () => {
  it.each(CASES)("$rule", ({ after, before, ...expected }) => {
    const changes = compareContracts(contractOf(before), contractOf(after))
    expect(changes.filter((c) => c.breaking).map(describeChange)).toEqual(expected.breaking ?? [])
    expect(changes.filter((c) => !c.breaking).map(describeChange)).toEqual(expected.additions ?? [])
  })

  it("a nullable object's fields stay required, and a field of only some union members is optional", () => {
    const contract = contractOf(reading(nullable(object({ id: integer })), {
      "400": { anyOf: [object({ error: string, issues: string }), object({ error: string })] }
    }))
    const response = contract["GET /things/{id}"]!.response
    expect(response).toMatchObject({
      "200 application/json data": { types: ["null", "object"] },
      "200 application/json data.id": { types: ["integer"] },
      "400 application/json issues": { types: ["string"], optional: true }
    })
    expect(response["200 application/json data.id"]).not.toHaveProperty("optional")
    expect(response["400 application/json error"]).not.toHaveProperty("optional")
  })
})
