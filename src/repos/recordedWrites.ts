// Writes that record their event in their own statement (issue 37): the change and its event as
// one data-modifying CTE (recordedWrite), one round trip and no BEGIN/COMMIT. A repository whose
// record is one row of its table, shown by its read endpoint as its RETURNING columns, makes its
// insert and its update here. A write that must read before it decides (a row it locks to derive
// the next state from, a reference it checks) keeps its transaction in its service.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"

import type { CatalogueEventType } from "../domain/eventTypes.js"
import { EVENT_READ_PERMISSION, resourceOfEventType } from "../domain/eventTypes.js"
import { PlatformTimeZone } from "./rows.js"
import { recordedWrite } from "./sqlHelpers.js"
import { changedFieldsSql, recordedEventsSql } from "./statements.js"

/**
 * The insert (`created` event) and the update (`updated` event, with `changed_fields`) of one
 * table's rows, each one statement, answering the row as `row` decodes it (`columns`: the read
 * endpoint's, `times` its instants). The update of an unknown id changes nothing and answers none.
 */
export const makeRecordedWrites = <A, I, RD, RE>(
  sql: SqlClient.SqlClient,
  o: {
    readonly table: string
    readonly columns: string
    readonly row: Schema.Codec<A, I, RD, RE>
    readonly created: CatalogueEventType
    readonly updated: CatalogueEventType
    readonly times: ReadonlyArray<string>
  }
) => {
  const cols = sql.literal(o.columns)
  // A constant of the code, written as is (as the repositories write their table names).
  const table = sql.literal(o.table)
  const event = (type: CatalogueEventType, timeZone: string, extra?: string) => ({
    type,
    permission: EVENT_READ_PERMISSION[resourceOfEventType(type)],
    timeZone,
    times: o.times,
    ...(extra === undefined ? {} : { extra })
  })
  // The created event's SQL is the same on every insert (one time zone in practice): made once.
  const createdEvents = new Map<string, string>()
  const createdEventsSql = (timeZone: string): string => {
    let text = createdEvents.get(timeZone)
    if (text === undefined) createdEvents.set(timeZone, text = recordedEventsSql(event(o.created, timeZone)))
    return text
  }
  // The row answered, decoded; the input is not encoded again (it comes typed from the service:
  // SqlSchema's request schema, a record of unknowns here, would only walk it).
  const decodeRow = Schema.decodeUnknownEffect(o.row)
  const insertRow = (
    input: Readonly<Record<string, unknown>>,
    timeZone: string
  ): Effect.Effect<A, SqlError.SqlError | Schema.SchemaError | Cause.NoSuchElementError, RD> =>
    Effect.flatMap(
      recordedWrite(sql, sql`INSERT INTO ${table} ${sql.insert({ ...input })} RETURNING ${cols}`, createdEventsSql(timeZone)),
      (rows): Effect.Effect<A, Schema.SchemaError | Cause.NoSuchElementError, RD> =>
        rows.length > 0 ? decodeRow(rows[0]) : Effect.fail(new Cause.NoSuchElementError())
    )
  const updateRow = (
    id: number,
    change: Readonly<Record<string, unknown>>,
    timeZone: string
  ): Effect.Effect<Option.Option<A>, SqlError.SqlError | Schema.SchemaError, RD> =>
    Effect.flatMap(
      recordedWrite(
        sql,
        Object.keys(change).length === 0
          ? sql`UPDATE ${table} SET updated_at = now() WHERE id = ${id} RETURNING ${cols}`
          : sql`UPDATE ${table} SET ${sql.update({ ...change })}, updated_at = now() WHERE id = ${id} RETURNING ${cols}`,
        event(o.updated, timeZone, changedFieldsSql(Object.keys(change)))
      ),
      (rows): Effect.Effect<Option.Option<A>, Schema.SchemaError, RD> =>
        rows.length > 0 ? Effect.map(decodeRow(rows[0]), Option.some) : Effect.succeed(Option.none())
    )
  return {
    /** Inserts a row from these columns and records its created event. */
    insert: (input: Readonly<Record<string, unknown>>) => PlatformTimeZone.use((timeZone) => insertRow(input, timeZone)),
    /** Sets these columns (none: only `updated_at`) and records the updated event naming them; none for an unknown id. */
    update: (id: number, change: Readonly<Record<string, unknown>>) => PlatformTimeZone.use((timeZone) => updateRow(id, change, timeZone))
  } as const
}
