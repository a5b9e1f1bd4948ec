// What a database error means (DECISIONS §1), decided by where it came from rather than by its
// message: a fault of the database or of a connection to it is a moment's outage (503 with
// Retry-After; the daemon tries again later), a serialization failure or deadlock is retried, a
// value PostgreSQL refused is the client's (400), and anything else is a bug (500).
import * as Duration from "effect/Duration"
import * as SqlError from "effect/sql/SqlError"

export type DatabaseFault =
  /** The database or a connection to it failed: 503 `service_unavailable`, try again later. */
  | "unavailable"
  /** A serialization failure or deadlock: the transaction is run again, then 503. */
  | "conflict"
  /** PostgreSQL refused a value the contract let through: the client's input, 400. */
  | "invalid_value"
  /** Anything else (a statement that does not parse, an unmapped constraint): a bug, 500. */
  | "defect"

/**
 * SQLSTATE classes and codes that are faults of the database or its connections, whatever the
 * statement: connection exceptions (08), insufficient resources (53: too many connections, disk
 * full, out of memory), operator intervention (57: shutdown, restart, a statement timeout or
 * cancel), system errors (58) and internal errors (XX).
 */
const UNAVAILABLE_CLASSES = new Set(["08", "53", "57", "58", "XX"])

const UNAVAILABLE_CODES = new Set([
  "3D000", // invalid_catalog_name: the database is gone (dropped, renamed)
  "25006", // read_only_sql_transaction: a failover left the pool on a read-only server
  "25P03", // idle_in_transaction_session_timeout
  "25P04", // transaction_timeout
  "40003", // statement_completion_unknown
  "55000", // object_not_in_prerequisite_state: "database … is not currently accepting connections"
  "55006", // object_in_use
  "55P03" // lock_not_available: lock_timeout
])

const CONFLICT_CODES = new Set([
  "40001", // serialization_failure
  "40P01" // deadlock_detected
])

/** The operation of the SqlError that ends database work past its deadline (deadlineExceeded). */
export const DEADLINE_OPERATION = "deadline"

/**
 * The client-side deadline on database work ran out (DATABASE_TIMEOUT_SECONDS, sqlHelpers'
 * withDeadline): the server or the path to it does not answer (a silent network cut, a hung
 * server). A ConnectionError, so an outage by its reason, whatever statement was running.
 */
export const deadlineExceeded = (timeout: Duration.Duration): SqlError.SqlError =>
  new SqlError.SqlError({
    reason: new SqlError.ConnectionError({
      cause: new Error(`no answer from the database within ${Duration.format(timeout)}`),
      message: `database work passed its deadline of ${Duration.format(timeout)}`,
      operation: DEADLINE_OPERATION
    })
  })

/**
 * A reason that can only mean the connection: it failed, closed, could not be opened, or did not
 * answer within the deadline.
 */
const UNAVAILABLE_REASONS = new Set<SqlError.SqlErrorReason["_tag"]>([
  "ConnectionError",
  "AuthenticationError",
  "LockTimeoutError",
  "StatementTimeoutError"
])

const CONFLICT_REASONS = new Set<SqlError.SqlErrorReason["_tag"]>(["DeadlockError", "SerializationError"])

/** The fields PostgreSQL sent with an error, as the driver keeps them on the reason's cause. */
const serverFields = (error: SqlError.SqlError): { readonly code?: string; readonly severity?: string } => {
  const cause: unknown = error.reason.cause
  if (typeof cause !== "object" || cause === null) return {}
  const fields = cause as { readonly code?: unknown; readonly severity?: unknown; readonly severityUnlocalized?: unknown }
  const { code } = fields
  // The unlocalized severity when the server sends it (9.6+), else the possibly translated one.
  const severity = fields.severityUnlocalized ?? fields.severity
  return {
    ...(typeof code === "string" ? { code } : {}),
    ...(typeof severity === "string" ? { severity } : {})
  }
}

/** The SqlError behind an error: itself, or one it wraps (a few `cause` links deep). */
const sqlErrorIn = (error: unknown): SqlError.SqlError | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    if (SqlError.isSqlError(current)) return current
    current = (current as { readonly cause?: unknown }).cause
  }
  return undefined
}

/** What a SqlError means for the caller; `undefined` when the error is not a database error. */
export const databaseFaultOf = (error: unknown): DatabaseFault | undefined => {
  const sqlError = sqlErrorIn(error)
  if (sqlError === undefined) return undefined
  const reason = sqlError.reason
  // Whatever PostgreSQL answered while a connection was being opened (refused, not accepting
  // connections, starting up, too many clients, no such database), the service could not connect.
  if (reason.operation === "connect" || UNAVAILABLE_REASONS.has(reason._tag)) return "unavailable"
  if (CONFLICT_REASONS.has(reason._tag)) return "conflict"
  const { code, severity } = serverFields(sqlError)
  // The server ended the session (FATAL) or itself (PANIC): the statement was not the problem.
  if (severity === "FATAL" || severity === "PANIC") return "unavailable"
  if (code === undefined) return "defect"
  if (UNAVAILABLE_CLASSES.has(code.slice(0, 2)) || UNAVAILABLE_CODES.has(code)) return "unavailable"
  if (CONFLICT_CODES.has(code)) return "conflict"
  if (code.startsWith("22") || code === "54000") return "invalid_value"
  return "defect"
}

/** The fields of a server error that name what it is about, never a value (DECISIONS §13). */
const NAMING_FIELDS = ["code", "routine", "schema", "table", "column", "dataType", "constraint"] as const

/**
 * What a log line may say of a value PostgreSQL refused: its SQLSTATE and the schema objects the
 * server named. Not its message or detail: those quote the value ("invalid input syntax for type
 * date: \"…\""), which may be a masked field's.
 */
export const refusedValueOf = (error: unknown): Readonly<Record<string, string>> => {
  const cause: unknown = sqlErrorIn(error)?.reason.cause
  if (typeof cause !== "object" || cause === null) return {}
  const fields = cause as Readonly<Record<string, unknown>>
  const out: Record<string, string> = {}
  for (const name of NAMING_FIELDS) {
    const value = fields[name]
    if (typeof value === "string") out[name === "code" ? "sqlstate" : name] = value
  }
  return out
}
