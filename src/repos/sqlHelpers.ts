// The repository edge and small helpers shared by repositories: SQL and row-decoding failures are
// mapped here, once (a fault of the database is the 503 of DECISIONS §1, a unique violation the
// typed error it means, anything else a defect), the client-side deadline on database work,
// transactions (retried on a serialization failure or deadlock); LIKE patterns and page windows.
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"
import type * as Statement from "effect/sql/Statement"

import { DEFAULT_DATABASE_TIMEOUT_SECONDS } from "../Config.js"
import { DatabaseUnavailable } from "../domain/errors.js"
import { encodeCursor, type SyncWindow } from "../domain/sync.js"
import { databaseFaultOf, deadlineExceeded } from "./databaseFaults.js"
import { type RecordedEvent, recordedEventsSql, SLOT } from "./statements.js"

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
  new DatabaseUnavailable({
    message: "the database is unavailable for a moment; retry shortly",
    retry_after: DATABASE_RETRY_AFTER_SECONDS
  })

/**
 * How long one unit of database work may take, measured on real time (a test clock cannot stall
 * or hasten it): provided with the database layer (pgClientLayer), from DATABASE_TIMEOUT_SECONDS.
 */
export const DatabaseTimeout = Context.Reference<Duration.Duration>("Sql/DatabaseTimeout", {
  defaultValue: () => Duration.seconds(DEFAULT_DATABASE_TIMEOUT_SECONDS)
})

/** Set inside a unit that runs under a deadline: what it calls runs under that one, not its own. */
const UnderDeadline = Context.Reference<boolean>("Sql/UnderDeadline", { defaultValue: () => false })

/** DatabaseTimeout in milliseconds, converted once per value (it is one value per process). */
let lastTimeout: Duration.Duration | undefined
let lastTimeoutMs = 0
const millisOf = (timeout: Duration.Duration): number => {
  if (timeout !== lastTimeout) {
    lastTimeoutMs = Duration.toMillis(timeout)
    lastTimeout = timeout
  }
  return lastTimeoutMs
}

/**
 * A unit of database work bounded by DatabaseTimeout (a silent network cut or a hung server would
 * otherwise hold it for the kernel's retransmission timeout, minutes): past it, the unit fails with
 * the deadline's SqlError (an outage: deadlineExceeded) at once, while the unit itself is
 * interrupted in the background. There the driver keeps the connection out of the pool until its
 * statement has ended: it cancels the statement and waits for the server's answer, and a
 * connection whose statement the server did not confirm cancelled (57014), or that stays silent
 * for 5 s more, is closed, never lent again. A unit inside a unit runs under the outer deadline.
 * An interruption of the caller interrupts the unit and waits for it, as without a deadline.
 *
 * Every statement passes here, so it is built from few steps, all of Effect's public API: the unit
 * runs in a detached fiber of its own (only so that the caller can be answered while it is being
 * cancelled), started at once with the caller's context plus UnderDeadline; the caller waits in
 * one callback for the first of its exit and a real-time timer (a setTimeout: DatabaseTimeout is
 * real time, and the TestClock of the in-process tests must neither stall nor hasten it). The
 * fork and the wait are one uninterruptible step but for the wait itself, so that no interruption
 * can leave the unit running unobserved.
 */
export const withDeadline = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
  Effect.withFiber((caller) => {
    if (caller.getRef(UnderDeadline)) return self
    const timeout = caller.getRef(DatabaseTimeout)
    const timeoutMs = millisOf(timeout)
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(
        Effect.forkDetach(Effect.provideService(self, UnderDeadline, true), { startImmediately: true }),
        (unit) =>
          Effect.onInterrupt(
            restore(Effect.callback<A, E | SqlError.SqlError>((resume) => {
              let timer: ReturnType<typeof setTimeout> | undefined = undefined
              let ended = false
              const removeObserver = unit.addObserver((exit) => {
                ended = true
                if (timer !== undefined) clearTimeout(timer)
                resume(exit)
              })
              if (ended) return // done without waiting (a failure before any I/O)
              timer = setTimeout(() => {
                removeObserver()
                // The answer now; the unit's interruption (the statement's cancellation) goes on in the background.
                resume(Effect.andThen(
                  Effect.forkDetach(Fiber.interrupt(unit), { startImmediately: true }),
                  Effect.fail(deadlineExceeded(timeout))
                ))
              }, timeoutMs)
              timer.unref()
              return Effect.sync(() => {
                clearTimeout(timer)
                removeObserver()
              })
            })),
            // The caller is interrupted: so is the unit, and the caller waits for it, as without a deadline.
            () => Fiber.interrupt(unit)
          )
      )
    )
  })

