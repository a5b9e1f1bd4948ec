// The table of every error of the contract (DECISIONS §1), derived from the rows its classes
// declare where they belong (the domain's in src/domain, the edge's in schema/EdgeErrors.ts): the
// status map, each error's envelope `{code, message, data: {error, ...}}`, their union, the reason
// of an error, and the refusals a batch item can fail with. Adding an error is declaring its class.
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"

import type { ErrorRow } from "../src/domain/errors.js"
import * as DomainErrors from "../src/domain/errors.js"
import * as IdempotencyErrors from "../src/domain/idempotency.js"
import * as EdgeErrors from "./EdgeErrors.js"
import { FORBIDDEN_DETAILS, type ForbiddenReason } from "./EdgeErrors.js"

export { Issue, ResourceName } from "../src/domain/errors.js"

interface Tagged {
  readonly _tag: string
  readonly message: string
}

/** An error class as DeclaredError makes it: a schema of its instances, with its tag and row. */
export interface Declared extends Schema.Codec<Tagged, Tagged> {
  readonly tag: string
  readonly row: ErrorRow
  readonly fields: Schema.Struct.Fields
  new(...args: ReadonlyArray<never>): Tagged
}

const isDeclared = (u: unknown): u is Declared => typeof u === "function" && "row" in u && "tag" in u && "fields" in u

/** The error classes a module exports (its other exports are left out). */
type DeclaredIn<M> = Extract<M[keyof M], Declared>

/** Every error class, each under its tag. */
type TableOf<C extends Declared> = { readonly [T in InstanceType<C>["_tag"]]: Extract<C, { new(...args: never): { readonly _tag: T } }> }

const tableOf = <C extends Declared>(modules: ReadonlyArray<object>): TableOf<C> => {
  const table = new Map<string, Declared>()
  for (const cls of modules.flatMap((module) => Object.values(module).filter(isDeclared))) {
    // Two classes of one tag would answer alike and decode as one: a mistake to stop at once.
    if (table.has(cls.tag) && table.get(cls.tag) !== cls) throw new Error(`two error classes are tagged ${cls.tag}`)
    table.set(cls.tag, cls)
  }
  // (Object.fromEntries cannot say which class is under which tag; the tags are the classes' own.)
  return Object.fromEntries(table) as unknown as TableOf<C>
}

/** Every error of the contract, by tag: the classes that declare a row, in the modules that declare errors. */
export const ERRORS = tableOf<DeclaredIn<typeof DomainErrors> | DeclaredIn<typeof IdempotencyErrors> | DeclaredIn<typeof EdgeErrors>>(
  [DomainErrors, IdempotencyErrors, EdgeErrors]
)
type Table = typeof ERRORS
export type ErrorTag = keyof Table

/** Everything a request can fail with: the edge's refusals and the domain's, by meaning. */
export type ApiError = InstanceType<Table[ErrorTag]>

/** The refusals a batch item can fail with alone (DECISIONS §1): their reason is the item's `error`. */
export type ItemRefusal = InstanceType<{ [T in ErrorTag]: Table[T]["row"] extends { readonly item: true } ? Table[T] : never }[ErrorTag]>

const tags = Object.keys(ERRORS) as ReadonlyArray<ErrorTag>

/** `f` of every class, by tag (each result typed by the caller: a mapped type cannot follow `f`). */
const mapTable = <M extends { readonly [T in ErrorTag]: unknown }>(f: (cls: Declared) => unknown): M =>
  Object.fromEntries(tags.map((tag) => [tag, f(ERRORS[tag])])) as M

const rowOf = (error: ApiError): ErrorRow => ERRORS[error._tag].row

/** Every status, by error tag: the one place a failure's meaning becomes an HTTP status. */
export const ErrorStatus = mapTable<{ readonly [T in ErrorTag]: Table[T]["row"]["status"] }>((cls) => cls.row.status)

export const isApiError = (u: unknown): u is ApiError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && Object.hasOwn(ERRORS, u._tag)

/** The `data.error` an error answers with (a batch item's `error`, the request log's, the metrics'). */
export const reasonOf = (error: ApiError): string => rowOf(error).reason ?? (error as { readonly error: string }).error

/** Every reason a class can answer with: its own, or the several its instances choose from. */
export const reasonsOf = (cls: Declared): ReadonlyArray<string> => cls.row.reason !== undefined ? [cls.row.reason] : cls.row.reasons ?? []

/** The wait an error names (`data.retry_after`, also the Retry-After header), if it names one. */
export const retryAfterOf = (error: ApiError): number | undefined =>
  "retry_after" in error && typeof error.retry_after === "number" ? error.retry_after : undefined

