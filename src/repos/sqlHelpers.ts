// The repository edge and small helpers shared by repositories: SQL and row-decoding failures are
// mapped here, once (a lost connection is the 503 of DECISIONS §1, a unique violation the typed
// error it means, anything else a defect); LIKE patterns and page windows.
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"
import type * as Statement from "effect/sql/Statement"

import { ServiceUnavailable } from "../../schema/Errors.js"

/**
 * Rows for `sql.insert`, which takes a non-empty array: callers skip the statement when there is
 * nothing to insert, so an empty list here is a bug (a defect).
 */
export const insertRows = <A>(rows: ReadonlyArray<A>): Arr.NonEmptyReadonlyArray<A> => {
  if (!Arr.isReadonlyArrayNonEmpty(rows)) throw new Error("sql.insert: no rows")
  return rows
}

/** `%text%` with LIKE's own wildcards escaped, for a case-insensitive substring match. */
export const containsPattern = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/**
 * A list's request to its statements: the decoded filters, and the fields its keyword may match
 * (DECISIONS §1: all of the list's keyword fields, or for a masking client the unmasked ones).
 */
export const SearchRequest = <P extends Schema.Top, const F extends ReadonlyArray<string>>(params: P, fields: F) =>
  Schema.Struct({ params: Schema.toType(params), searchable: Schema.Array(Schema.Literals(fields)) })

/**
 * A keyword matched against the searchable fields a list was given (DECISIONS §1: for a masking
 * client only the unmasked ones): `column LIKE pattern` for each of them, OR-ed; no field matches
 * nothing (never `sql.or`'s empty `1=1`).
 */
export const keywordMatch = <F extends string>(
  sql: SqlClient.SqlClient,
  columns: { readonly [K in F]: Statement.Fragment },
  fields: ReadonlyArray<F>,
  pattern: string
): Statement.Fragment => fields.length === 0 ? sql`FALSE` : sql.or(fields.map((field) => sql`${columns[field]} LIKE ${pattern}`))

const isSqlError = SqlError.isSqlError

/**
 * The constraint a Postgres unique violation (23505) names, if the error is one: the driver
 * classifies it as the UniqueViolation reason, which carries the constraint.
 */
const violatedConstraint = (error: unknown): string | undefined =>
  isSqlError(error) && error.reason._tag === "UniqueViolation" ? error.reason.constraint : undefined

/** Seconds a client should wait before retrying while the database is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 2

export const databaseUnavailable = () =>
  new ServiceUnavailable({
    error: "service_unavailable",
    message: "the database is unavailable for a moment; retry shortly",
    retry_after: DATABASE_RETRY_AFTER_SECONDS
  })

/**
 * The repository edge: a lost or refused connection becomes the typed 503, any other SQL error, a
 * row that does not match its schema or a missing row that must exist becomes a defect (a bug,
 * answered 500 and logged).
 */
type EdgeFailure = SqlError.SqlError | Schema.SchemaError | Cause.NoSuchElementError

export const sqlEdge = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, EdgeFailure> | ServiceUnavailable, R> =>
  Effect.catch(self, (error): Effect.Effect<never, Exclude<E, EdgeFailure> | ServiceUnavailable> =>
    isSqlError(error)
      ? isConnectionFailure(error) ? Effect.fail(databaseUnavailable()) : Effect.die(error)
      // A row that does not match its schema, or no row where the statement always returns one.
      : Schema.isSchemaError(error) || Cause.isNoSuchElementError(error)
      ? Effect.die(error)
      : Effect.fail(error as Exclude<E, EdgeFailure>))

/**
 * A unique violation that means a domain error (a duplicate value a client sent): the constraint
 * names map to the errors they mean. Apply before `sqlEdge`.
 */
export const onUniqueViolation =
  <E2>(errors: Readonly<Record<string, () => E2>>) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | E2, R> =>
    Effect.catchIf(
      self,
      (error): error is E => {
        const constraint = violatedConstraint(error)
        return constraint !== undefined && constraint in errors
      },
      (error) => Effect.fail(errors[violatedConstraint(error)!]!())
    )