/**
 * The repository edge: the work runs under the deadline (withDeadline); a fault of the database
 * or its connections (databaseFaultOf), the deadline's included, becomes the typed 503; any other
 * SQL error, a row that does not match its schema or a missing row that must exist becomes a
 * defect. A defect that is a serialization failure or deadlock is retried by
 * Transaction and then answered 503, a value PostgreSQL refused 400 (apiErrorOf), the rest 500.
 */
type EdgeFailure = SqlError.SqlError | Schema.SchemaError | Cause.NoSuchElementError

export const sqlEdge = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, EdgeFailure> | DatabaseUnavailable, R> =>
  Effect.catch(withDeadline(self), (error): Effect.Effect<never, Exclude<E, EdgeFailure> | DatabaseUnavailable> =>
    isSqlError(error)
      ? databaseFaultOf(error) === "unavailable" ? Effect.fail(databaseUnavailable()) : Effect.die(error)
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

/** Whether every failure and defect of a cause (and there is one, and no interruption) is such an error. */
const causeIsOnly = (cause: Cause.Cause<unknown>, is: (error: unknown) => boolean): boolean =>
  cause.reasons.length > 0 &&
  cause.reasons.every((reason) => reason._tag === "Fail" ? is(reason.error) : reason._tag === "Die" && is(reason.defect))

/**
 * The conflict that ended a transaction, if that is all that ended it: a SqlError the repository
 * edge let die, or one of BEGIN/COMMIT (never an interruption).
 */
const isConflictOnly = (cause: Cause.Cause<unknown>): boolean => causeIsOnly(cause, (error) => databaseFaultOf(error) === "conflict")

/**
 * Whether work failed only because of the database (DECISIONS §1): the typed 503 of sqlEdge, or a
 * SqlError that is an outage or a conflict. The daemon gives such work back to try again later.
 */
export const isDatabaseFaultCause = (cause: Cause.Cause<unknown>): boolean =>
  causeIsOnly(cause, (error) => {
    if (error instanceof DatabaseUnavailable) return true
    const fault = databaseFaultOf(error)
    return fault === "unavailable" || fault === "conflict"
  })

/** Runs of a transaction after a serialization failure or deadlock: 3 more, 5 ms apart and up, jittered. */
export const CONFLICT_RETRIES = 3

/**
 * The waits before each run again: 5, 10 and 20 ms, each give or take 20% (Schedule.jittered), so
 * that two losers do not meet again.
 */
const conflictWaits = Schedule.exponential(Duration.millis(5)).pipe(Schedule.jittered)

/**
 * A transaction run again while it ends in a serialization failure or deadlock (PostgreSQL rolled
 * it back, so running it again is safe), at most CONFLICT_RETRIES times; the last conflict is left
 * as it was (answered 503). The conflict arrives as a defect (the SqlError the repository edge let
 * die), so the whole cause is what is retried on (sandbox), and put back as it was afterwards.
 */
export const retryConflicts = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.sandbox(self).pipe(
    Effect.retry({ schedule: conflictWaits, times: CONFLICT_RETRIES, while: isConflictOnly }),
    Effect.catch(Effect.failCause)
  )

/**
 * Whether a transaction's end failed because its connection is gone. The ROLLBACK (or ROLLBACK TO
 * SAVEPOINT) after a failed unit is run by `withTransaction`, which makes its SqlError a defect
 * beside the unit's own failure; sqlEdge makes every other outage the typed 503, so a dying
 * SqlError that is an outage comes from there. The unit's writes are gone with the session (the
 * server rolls back what a lost connection left open), so the outage is the answer, whatever the
 * unit failed with (DECISIONS §1). An interruption is left as it is.
 */
const endedByOutage = (cause: Cause.Cause<unknown>): boolean =>
  !Cause.hasInterrupts(cause) &&
  cause.reasons.some((reason) => reason._tag === "Die" && isSqlError(reason.defect) && databaseFaultOf(reason.defect) === "unavailable")

/**
 * The one way services run a unit of work atomically, under one deadline from BEGIN to COMMIT (the
 * statements inside run under it, not each under its own): BEGIN/COMMIT failures pass the same edge, a
 * ROLLBACK that fails on a lost connection is the same outage (endedByOutage), and a
 * serialization failure or deadlock runs the whole unit again (retryConflicts).
 */
export class Transaction extends Context.Service<Transaction>()("Sql/Transaction", {
  make: Effect.map(SqlClient.SqlClient, (sql) => ({
    run: <A, E, R>(self: Effect.Effect<A, E, R>) =>
      sqlEdge(Effect.flatMap(Effect.serviceOption(sql.transactionService), (outer) =>
        // A nested unit is a savepoint: only the outermost transaction can be run again.
        Option.isSome(outer) ? sql.withTransaction(self) : retryConflicts(sql.withTransaction(self)))).pipe(
          Effect.catchCause((cause) => endedByOutage(cause) ? Effect.fail(databaseUnavailable()) : Effect.failCause(cause))
        )
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

/**
 * The sync key of a list's rows (DECISIONS §12): the instant column as UTC text with microseconds
 * (`sync_at`) and the id (`sync_id`), from which the next page's cursor is made.
 */
export const syncColumns = (sql: SqlClient.SqlClient, at: string, id: string): Statement.Fragment =>
  sql.literal(`to_char(${at} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS sync_at, ${id}::int AS sync_id`)

/** The filter `updated_since` adds (to the page and to the count alike); none without a window. */
export const sinceFilter = (sql: SqlClient.SqlClient, sync: SyncWindow | undefined, at: string): ReadonlyArray<Statement.Fragment> =>
  sync?.since !== undefined ? [sql`${sql.literal(at)} >= ${sync.since}::timestamptz`] : []

/**
 * How a page's statement ends: in sync order, the rows after the cursor's position and one more
 * than the page (to know whether another follows), read along the (at, id) index at any depth;
 * else `offsetOrder` with LIMIT/OFFSET. `where` is the list's filter (sinceFilter included).
 */
export const pageTail = (
  sql: SqlClient.SqlClient,
  o: {
    readonly sync: SyncWindow | undefined
    readonly where: Statement.Fragment
    readonly at: string
    readonly id: string
    readonly offsetOrder: string
    readonly pageSize: number
    readonly offset: number
  }
): Statement.Fragment => {
  if (o.sync === undefined) return sql`WHERE ${o.where} ORDER BY ${sql.literal(o.offsetOrder)} LIMIT ${o.pageSize} OFFSET ${o.offset}`
  const key = sql.literal(`(${o.at}, ${o.id})`)
  const after = o.sync.after !== undefined ? [sql`${key} > (${o.sync.after.at}::timestamptz, ${o.sync.after.id})`] : []
  return sql`WHERE ${sql.and([o.where, ...after])} ORDER BY ${sql.literal(`${o.at}, ${o.id}`)} LIMIT ${o.sync.limit + 1}`
}

/** The row fields of syncColumns. */
export const SyncKeyFields = { sync_at: Schema.String, sync_id: Schema.Int }

type SyncRow = { readonly sync_at: string; readonly sync_id: number; readonly total_count?: number | undefined }

/** A list page as the contract shows it: the records (row keys of paging removed), the total and the next cursor. */
export interface ListPage<A> {
  readonly list: ReadonlyArray<A>
  readonly total: number
  readonly next_cursor: string | null
}

const toItem = <Row extends SyncRow>({ sync_at: _a, sync_id: _i, total_count: _t, ...item }: Row): Omit<Row, keyof SyncRow> => item

/**
 * A page in either order with its exact total: by `page`, as pageAndTotal (no cursor); in sync
 * order, the page (`page(false)`, one row more than asked) and the total of the filters (the
 * counter when the filters have one, else `count`), and the cursor after the page's last record
 * when more follow.
 */
export const listPage = <Row extends SyncRow, E, R>(o: {
  readonly sync: SyncWindow | undefined
  readonly counter: Effect.Effect<number, E, R> | undefined
  readonly page: (window: boolean) => Effect.Effect<ReadonlyArray<Row>, E, R>
  readonly count: Effect.Effect<ReadonlyArray<{ readonly n: number }>, E, R>
  readonly offset: number
}): Effect.Effect<ListPage<Omit<Row, keyof SyncRow>>, E, R> => {
  const sync = o.sync
  if (sync === undefined) {
    return Effect.map(pageAndTotal(o), ({ rows, total }) => ({ list: rows.map(toItem), total, next_cursor: null }))
  }
  const total = o.counter ?? Effect.map(o.count, (rows) => rows[0]?.n ?? 0)
  return Effect.map(Effect.all([o.page(false), total], { concurrency: 2 }), ([rows, n]) => {
    const page = rows.slice(0, sync.limit)
    const last = page.at(-1)
    return {
      list: page.map(toItem),
      total: n,
      next_cursor: rows.length > sync.limit && last !== undefined ? encodeCursor(sync.scope, { at: last.sync_at, id: last.sync_id }) : null
    }
  })
}

/**
 * listPage of a list without counters whose page and count statements take one request (the
 * page's with `window`: whether to select the window count), at the repository edge.
 */
export const uncountedList = <Q extends { readonly sync: SyncWindow | undefined }, Row extends SyncRow, E, R>(
  statements: {
    readonly page: (request: Q & { readonly window: boolean }) => Effect.Effect<ReadonlyArray<Row>, E, R>
    readonly count: (request: Q) => Effect.Effect<ReadonlyArray<{ readonly n: number }>, E, R>
  },
  request: Q,
  offset: number
) =>
  sqlEdge(listPage({
    sync: request.sync,
    counter: undefined,
    page: (window) => statements.page({ ...request, window }),
    count: statements.count(request),
    offset
  }))

/**
 * A write and its events in one statement (issue 37): `change` (an INSERT or UPDATE whose
 * RETURNING selects the read endpoint's columns) as the CTE `c`, one `type` event per row it
 * returned (the record as the endpoint shows it: recordJsonSql; `extra` merged in), and the rows
 * of `c` as the answer. One round trip, no BEGIN/COMMIT: the statement is its own transaction (or
 * part of the caller's, an Idempotency-Key's), so the event exists exactly when the change
 * committed (DECISIONS §12); the derived counters move in it too (row_counts' statement triggers).
 * The change must lock every row it returns (an INSERT's new row, an UPDATE's row): eventsFromSql
 * relies on that for the feed's order.
 */
export const recordedWrite = (
  sql: SqlClient.SqlClient,
  change: Statement.Fragment,
  event: RecordedEvent | RecordedEventsSql
): Statement.Statement<Record<string, unknown>> =>
  sql`WITH c AS (${change}), e AS (${sql.literal(typeof event === "string" ? event : recordedEventsSql(event))}) SELECT * FROM c`

/** recordedEventsSql's text, made once where the event is the same on every write (recordedWrites' inserts). */
export type RecordedEventsSql = string

/**
 * SQL text with parameter slots (statements.ts' SLOT, text shared with the benchmark floors) as a
 * fragment whose slots hold `values`, in order: the text stays the same whatever the values, so
 * the pool prepares it once.
 */
export const slotted = (sql: SqlClient.SqlClient, text: string, values: ReadonlyArray<unknown>): Statement.Fragment => {
  const pieces = text.split(SLOT)
  if (pieces.length !== values.length + 1) throw new Error(`${pieces.length - 1} slots for ${values.length} values`)
  return pieces.slice(1).reduce<Statement.Fragment>(
    (fragment, piece, i) => sql`${fragment}${values[i]}${sql.literal(piece)}`,
    sql.literal(pieces[0]!)
  )
}

/**
 * A write that is one statement, at the repository edge (sqlEdge), run again like a transaction
 * (retryConflicts) when it ends in a deadlock and runs outside of any transaction: PostgreSQL
 * rolled the statement back whole, so nothing of it was written. Inside a transaction (an
 * Idempotency-Key's) the statement's failure ends that transaction, which its Transaction.run runs
 * again.
 */
export const statementEdge = <A, E, R>(sql: SqlClient.SqlClient, self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(
    Effect.serviceOption(sql.transactionService),
    (outer) => Option.isSome(outer) ? sqlEdge(self) : retryConflicts(sqlEdge(self))
  )