/** The headers an error's answer carries besides its envelope: Retry-After where it names a wait, Allow for a 405. */
export const errorHeaders = (error: ApiError): Readonly<Record<string, string>> => {
  const retryAfter = retryAfterOf(error)
  return {
    ...(retryAfter !== undefined ? { "retry-after": String(retryAfter) } : {}),
    ...(error._tag === "MethodNotAllowed" ? { allow: error.allow.join(", ") } : {})
  }
}

/** An answer that tells a masking client a value exists (DECISIONS §13): counted per client. */
export const disclosesExistence = (error: ApiError): boolean => rowOf(error).disclosesExistence === true

// The wire form of an error: `{code, message, data: {error, ...details}}`, with the HTTP status
// equal to `code`. Decoding it gives back the tagged error, so the typed client fails with it.

/** The wire form's type: a client sees `data` as the error's fields (besides `message`). */
export interface ErrorWire {
  readonly code: number
  readonly message: string
  readonly data: { readonly [field: string]: unknown }
}

type ErrorCodec<E> = Schema.Codec<E, ErrorWire>

/**
 * An error class's envelope, annotated with its status: the class's fields but `_tag` and
 * `message` under `data`, in the class's field order, its reason first as `error` (a class of
 * several reasons carries `error` as its own first field). `only`: the envelope of one reason of a
 * class of several, with the details that reason carries.
 */
const errorEnvelope = <E>(
  cls: Declared,
  only?: { readonly reason: string; readonly fields: Schema.Struct.Fields }
): ErrorCodec<E> => {
  const { _tag: _t, message: _message, ...fields } = cls.fields
  const { reason, status } = cls.row
  const dataFields = only !== undefined
    ? { error: Schema.Literal(only.reason), ...only.fields }
    : reason === undefined
    ? fields
    : { error: Schema.Literal(reason), ...fields }
  const wire = Schema.Struct({
    code: Schema.Literal(status),
    message: Schema.String,
    data: Schema.Struct(dataFields)
  }).annotate({ identifier: only === undefined ? `${cls.tag}Response` : `${cls.tag}${pascal(only.reason)}Response` })
  return wire.pipe(
    Schema.decodeTo(cls, {
      decode: SchemaGetter.transform(({ data, message }) => {
        if (reason === undefined) return { ...data, message, _tag: cls.tag }
        const { error: _error, ...details } = data as { readonly error: unknown }
        return { ...details, message, _tag: cls.tag }
      }),
      encode: SchemaGetter.transform(({ _tag, message, ...data }: { readonly _tag: string; readonly message: string }) => ({
        code: status,
        message,
        data: reason === undefined ? data : { error: reason, ...data }
      }))
    }),
    HttpApiSchema.status(status)
  ) as unknown as ErrorCodec<E>
  // (The cast: an error class's fields need no services, but the rest-spread of the generic
  // `Struct.Fields` above cannot say so, and the wire type is the documented ErrorWire shape.)
}

/** `deprecated_secret` → `DeprecatedSecret` (a component's name). */
const pascal = (snake: string): string => snake.split("_").map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("")

/**
 * Each error's own response schema, by tag, so that an operation lists the reasons it can answer
 * (`error: [ErrorEnvelopes.NotFound, ErrorEnvelopes.QuotaFull]`). The 403's is any reason's: an
 * operation declares the reasons it answers with `ForbiddenEnvelopes`.
 */
export const ErrorEnvelopes = mapTable<{ readonly [T in ErrorTag]: ErrorCodec<InstanceType<Table[T]>> }>((cls) => errorEnvelope(cls))

/** The 403 of each reason, with its details required: what an operation declares. */
export const ForbiddenEnvelopes = Object.fromEntries(
  Object.entries(FORBIDDEN_DETAILS).map(([reason, fields]) => [reason, errorEnvelope(ERRORS.Forbidden, { reason, fields })])
) as { readonly [R in ForbiddenReason]: ErrorCodec<EdgeErrors.Forbidden> }

/** Every error envelope; the edge encodes any ApiError with this union. */
export const AnyErrorEnvelope: ErrorCodec<ApiError> = Schema.Union(tags.map((tag) => ErrorEnvelopes[tag]))

/**
 * What the HTTP layer answers to any request before it reaches an operation: a request Node's
 * parser refuses (400), one that does not arrive in time (408), an unmet `Expect` (417), headers
 * over the limit (431). Every operation declares them (405 belongs to no operation: it is the
 * answer of a path for the methods it has no operation for, in the API description).
 */
export const TransportErrorEnvelopes = [
  ErrorEnvelopes.InvalidInput,
  ErrorEnvelopes.RequestTimeout,
  ErrorEnvelopes.ExpectationFailed,
  ErrorEnvelopes.HeadersTooLarge
] as const
