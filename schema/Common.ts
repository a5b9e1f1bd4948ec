// Shared pieces of the contract: the success envelope, list pages, query-string scalars and
// the annotations every endpoint carries (its permission, its itemwise batch field).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as JsonSchema from "effect/JsonSchema"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaTransformation from "effect/SchemaTransformation"

/**
 * How the `data` of a success is shown to the caller of the request being answered: as it is,
 * unless the server provides the Masker's policy for a masking client (DECISIONS §3). It applies to
 * the typed value the handler returned, before the success schema encodes it.
 */
export const ResponseMask = Context.Reference<(data: unknown) => unknown>("Contract/ResponseMask", {
  defaultValue: () => (data) => data
})
export type ResponseMask = typeof ResponseMask

export { Int, optionalOut, Text, trusted } from "../src/domain/schemaFields.js"
import type { LimitedAction } from "../src/domain/actionLimits.js"
import { Int, trusted } from "../src/domain/schemaFields.js"
import { existsAsUtc } from "../src/domain/time.js"

/**
 * `{code: 200, message: "ok", data}` around a success value; handlers return the bare value. The
 * caller's ResponseMask applies to the value before `data` encodes it (one walk of the value).
 */
export const Envelope = <A, I>(
  data: Schema.Codec<A, I>,
  identifier: string
): Schema.Codec<A, { readonly code: 200; readonly message: string; readonly data: I }> =>
  Schema.Struct({ code: Schema.Literal(200), message: Schema.String, data }).annotate({ identifier }).pipe(
    Schema.decodeTo(trusted<A>(), {
      decode: SchemaGetter.transform((envelope) => envelope.data),
      encode: SchemaGetter.transformEffect((value: A) =>
        Effect.map(Effect.service(ResponseMask), (mask) => ({ code: 200 as const, message: "ok", data: mask(value) as A }))
      )
    })
  ).annotate({ identifier })

/** A success whose `data` is null. */
export const EmptyEnvelope = (identifier: string) => Envelope(Schema.Null, identifier)

/**
 * A list page: its records, `total` (every record matching the filters) and `next_cursor`, the
 * `cursor` of the next page in sync order, null on the last page and on pages read by `page`
 * (DECISIONS §12).
 */
export const ListOf = <S extends Schema.Top>(item: S) =>
  Schema.Struct({
    list: Schema.Array(item),
    total: Schema.Int,
    next_cursor: Schema.NullOr(Schema.String).annotate({
      description:
        "pass as `cursor` (with the same filters) for the next page in (updated_at, id) order; null on the last page, and always null when the page was read by `page` (neither `cursor` nor `updated_since` given)"
    })
  })

export const IdOnly = Schema.Struct({ id: Schema.Int })

/** Largest id: ids are PostgreSQL `integer` (int4). */
export const MAX_ID = 2_147_483_647

/** An id in a JSON body: a positive int4. */
export const Id = Int.check(
  Schema.isBetween({ minimum: 1, maximum: MAX_ID }, { message: `must be an id (an integer from 1 to ${MAX_ID})` })
)

/**
 * A schema documented as `json` instead of what its wire form compiles to: the schema itself
 * decodes and encodes (with its own messages); the document shows `json` (a query integer is an
 * integer to the caller, though it travels as text).
 */
export const documentedAs = <S extends Schema.Top>(schema: S, json: JsonSchema.JsonSchema) =>
  trusted<S["Encoded"]>().check(Schema.makeFilter(() => true, { toJsonSchema: () => json })).pipe(
    Schema.decodeTo(schema, SchemaTransformation.passthrough())
  )

const INT_TEXT = /^-?\d{1,15}$/u

/** Integers in path and query strings: digits only, so `1.5`, `1e3` and ` 7` are refused. */
const intText = Schema.String.check(Schema.isPattern(INT_TEXT, { message: "must be an integer" }).abort()).pipe(
  Schema.decodeTo(Schema.Int, SchemaTransformation.numberFromString)
)
const positiveIntText = intText.check(
  Schema.isBetween({ minimum: 1, maximum: MAX_ID }, { message: `must be an integer from 1 to ${MAX_ID}` })
)

