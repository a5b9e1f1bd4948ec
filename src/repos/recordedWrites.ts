// Writes that record their event in their own statement (issue 37): the change and its event as
// one data-modifying CTE (recordedWrite), one round trip and no BEGIN/COMMIT. A repository whose
// record is one row of its table, shown by its read endpoint as its RETURNING columns, makes its
// insert and its update here. A write that must read before it decides (a row it locks to derive
// the next state from, a reference it checks) keeps its transaction in its service.
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import type { CatalogueEventType } from "../domain/eventTypes.js"
import { EVENT_READ_PERMISSION, resourceOfEventType } from "../domain/eventTypes.js"
import { PlatformTimeZone } from "./rows.js"
import { recordedWrite } from "./sqlHelpers.js"
import { changedFieldsSql } from "./statements.js"

const Change = Schema.Record(Schema.String, Schema.Unknown)

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
  const insertRow = SqlSchema.findOne({
    Request: Schema.Struct({ input: Change, timeZone: Schema.String }),
    Result: o.row,
    execute: ({ input, timeZone }) =>
      recordedWrite(sql, sql`INSERT INTO ${table} ${sql.insert({ ...input })} RETURNING ${cols}`, event(o.created, timeZone))
  })
  const updateRow = SqlSchema.findOneOption({
    Request: Schema.Struct({ id: Schema.Int, change: Change, changed: Schema.Array(Schema.String), timeZone: Schema.String }),
    Result: o.row,
    execute: ({ change, changed, id, timeZone }) =>
      recordedWrite(
        sql,
        Object.keys(change).length === 0
          ? sql`UPDATE ${table} SET updated_at = now() WHERE id = ${id} RETURNING ${cols}`
          : sql`UPDATE ${table} SET ${sql.update({ ...change })}, updated_at = now() WHERE id = ${id} RETURNING ${cols}`,
        event(o.updated, timeZone, changedFieldsSql(changed))
      )
  })
  return {
    /** Inserts a row from these columns and records its created event. */
    insert: (input: Readonly<Record<string, unknown>>) => PlatformTimeZone.use((timeZone) => insertRow({ input, timeZone })),
    /** Sets these columns (none: only `updated_at`) and records the updated event naming them; none for an unknown id. */
    update: (id: number, change: Readonly<Record<string, unknown>>) =>
      PlatformTimeZone.use((timeZone) => updateRow({ id, change, changed: Object.keys(change), timeZone }))
  } as const
}
