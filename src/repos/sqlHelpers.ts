// The repository edge and small helpers shared by repositories: SQL and row-decoding failures are
// mapped here, once (a lost connection is the 503 of DECISIONS §1, a unique violation the typed
// error it means, anything else a defect); LIKE patterns and page windows.
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"

import { ServiceUnavailable } from "../../schema/Errors.js"

/** `%text%` with LIKE's own wildcards escaped, for a case-insensitive substring match. */
export const containsPattern = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`

const isSqlError = (error: unknown): error is SqlError.SqlError =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "SqlError"

/** The constraint a Postgres unique violation names, if the error is one. */
const violatedConstraint = (error: unknown): string | undefined => {
  const cause = isSqlError(error) ? (error.cause as { code?: unknown; constraint?: unknown } | undefined) : undefined
  return cause?.code === "23505" && typeof cause.constraint === "string" ? cause.constraint : undefined
}

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
type EdgeFailure = SqlError.SqlError | ParseResult.ParseError | Cause.NoSuchElementException

export const sqlEdge = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, EdgeFailure> | ServiceUnavailable, R> =>
  Effect.catchAll(self, (error): Effect.Effect<never, Exclude<E, EdgeFailure> | ServiceUnavailable> =>
    isSqlError(error)
      ? isConnectionFailure(error) ? Effect.fail(databaseUnavailable()) : Effect.die(error)
      // A row that does not match its schema, or no row where the statement always returns one.
      : ParseResult.isParseError(error) || Cause.isNoSuchElementException(error)
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
export class Transaction extends Effect.Service<Transaction>()("Sql/Transaction", {
  effect: Effect.map(SqlClient.SqlClient, (sql) => ({
    run: <A, E, R>(self: Effect.Effect<A, E, R>) => sqlEdge(sql.withTransaction(self))
  }))
}) {}

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

/** The database could not be reached or dropped the connection: a moment's outage, a 503. */
export const isConnectionFailure = (error: unknown): boolean => {
  for (const c of causes(error)) {
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
  const isSql = typeof error === "object" && error !== null && "_tag" in error && error._tag === "SqlError"
  if (!isSql) return false
  for (const c of causes(error)) {
    if (typeof c.code === "string" && (c.code.startsWith("22") || c.code === "54000")) return true
  }
  return false
}