export const IntFromString = documentedAs(intText, { type: "integer", maximum: MAX_ID, description: "an integer" })

/** A positive int4 in a path or query string, documented with `description`. */
export const positiveIntParam = (description: string) =>
  documentedAs(positiveIntText, { type: "integer", minimum: 1, maximum: MAX_ID, description })

export const PositiveIntFromString = positiveIntParam("an integer >= 1")
export const IdPath = Schema.Struct({ id: PositiveIntFromString })

const QUERY_BOOLEANS: ReadonlyArray<string> = ["true", "false", "1", "0"]

/** Query booleans accept `true/false/1/0` (DECISIONS §1). */
export const BooleanFromQuery = documentedAs(
  Schema.String.check(
    Schema.makeFilter((s: string) => QUERY_BOOLEANS.includes(s) || `Expected "true" | "false" | "1" | "0", actual ${JSON.stringify(s)}`)
  ).pipe(
    Schema.decodeTo(
      Schema.Boolean,
      SchemaTransformation.transform({ decode: (s) => s === "true" || s === "1", encode: (b) => (b ? "true" : "false") })
    )
  ),
  // Generated clients send a boolean, which serialises as true/false; 1/0 are accepted too.
  { type: "boolean", description: "true or false (1 and 0 are accepted too)" }
)

/**
 * Array query parameters accept repeated keys and comma-separated values. `item` checks each value
 * after the split (the strings as they are by default).
 */
export const csvOf = <S extends Schema.Top & { readonly Encoded: string }>(item: S) =>
  Schema.Union([Schema.String, Schema.Array(Schema.String)]).pipe(
    Schema.decodeTo(
      Schema.Array(item),
      SchemaTransformation.transform({
        decode: (v: string | ReadonlyArray<string>): ReadonlyArray<S["Encoded"]> =>
          (typeof v === "string" ? [v] : v).flatMap((s) => s.split(",")).map((s) => s.trim()).filter((s) => s.length > 0),
        encode: (a: ReadonlyArray<S["Encoded"]>): string | ReadonlyArray<string> => a.join(",")
      })
    )
  )

export const CsvStrings = csvOf(Schema.String)

export interface PageLimits {
  readonly default: number
  readonly max: number
}

/** A page size: a positive integer, clamped to the endpoint's maximum. */
export const pageSizeParam = (limits: PageLimits) =>
  documentedAs(
    positiveIntText.pipe(
      Schema.decodeTo(
        Schema.Int,
        SchemaTransformation.transform({ decode: (n: number) => Math.min(n, limits.max), encode: (n: number) => n })
      )
    ),
    {
      type: "integer",
      minimum: 1,
      maximum: MAX_ID,
      description: `default ${limits.default}, at most ${limits.max} (larger values are clamped)`
    }
  )

/** A platform-time instant in a query or body: `YYYY-MM-DD HH:MM:SS` (or with `T`). */
export const PlatformTime = Schema.String.check(
  Schema.isPattern(/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}$/u, {
    message: "must be YYYY-MM-DD HH:MM:SS (platform time zone)"
  }).abort(),
  Schema.makeFilter((s: string) => existsAsUtc(`${s.slice(0, 10)}T${s.slice(11)}`) || "must be a real time")
).annotate({ description: "YYYY-MM-DD HH:MM:SS (or with T), platform time zone" })

/**
 * `page` (default 1) and `page_size` (endpoint default; values above the maximum are clamped): the
 * paging of a list that is not a copy of platform records (a client's own webhook deliveries,
 * whose parameters DECISIONS §12 fixes); its answers' `next_cursor` is always null.
 */
export const PageOnly = (limits: PageLimits) => ({
  page: Schema.optional(PositiveIntFromString),
  page_size: Schema.optional(pageSizeParam(limits))
})

/**
 * PageOnly and the sync parameters of DECISIONS §12: `updated_since` and `cursor` switch the list to ascending
 * (updated_at, id) order, where `page` is ignored.
 */
