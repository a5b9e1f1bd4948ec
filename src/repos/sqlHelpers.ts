// Small helpers shared by repositories: LIKE patterns and page windows.
import { Effect } from "effect"

/** `%text%` with LIKE's own wildcards escaped, for a case-insensitive substring match. */
export const containsPattern = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** Postgres unique violation. */
export const isUniqueViolation = (error: unknown, constraint?: string): boolean => {
  const cause = (error as { cause?: { code?: string; constraint?: string } } | undefined)?.cause
  return cause?.code === "23505" && (constraint === undefined || cause.constraint === constraint)
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
const CONNECTION_MESSAGES = /connection terminated|timeout exceeded when trying to connect|not queryable|connection refused|server closed the connection/i

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