/** The one way services run a unit of work atomically; BEGIN/COMMIT failures pass the same edge. */
export class Transaction extends Context.Service<Transaction>()("Sql/Transaction", {
  make: Effect.map(SqlClient.SqlClient, (sql) => ({
    /** Joins the transaction already open on this fiber (as a savepoint), or opens one. */
    run: <A, E, R>(self: Effect.Effect<A, E, R>) => sqlEdge(sql.withTransaction(self))
  }))
}) {
  static readonly layer = Layer.effect(Transaction, Transaction.make)
}

/**
 * A page of rows selected with `count(*) OVER () AS total_count`, and the total. Only a page past
 * the end (no rows, so no window count) costs a second query: `count` runs only then.
 */
export const pageWithTotal = <Row extends { readonly total_count?: number }, E, R>(
  rows: Effect.Effect<ReadonlyArray<Row>, E, R>,
  count: Effect.Effect<ReadonlyArray<{ readonly n: number }>, E, R>,
  offset: number
): Effect.Effect<{ readonly rows: ReadonlyArray<Row>; readonly total: number }, E, R> =>
  Effect.flatMap(rows, (page) =>
    page[0]?.total_count !== undefined
      ? Effect.succeed({ rows: page, total: page[0].total_count })
      : offset === 0
      ? Effect.succeed({ rows: page, total: 0 })
      : Effect.map(count, (c) => ({ rows: page, total: c[0]?.n ?? 0 })))

/**
 * A page and its exact total: with a counter (an unfiltered or single-equality list of a counted
 * table) the page is read without a window count and the total comes from the counter; else as
 * pageWithTotal. `page(window)` selects `count(*) OVER () AS total_count` only when asked.
 */
export const pageAndTotal = <Row extends { readonly total_count?: number | undefined }, E, R>(o: {
  readonly counter: Effect.Effect<number, E, R> | undefined
  readonly page: (window: boolean) => Effect.Effect<ReadonlyArray<Row>, E, R>
  readonly count: Effect.Effect<ReadonlyArray<{ readonly n: number }>, E, R>
  readonly offset: number
}): Effect.Effect<{ readonly rows: ReadonlyArray<Row>; readonly total: number }, E, R> =>
  o.counter !== undefined
    ? Effect.map(Effect.all([o.page(false), o.counter], { concurrency: 2 }), ([rows, total]) => ({ rows, total }))
    : pageWithTotal(o.page(true), o.count, o.offset)

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, shutting down)
  "53300", // too_many_connections
  "08000",
  "08001",
  "08003",
  "08004",
  "08006"
])
const CONNECTION_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|not queryable|connection refused|server closed the connection/i

const causes = function*(error: unknown): Generator<{ readonly code?: unknown; readonly message?: unknown }> {
  let current: unknown = error
  for (let depth = 0; depth < 6 && typeof current === "object" && current !== null; depth++) {
    yield current as { readonly code?: unknown; readonly message?: unknown }
    current = (current as { readonly cause?: unknown }).cause
  }
}

const isConnectionReason = (c: unknown): boolean => SqlError.isSqlErrorReason(c) && c._tag === "ConnectionError"

/**
 * The database could not be reached or dropped the connection: a moment's outage, a 503. A v4
 * SqlError says so by its reason (ConnectionError); the SQLSTATE of a server error sits on the
 * reason's cause (`error.reason.cause.code`), reached by walking `cause` (SqlError.cause is its reason).
 */
export const isConnectionFailure = (error: unknown): boolean => {
  for (const c of causes(error)) {
    if (isConnectionReason(c)) return true
    if (typeof c.code === "string" && CONNECTION_CODES.has(c.code)) return true
    if (c instanceof AggregateError && c.errors.some(isConnectionFailure)) return true
    if (typeof c.message === "string" && CONNECTION_MESSAGES.test(c.message)) return true
  }
  return false
}

/**
 * PostgreSQL refused a value (class 22 data exception, or a value too large for an index): input
 * the contract should have refused. It is the client's error, a 400, never a 500.
 */
export const isDataException = (error: unknown): boolean => {
  if (!isSqlError(error)) return false
  for (const c of causes(error)) {
    if (typeof c.code === "string" && (c.code.startsWith("22") || c.code === "54000")) return true
  }
  return false
}
