// Card uploads: the multipart form is read from the exact bytes the signature covered (the edge
// kept them), with the platform's standard FormData parser; its text fields are decoded here, at
// the HTTP edge, into the domain values the card service takes.
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

import { MAX_ID } from "../../schema/Common.js"
import { BadRequest, type Issue } from "../../schema/Errors.js"
import { CardOverrides } from "../../schema/Guests.js"
import { normalizeOverrides } from "../domain/card.js"
import { issuesOfParseError } from "../domain/issues.js"
import { jsonTextIssues, textProblem } from "../domain/text.js"
import { RequestState } from "./RequestState.js"

export interface UploadedFile {
  readonly bytes: Uint8Array
  readonly name: string
  readonly type: string
}

export interface Upload {
  readonly file: UploadedFile | undefined
  readonly fields: Readonly<Record<string, string>>
}

export const readUpload = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<Upload, BadRequest> =>
  Effect.gen(function*() {
    const state = yield* RequestState
    const contentType = request.headers["content-type"] ?? ""
    const form = yield* Effect.tryPromise({
      try: () => new Response(state.body, { headers: { "content-type": contentType } }).formData(),
      catch: () => BadRequest.invalid([{ path: "body", message: "malformed multipart/form-data" }], "malformed multipart body")
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
    if (textIssues.length > 0) return yield* BadRequest.invalid(textIssues)
    return { file, fields }
  })

/** The form's file; a form without one is 400 at path `file`. */
export const requireFile = (upload: Upload): Effect.Effect<UploadedFile, BadRequest> =>
  upload.file === undefined
    ? Effect.fail(BadRequest.invalid([{ path: "file", message: "a JPEG or PNG file is required" }]))
    : Effect.succeed(upload.file)

/** Decoding issues as clients see them: one per path, `overrides.age` style. */
const issuesOf = (error: ParseResult.ParseError): ReadonlyArray<Issue> => issuesOfParseError(error, "")

/** Decodes the form's text fields with a schema of them; every issue is reported (400 invalid_parameter). */
export const decodeFields = <A, I, R>(schema: Schema.Schema<A, I, R>) => {
  const decode = Schema.decodeUnknown(schema, { errors: "all" })
  return (upload: Upload): Effect.Effect<A, BadRequest, R> =>
    Effect.mapError(decode(upload.fields), (error) => BadRequest.invalid(issuesOf(error)))
}

// ---------------------------------------------------------------------------------------------
// The card forms' fields (SPEC §4.2): strings, as multipart sends them.

const NOT_AN_ID = "must be an integer >= 1"

/** An id sent as a form field: digits only (no sign, space or exponent), a positive int4. */
const FormId = Schema.String.pipe(
  Schema.pattern(/^\d{1,15}$/, { message: () => NOT_AN_ID }),
  Schema.compose(Schema.NumberFromString),
  Schema.filter((n) => n >= 1 || NOT_AN_ID),
  Schema.filter((n) => n <= MAX_ID || `must be an integer from 1 to ${MAX_ID}`)
)

/**
 * A field where a blank value means none (`matchmaker_id=` is no matchmaker); `schema` decodes
 * the others. Absent or blank fields decode in the same pass as the rest, so every issue is told.
 */
const blankAsNone = <A, R>(schema: Schema.Schema<A, string, R>, isBlank: (s: string) => boolean = (s) => s === "") =>
  Schema.transformOrFail(Schema.String, Schema.UndefinedOr(Schema.typeSchema(schema)), {
    strict: true,
    decode: (s, options) => (isBlank(s) ? ParseResult.succeed(undefined) : ParseResult.decodeUnknown(schema)(s, options)),
    encode: (a, options) => (a === undefined ? ParseResult.succeed("") : ParseResult.encodeUnknown(schema)(a, options))
  })

/** A required field: absent and empty are both "is required". */
const requiredField = <A, R>(schema: Schema.Schema<A, string, R>) =>
  Schema.propertySignature(
    Schema.String.pipe(Schema.filter((s) => s !== "" || "is required"), Schema.compose(schema))
  ).annotations({ missingMessage: () => "is required" })

/**
 * A parsed `overrides` value: a JSON object within the text rules (`overrides.x` paths), its
 * camelCase parsed-card keys as guest field names, decoded as the guest fields it may set.
 */
const OverridesObject = Schema.transformOrFail(Schema.Unknown, Schema.typeSchema(CardOverrides), {
  strict: true,
  decode: (value, options, ast) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return ParseResult.fail(new ParseResult.Type(ast, value, "must be a JSON object"))
    }
    // Each text issue is pointed at its rendered path below `overrides` (one segment), so the
    // formatter's `overrides` + segment gives back the path the text rules name.
    const textIssues = jsonTextIssues(value, { prefix: "overrides" }).map((i) =>
      new ParseResult.Pointer(i.path.slice("overrides.".length), value, new ParseResult.Type(ast, value, i.message))
    )
    if (Arr.isNonEmptyReadonlyArray(textIssues)) return ParseResult.fail(new ParseResult.Composite(ast, value, textIssues))
    return ParseResult.decodeUnknown(CardOverrides)(normalizeOverrides({ ...value }), options)
  },
  encode: ParseResult.succeed
})

/** `overrides`: JSON text of an object; malformed JSON is one issue at `overrides`. */
const OverridesJson = Schema.parseJson().annotations({ message: () => "must be a JSON object (malformed JSON)" }).pipe(
  Schema.compose(OverridesObject)
)

/** parse-card: the optional matchmaker whose imports are checked for a duplicate. */
export const ParseCardFields = Schema.Struct({
  matchmaker_id: Schema.optionalWith(blankAsNone(FormId), { exact: true })
})

/** create-from-card: the matchmaker (required), the company (the matchmaker's when absent), overrides. */
export const CreateFromCardFields = Schema.Struct({
  matchmaker_id: requiredField(FormId),
  company_id: Schema.optionalWith(blankAsNone(FormId), { exact: true }),
  // Blank overrides (only white space) are none.
  overrides: Schema.optionalWith(blankAsNone(OverridesJson, (s) => s.trim() === ""), { exact: true })
})
