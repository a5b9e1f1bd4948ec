// DECISIONS §1: what a database error means is decided by where it came from (the connection, the
// server's state, a conflict, the statement), never by its message. The rows are shaped as
// @effect/sql-pg 4 builds them: a reason by SQLSTATE, the server's fields on the reason's cause.
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as SqlError from "effect/sql/SqlError"

import { type DatabaseFault, databaseFaultOf, refusedValueOf } from "../../src/repos/databaseFaults.js"

type Tag = SqlError.SqlErrorReason["_tag"]

const reasons = {
  ConnectionError: SqlError.ConnectionError,
  AuthenticationError: SqlError.AuthenticationError,
  AuthorizationError: SqlError.AuthorizationError,
  SqlSyntaxError: SqlError.SqlSyntaxError,
  ConstraintError: SqlError.ConstraintError,
  DeadlockError: SqlError.DeadlockError,
  SerializationError: SqlError.SerializationError,
  LockTimeoutError: SqlError.LockTimeoutError,
  StatementTimeoutError: SqlError.StatementTimeoutError,
  UnknownError: SqlError.UnknownError
} as const

const sqlError = (o: {
  readonly tag: Exclude<Tag, "UniqueViolation">
  readonly operation: "connect" | "query" | "commit"
  readonly code?: string
  readonly severity?: string
  readonly message?: string
}): SqlError.SqlError => {
  const cause = Object.assign(new Error(o.message ?? "server error"), {
    ...(o.code !== undefined ? { code: o.code } : {}),
    ...(o.severity !== undefined ? { severity: o.severity, severityUnlocalized: o.severity } : {})
  })
  return new SqlError.SqlError({ reason: new reasons[o.tag]({ cause, message: "PgConnection: error", operation: o.operation }) })
}

const rows: ReadonlyArray<readonly [string, Parameters<typeof sqlError>[0], DatabaseFault]> = [
  // Opening a connection failed: whatever the server said, the service could not connect.
  ["socket refused (ECONNREFUSED)", { tag: "ConnectionError", operation: "connect", code: "ECONNREFUSED" }, "unavailable"],
  ["database not accepting connections (55000, at connect)", {
    tag: "UnknownError",
    operation: "connect",
    code: "55000",
    severity: "FATAL"
  }, "unavailable"],
  [
    "server starting up (57P03, at connect)",
    { tag: "UnknownError", operation: "connect", code: "57P03", severity: "FATAL" },
    "unavailable"
  ],
  ["too many clients (53300, at connect)", { tag: "UnknownError", operation: "connect", code: "53300", severity: "FATAL" }, "unavailable"],
  ["no such database (3D000, at connect)", { tag: "UnknownError", operation: "connect", code: "3D000", severity: "FATAL" }, "unavailable"],
  [
    "a code nobody listed, at connect (XY123)",
    { tag: "UnknownError", operation: "connect", code: "XY123", severity: "FATAL" },
    "unavailable"
  ],
  [
    "password refused (28P01, at connect)",
    { tag: "AuthenticationError", operation: "connect", code: "28P01", severity: "FATAL" },
    "unavailable"
  ],
  // The connection broke or the server ended the session during a statement.
  ["connection closed mid-statement", { tag: "ConnectionError", operation: "query" }, "unavailable"],
  ["backend terminated (57P01 FATAL)", { tag: "UnknownError", operation: "query", code: "57P01", severity: "FATAL" }, "unavailable"],
  ["crash of another backend (57P02)", { tag: "UnknownError", operation: "query", code: "57P02", severity: "FATAL" }, "unavailable"],
  ["any FATAL error ends the session", { tag: "UnknownError", operation: "query", code: "0A000", severity: "FATAL" }, "unavailable"],
  ["a PANIC", { tag: "UnknownError", operation: "query", code: "XX000", severity: "PANIC" }, "unavailable"],
  ["connection exception class 08 (08006)", { tag: "ConnectionError", operation: "query", code: "08006" }, "unavailable"],
  // The server's state, not the statement.
  ["read-only after a failover (25006)", { tag: "UnknownError", operation: "query", code: "25006" }, "unavailable"],
  ["statement timeout (57014)", { tag: "StatementTimeoutError", operation: "query", code: "57014" }, "unavailable"],
  ["lock timeout (55P03)", { tag: "LockTimeoutError", operation: "query", code: "55P03" }, "unavailable"],
  ["idle-in-transaction timeout (25P03)", { tag: "UnknownError", operation: "query", code: "25P03" }, "unavailable"],
  ["disk full (53100)", { tag: "UnknownError", operation: "query", code: "53100" }, "unavailable"],
  ["out of memory (53200)", { tag: "UnknownError", operation: "query", code: "53200" }, "unavailable"],
  ["I/O error (58030)", { tag: "UnknownError", operation: "query", code: "58030" }, "unavailable"],
  ["internal error (XX000)", { tag: "UnknownError", operation: "query", code: "XX000" }, "unavailable"],
  ["object in use (55006)", { tag: "UnknownError", operation: "query", code: "55006" }, "unavailable"],
  ["not in prerequisite state (55000)", { tag: "UnknownError", operation: "query", code: "55000" }, "unavailable"],
  // Conflicts: the transaction is run again.
  ["serialization failure (40001)", { tag: "SerializationError", operation: "query", code: "40001" }, "conflict"],
  ["deadlock (40P01)", { tag: "DeadlockError", operation: "query", code: "40P01" }, "conflict"],
  ["serialization failure at COMMIT (40001)", { tag: "SerializationError", operation: "commit", code: "40001" }, "conflict"],
  // The client's value.
  ["numeric value out of range (22003)", { tag: "UnknownError", operation: "query", code: "22003" }, "invalid_value"],
  ["invalid text representation (22P02)", { tag: "UnknownError", operation: "query", code: "22P02" }, "invalid_value"],
  ["index row too large (54000)", { tag: "UnknownError", operation: "query", code: "54000" }, "invalid_value"],
  // Bugs stay 500s.
  ["syntax error (42601)", { tag: "SqlSyntaxError", operation: "query", code: "42601" }, "defect"],
  ["undefined column (42703)", { tag: "SqlSyntaxError", operation: "query", code: "42703" }, "defect"],
  ["permission denied (42501)", { tag: "AuthorizationError", operation: "query", code: "42501" }, "defect"],
  ["foreign key violation (23503)", { tag: "ConstraintError", operation: "query", code: "23503" }, "defect"],
  ["check violation (23514)", { tag: "ConstraintError", operation: "query", code: "23514" }, "defect"],
  ["COMMIT of an aborted transaction (no SQLSTATE)", { tag: "UnknownError", operation: "commit" }, "defect"],
  [
    "a message that only looks like an outage",
    { tag: "UnknownError", operation: "query", code: "42P01", message: "connection terminated" },
    "defect"
  ]
]

