// Card uploads: the multipart form is read from the exact bytes the signature covered (the edge
// kept them) with the web FormData parser; its text fields are decoded here, at the HTTP edge,
// into the domain values the card service takes. Every issue of every field is reported at once
// (400 invalid_parameter), in the order of the fields.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

import { MAX_ID } from "../../schema/Common.js"
import { PayloadTooLarge } from "../../schema/EdgeErrors.js"
import { CardOverrides } from "../../schema/Guests.js"
import { normalizeOverrides } from "../domain/card.js"
import { InvalidInput, type Issue } from "../domain/errors.js"
import { issuesOfSchemaError } from "../domain/issues.js"
import { jsonTextIssues, textProblem } from "../domain/text.js"
import { RequestBody } from "./RequestState.js"

export interface UploadedFile {
  readonly bytes: Uint8Array
  readonly name: string
  readonly type: string
}

export interface Upload {
  readonly file: UploadedFile | undefined
  readonly fields: Readonly<Record<string, string>>
}

/** The form of the request being served, read from its body. */
export const readUpload: Effect.Effect<Upload, InvalidInput> = Effect.gen(function*() {
  const body = yield* RequestBody
  const form = yield* Effect.tryPromise({
    try: () => new Response(body.bytes, { headers: { "content-type": body.contentType } }).formData(),
    catch: () => InvalidInput.of([{ path: "body", message: "malformed multipart/form-data" }], "malformed multipart body")
  })
  let file: Upload["file"]
  const fields: Record<string, string> = {}
  for (const [key, value] of form.entries()) {
    if (typeof value === "string") {
      fields[key] = value
    } else if (key === "file" && file === undefined) {
      file = { bytes: new Uint8Array(yield* Effect.promise(() => value.arrayBuffer())), name: value.name, type: value.type }
    }
  }
  // Form fields are text too: the text rules of DECISIONS §1 hold for them as for JSON bodies.
  const textIssues = Object.entries(fields).flatMap(([key, value]) => {
    const problem = textProblem(value)
    return problem === undefined ? [] : [{ path: key, message: problem }]
  })
  if (textIssues.length > 0) return yield* Effect.fail(InvalidInput.of(textIssues))
  return { file, fields }
})

/**
 * The form's file, at most `limitBytes` (CARD_FILE_LIMIT_BYTES): a form without one is 400 at path
 * `file`, a larger one 413 (the body's own limit leaves room for the form around it).
 */
export const requireFile = (upload: Upload, limitBytes: number): Effect.Effect<UploadedFile, InvalidInput | PayloadTooLarge> => {
  if (upload.file === undefined) return Effect.fail(InvalidInput.of([{ path: "file", message: "a JPEG or PNG file is required" }]))
  if (upload.file.bytes.length > limitBytes) {
    return Effect.fail(new PayloadTooLarge({ message: `card images are at most ${limitBytes} bytes`, limit: limitBytes }))
  }
  return Effect.succeed(upload.file)
}

// ---------------------------------------------------------------------------------------------
// The card forms' fields (SPEC §4.2): strings, as multipart sends them.

/** One field's outcome: its value (absent when the form leaves it out) or what is wrong with it. */
type Field<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly issues: ReadonlyArray<Issue> }

const ok = <A>(value: A): Field<A> => ({ ok: true, value })
const wrong = (path: string, message: string): Field<never> => ({ ok: false, issues: [{ path, message }] })

const NOT_AN_ID = "must be an integer >= 1"

/** An id sent as a form field: digits only (no sign, space or exponent), a positive int4. */
const formId = (name: string, raw: string): Field<number> => {
  if (!/^\d{1,15}$/.test(raw)) return wrong(name, NOT_AN_ID)
  const n = Number(raw)
  if (n < 1) return wrong(name, NOT_AN_ID)
  if (n > MAX_ID) return wrong(name, `must be an integer from 1 to ${MAX_ID}`)
  return ok(n)
}

/** A required id: absent and empty are both "is required". */
const requiredId = (fields: Readonly<Record<string, string>>, name: string): Field<number> => {
  const raw = fields[name]
  return raw === undefined || raw === "" ? wrong(name, "is required") : formId(name, raw)
}

/** An optional id where a blank value means none (`matchmaker_id=` is no matchmaker). */
const optionalId = (fields: Readonly<Record<string, string>>, name: string): Field<number | undefined> => {
  const raw = fields[name]
  return raw === undefined || raw === "" ? ok(undefined) : formId(name, raw)
}

const decodeOverrides = Schema.decodeUnknownExit(CardOverrides)

/** A path below `overrides`, as clients see it: `overrides.age`, `overrides.tags[0]`. */
const underOverrides = (path: string): string => path === "" ? "overrides" : path.startsWith("[") ? `overrides${path}` : `overrides.${path}`

/**
 * `overrides`: JSON text of an object (blank, only white space, is none) within the text rules,
 * its camelCase parsed-card keys as guest field names, decoded as the guest fields it may set.
 */
const overridesField = (fields: Readonly<Record<string, string>>): Field<CardOverrides | undefined> => {
  const raw = fields["overrides"]
  if (raw === undefined || raw.trim() === "") return ok(undefined)
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    return wrong("overrides", "must be a JSON object (malformed JSON)")
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return wrong("overrides", "must be a JSON object")
  const textIssues = jsonTextIssues(value, { prefix: "overrides" })
  if (textIssues.length > 0) return { ok: false, issues: textIssues }
  const decoded = decodeOverrides(normalizeOverrides({ ...value }), { errors: "all" })
  if (Exit.isSuccess(decoded)) return ok(decoded.value)
  const error = Cause.findErrorOption(decoded.cause)
  return {
    ok: false,
    issues: Option.isSome(error)
      ? issuesOfSchemaError(error.value.issue, "").map((i) => ({ path: underOverrides(i.path), message: i.message }))
      : [{ path: "overrides", message: "could not be read" }]
  }
}

const issuesOf = (field: Field<unknown>): ReadonlyArray<Issue> => field.ok ? [] : field.issues

/** parse-card: the optional matchmaker whose imports are checked for a duplicate. */
export const parseCardFields = (upload: Upload): Effect.Effect<{ readonly matchmaker_id: number | undefined }, InvalidInput> => {
  const matchmaker = optionalId(upload.fields, "matchmaker_id")
  return matchmaker.ok ? Effect.succeed({ matchmaker_id: matchmaker.value }) : Effect.fail(InvalidInput.of(matchmaker.issues))
}

/** create-from-card: the matchmaker (required), the company (the matchmaker's when absent), overrides. */
export const createFromCardFields = (upload: Upload): Effect.Effect<
  {
    readonly matchmaker_id: number
    readonly company_id: number | undefined
    readonly overrides: CardOverrides | undefined
  },
  InvalidInput
> => {
  const matchmaker = requiredId(upload.fields, "matchmaker_id")
  const company = optionalId(upload.fields, "company_id")
  const overrides = overridesField(upload.fields)
  return matchmaker.ok && company.ok && overrides.ok
    ? Effect.succeed({ matchmaker_id: matchmaker.value, company_id: company.value, overrides: overrides.value })
    : Effect.fail(InvalidInput.of([...issuesOf(matchmaker), ...issuesOf(company), ...issuesOf(overrides)]))
}