export const Paging = (limits: PageLimits) => ({
  ...PageOnly(limits),
  updated_since: Schema.optional(PlatformTime.annotate({
    description:
      "only records updated at or after this time (platform time, inclusive); the list then comes in ascending (updated_at, id) order and `page` is ignored"
  })),
  cursor: Schema.optional(Schema.String.annotate({
    description:
      "the `next_cursor` of the previous page, sent with the same filters (`updated_since` included): the next page in ascending (updated_at, id) order; `page` is ignored"
  }))
})

/** Query of a list endpoint with paging only. */
export const PageParams = (limits: PageLimits) => Schema.Struct({ ...Paging(limits) })
export type PageParams = {
  readonly page?: number | undefined
  readonly page_size?: number | undefined
  readonly updated_since?: string | undefined
  readonly cursor?: string | undefined
}

export interface Page {
  readonly page: number
  readonly pageSize: number
  readonly offset: number
}

/** The page a list request asks for, with the endpoint's defaults applied. */
export const pageOf = (
  params: { readonly page?: number | undefined; readonly page_size?: number | undefined },
  limits: PageLimits
): Page => {
  const page = params.page ?? 1
  const pageSize = Math.min(params.page_size ?? limits.default, limits.max)
  return { page, pageSize, offset: (page - 1) * pageSize }
}

/** Exactly 11 digits (DECISIONS §1). */
export const Phone = Schema.String.check(Schema.isPattern(/^\d{11}$/u, { message: "must be exactly 11 digits" }))

/** A company's contact phone may be a landline: 5 to 20 of digits, spaces and `+ - ( )` (DECISIONS §1). */
export const ContactPhone = Schema.String.check(
  Schema.isPattern(/^[0-9 +\-()]{5,20}$/u, { message: "must be 5 to 20 characters of digits, spaces and + - ( )" }).abort(),
  Schema.makeFilter((s: string) => /\d/.test(s) || "must contain digits")
)

/** `YYYY-MM-DD HH:MM:SS` in the platform time zone. */
export const Timestamp = Schema.String.annotate({ description: "YYYY-MM-DD HH:MM:SS (platform time zone)" })

/**
 * The shape of a permission string (SPEC §5): each area names its own in its registration
 * (schema/Area.ts), and schema/Permissions.ts derives the list of them all from the areas.
 */
export type PermissionName = `open:${string}:${string}`

/**
 * The permission an endpoint needs: an endpoint annotation (`.annotate(RequiredPermission, "...")`),
 * read by the signature middleware from the endpoint's merged annotations.
 */
export class RequiredPermission extends Context.Service<RequiredPermission, PermissionName>()("schema/RequiredPermission") {}

/**
 * Marks an endpoint that needs no permission string of its own because it filters each record by
 * the read permission of that record's resource (the events feed, DECISIONS §9).
 */
export class PerRecordPermission extends Context.Service<PerRecordPermission, true>()("schema/PerRecordPermission") {}

/**
 * Marks an endpoint that needs no permission string because it acts only on the calling client
 * itself, under its own signature (the self-service endpoints, DECISIONS §12).
 */
export class CallerOnly extends Context.Service<CallerOnly, true>()("schema/CallerOnly") {}

/**
 * The self-service limit an endpoint counts against (DECISIONS §13; the ActionLimited middleware):
 * each call that runs (not an idempotent replay) is a hit on the client's window of that action.
 */
export class ActionLimit extends Context.Service<ActionLimit, LimitedAction>()("schema/ActionLimit") {}

/**
 * Marks a POST that creates nothing and may compute for long (a card parse), so that running it
 * twice is harmless (at most a blacklist hit counted twice): under an Idempotency-Key its answer
 * is computed before the short transaction that keeps it, and the computation holds no database
 * connection (DECISIONS §11).
 */
export class ComputedAnswer extends Context.Service<ComputedAnswer, true>()("schema/ComputedAnswer") {}

/**
 * An endpoint annotation naming the top-level array of a batch body whose items succeed or fail
 * one by one: the edge leaves their text checks to the item decoder, so a bad item fails alone.
 */
export class ItemwiseField extends Context.Service<ItemwiseField, string>()("schema/ItemwiseField") {}