describe("databaseFaultOf", () => {
  for (const [name, error, fault] of rows) {
    it(`${name} is ${fault}`, () => {
      expect(databaseFaultOf(sqlError(error))).toBe(fault)
    })
  }

  it("an unmapped unique violation is a defect", () => {
    const error = new SqlError.SqlError({
      reason: new SqlError.UniqueViolation({
        cause: Object.assign(new Error("dup"), { code: "23505" }),
        constraint: "x_key",
        operation: "query"
      })
    })
    expect(databaseFaultOf(error)).toBe("defect")
  })

  it("a SqlError wrapped in another error keeps its meaning; anything that is not a database error has none", () => {
    const wrapped = new Error("outer", { cause: sqlError({ tag: "UnknownError", operation: "connect", code: "55000" }) })
    expect(databaseFaultOf(wrapped)).toBe("unavailable")
    expect(databaseFaultOf(new Error("connection terminated"))).toBeUndefined()
    expect(databaseFaultOf(Object.assign(new Error("x"), { code: "ECONNREFUSED" }))).toBeUndefined()
    expect(databaseFaultOf(new Cause.NoSuchElementError())).toBeUndefined()
    expect(databaseFaultOf(undefined)).toBeUndefined()
  })
})

describe("refusedValueOf", () => {
  it("names the SQLSTATE and the schema objects of a refused value, never the message, detail or context that quote it", () => {
    const value = "0000-01-01"
    const cause = Object.assign(new Error(`date/time field value out of range: "${value}"`), {
      code: "22008",
      routine: "DateTimeParseError",
      table: "guests",
      column: "birth_date",
      detail: `Failing row contains (${value}).`,
      where: `unnamed portal parameter $3 = '${value}'`,
      hint: `Perhaps you need a different "datestyle" setting for ${value}.`
    })
    const error = new SqlError.SqlError({
      reason: new SqlError.UnknownError({ cause, message: "PgConnection: error", operation: "query" })
    })
    expect(refusedValueOf(new Error("outer", { cause: error }))).toEqual({
      sqlstate: "22008",
      routine: "DateTimeParseError",
      table: "guests",
      column: "birth_date"
    })
    expect(refusedValueOf(new Error(value))).toEqual({})
  })
})
