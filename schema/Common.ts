// Shared pieces of the contract: the success envelope, list pages, query-string scalars and
// the permission annotation every signed endpoint carries.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * How the `data` of a success is shown to the caller of the request being answered: as it is,
 * unless the server provides the Masker's policy for a masking client (DECISIONS §3). It applies to
 * the typed value the handler returned, before the success schema encodes it.
 */
export class ResponseMask extends Context.Reference<ResponseMask>()("Contract/ResponseMask", {
  defaultValue: (): (data: unknown) => unknown => (data) => data
}) {}

/**
 * The typed side of a success: the value the handler returned, taken as it is. Encoding checks the
 * value once, through the data schema; decoding has checked it through the same schema. A second
 * `typeSchema` pass on either side would walk every field again (twice per encode), for nothing.
 */
const trusted = <A>(): Schema.Schema<A> => Schema.declare((_: unknown): _ is A => true)

/** A data schema whose encoding passes through the caller's ResponseMask. */
const masked = <A, I, R>(data: Schema.Schema<A, I, R>): Schema.Schema<A, I, R> =>
  Schema.transformOrFail(data, trusted<A>(), {
    strict: true,
    decode: ParseResult.succeed,
    encode: (value) => Effect.map(ResponseMask, (mask) => mask(value) as typeof value)
  })

/** `{code: 200, message: "ok", data}` around a success value; handlers return the bare value. */
export const Envelope = <A, I, R>(
  data: Schema.Schema<A, I, R>,
  identifier: string
): Schema.Schema<A, { readonly code: 200; readonly message: string; readonly data: I }, R> =>
  Schema.transform(
    Schema.Struct({ code: Schema.Literal(200), message: Schema.String, data: masked(data) }),
    trusted<A>(),
    {
      strict: true,
      decode: (envelope) => envelope.data,
      encode: (value) => ({ code: 200 as const, message: "ok", data: value })
    }
  ).annotations({ identifier })

/** A success whose `data` is null. */
export const EmptyEnvelope = (identifier: string) => Envelope(Schema.Null, identifier)

export const ListOf = <S extends Schema.Schema.Any>(item: S) => Schema.Struct({ list: Schema.Array(item), total: Schema.Int })

export const IdOnly = Schema.Struct({ id: Schema.Int })

/** Largest id: ids are PostgreSQL `integer` (int4). */
export const MAX_ID = 2_147_483_647

/** An id in a JSON body: a positive int4. */
export const Id = Schema.Int.pipe(
  Schema.between(1, MAX_ID, { message: () => `must be an id (an integer from 1 to ${MAX_ID})` })
)

/** Integers in path and query strings: digits only, so `1.5`, `1e3` and ` 7` are refused. */
export const IntFromString = Schema.String.pipe(
  Schema.pattern(/^-?\d{1,15}$/, { message: () => "must be an integer" }),
  Schema.compose(Schema.NumberFromString),
  Schema.int(),
  Schema.annotations({ jsonSchema: { type: "integer", maximum: 2147483647, description: "an integer" } })
)
export const PositiveIntFromString = IntFromString.pipe(
  Schema.between(1, 2_147_483_647, { message: () => "must be an integer from 1 to 2147483647" }),
  Schema.annotations({ jsonSchema: { type: "integer", minimum: 1, maximum: 2147483647, description: "an integer >= 1" } })
)
export const IdPath = Schema.Struct({ id: PositiveIntFromString })

/** Query booleans accept `true/false/1/0` (DECISIONS §1). */
export const BooleanFromQuery = Schema.transform(
  Schema.Literal("true", "false", "1", "0"),
  Schema.Boolean,
  { strict: true, decode: (s) => s === "true" || s === "1", encode: (b) => (b ? "true" : "false") }
).annotations({
  identifier: "QueryBoolean",
  // Generated clients send a boolean, which serialises as true/false; 1/0 are accepted too.
  jsonSchema: { type: "boolean", description: "true or false (1 and 0 are accepted too)" }
})

/** Array query parameters accept repeated keys and comma-separated values. */
export const CsvStrings = Schema.transform(
  Schema.Union(Schema.String, Schema.Array(Schema.String)),
  Schema.Array(Schema.String),
  {
    strict: true,
    decode: (v) => (typeof v === "string" ? [v] : v).flatMap((s) => s.split(",")).map((s) => s.trim()).filter((s) => s.length > 0),
    encode: (a) => a.join(",")
  }
)

export interface PageLimits {
  readonly default: number
  readonly max: number
}

/** `page` (default 1) and `page_size` (endpoint default; values above the maximum are clamped). */
export const Paging = (limits: PageLimits) => ({
  page: Schema.optional(PositiveIntFromString.annotations({ description: "default 1" })),
  page_size: Schema.optional(
    Schema.transform(PositiveIntFromString, Schema.Int, {
      strict: true,
      decode: (n) => Math.min(n, limits.max),
      encode: (n) => n
    }).annotations({ description: `default ${limits.default}, at most ${limits.max} (larger values are clamped)` })
  )
})

/** Query of a list endpoint with paging only. */
export const PageParams = (limits: PageLimits) => Schema.Struct({ ...Paging(limits) }).annotations({ parseOptions: { errors: "all" } })
export type PageParams = { readonly page?: number | undefined; readonly page_size?: number | undefined }

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

/** Bounded string with the length limits of SPEC §8 (counted in characters, not bytes). */
export const Text = (max: number, min = 0) =>
  Schema.String.pipe(
    Schema.filter((s) => {
      const n = [...s].length
      return n >= min && n <= max ? undefined : min > 0 ? `must be ${min} to ${max} characters` : `must be at most ${max} characters`
    }),
    Schema.annotations({ jsonSchema: { type: "string", minLength: min, maxLength: max } })
  )

/** Exactly 11 digits (DECISIONS §1). */
export const Phone = Schema.String.pipe(
  Schema.pattern(/^\d{11}$/, { message: () => "must be exactly 11 digits" })
)

/** A company's contact phone may be a landline: 5 to 20 of digits, spaces and `+ - ( )` (DECISIONS §1). */
export const ContactPhone = Schema.String.pipe(
  Schema.pattern(/^[0-9 +\-()]{5,20}$/, { message: () => "must be 5 to 20 characters of digits, spaces and + - ( )" }),
  Schema.filter((s) => /\d/.test(s) || "must contain digits")
)

/** `YYYY-MM-DD HH:MM:SS` in the platform time zone. */
export const Timestamp = Schema.String.annotations({ description: "YYYY-MM-DD HH:MM:SS (platform time zone)" })

export const Permission = Schema.Literal(
  "open:matchmaker:read",
  "open:matchmaker:manage",
  "open:guest:read",
  "open:guest:write",
  "open:work_wechat:read",
  "open:work_wechat:write",
  "open:work_group:read",
  "open:work_group:write",
  "open:follow-up:read",
  "open:follow-up:write",
  "open:image_blacklist:read",
  "open:image_blacklist:write",
  "open:company:read",
  "open:company:manage",
  "open:activity:read",
  "open:activity:write",
  "open:match:read",
  "open:match:write",
  "open:membership:read",
  "open:membership:write"
)
export type Permission = typeof Permission.Type
export const ALL_PERMISSIONS: ReadonlyArray<Permission> = Permission.literals

/** The permission an endpoint needs; read by the signature middleware through `HttpApi.reflect`. */
export class RequiredPermission extends Context.Tag("schema/RequiredPermission")<RequiredPermission, Permission>() {}

/**
 * Marks an endpoint that needs no permission string of its own because it filters each record by
 * the read permission of that record's resource (the events feed, DECISIONS §9).
 */
export class PerRecordPermission extends Context.Tag("schema/PerRecordPermission")<PerRecordPermission, true>() {}

/**
 * Annotation of a body whose named top-level array holds items that succeed or fail one by one
 * (batches): the edge leaves their text checks to the item decoder, so a bad item fails alone.
 */
export const ItemwiseField: unique symbol = Symbol.for("schema/ItemwiseField")
