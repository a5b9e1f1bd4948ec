// API clients (app_key/app_secret holders): the only SQL over `clients`. Rows are decoded by their
// schema at the boundary.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"
import * as Struct from "effect/Struct"

import { Permission } from "../../schema/Permissions.js"
import { SubscribableEventType } from "../../schema/SelfService.js"
import { Instant, IsoTimestamp } from "./rows.js"
import { sqlEdge } from "./sqlHelpers.js"

const ClientStatus = Schema.Literals(["active", "disabled"])

/**
 * A `clients` row as selected by COLUMNS. Expiries stay instants (they are compared with the
 * clock); created_at is only shown, as ISO text in the platform time zone.
 */
const ClientRow = Schema.Struct({
  id: Schema.Int,
  app_key: Schema.String,
  name: Schema.String,
  status: ClientStatus,
  permissions: Schema.Array(Permission),
  masking: Schema.Boolean,
  secret_enc: Schema.String,
  prev_secret_enc: Schema.NullOr(Schema.String),
  prev_secret_expires_at: Schema.NullOr(Instant),
  rate_rps: Schema.NullOr(Schema.Number),
  rate_burst: Schema.NullOr(Schema.Int),
  webhook_url: Schema.NullOr(Schema.String),
  webhook_events: Schema.Array(SubscribableEventType),
  webhook_enabled: Schema.Boolean,
  webhook_secret_enc: Schema.NullOr(Schema.String),
  webhook_prev_secret_enc: Schema.NullOr(Schema.String),
  webhook_prev_expires_at: Schema.NullOr(Instant),
  created_at: IsoTimestamp,
  /** Bound to companies (DECISIONS §14): it reads and changes only `companies`' records. */
  scoped: Schema.Boolean,
  companies: Schema.Array(Schema.Int)
})
export type ClientRow = typeof ClientRow.Type

/** The columns an operator command may change; absent ones are left as they are. */
const ClientChange = ClientRow.mapFields(Struct.pick([
  "status",
  "permissions",
  "masking",
  "secret_enc",
  "prev_secret_enc",
  "prev_secret_expires_at",
  "rate_rps",
  "rate_burst",
  "webhook_url",
  "webhook_events",
  "webhook_enabled",
  "webhook_secret_enc",
  "webhook_prev_secret_enc",
  "webhook_prev_expires_at"
])).mapFields(Struct.map(Schema.optional))
export type ClientChange = typeof ClientChange.Type

const NewClient = Schema.Struct({
  appKey: Schema.String,
  name: Schema.String,
  permissions: Schema.Array(Permission),
  masking: Schema.Boolean,
  secretEnc: Schema.String
})

const COLUMNS = `id::int AS id, app_key, name, status, permissions, masking, secret_enc, prev_secret_enc,
  prev_secret_expires_at, rate_rps, rate_burst, webhook_url, webhook_events, webhook_enabled,
  webhook_secret_enc, webhook_prev_secret_enc, webhook_prev_expires_at, created_at, scoped,
  ARRAY(SELECT cc.company_id::int FROM client_companies cc WHERE cc.client_id = clients.id ORDER BY cc.company_id) AS companies`

export class ClientsRepo extends Context.Service<ClientsRepo>()("Clients/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(COLUMNS)

    const findByAppKey = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ClientRow,
      execute: (appKey) => sql`SELECT ${cols} FROM clients WHERE app_key = ${appKey}`
    })

    // Inside a transaction: the row stays locked until it ends, so that a change computed from it
    // (a rotation makes the current secret the previous one) cannot interleave with another.
    const lockByAppKey = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ClientRow,
      execute: (appKey) => sql`SELECT ${cols} FROM clients WHERE app_key = ${appKey} FOR UPDATE`
    })

    const listAll = SqlSchema.findAll({
      Request: Schema.Void,
      Result: ClientRow,
      execute: () => sql`SELECT ${cols} FROM clients ORDER BY id`
    })

    const insert = SqlSchema.findOne({
      Request: NewClient,
      Result: ClientRow,
      execute: (row) =>
        sql`INSERT INTO clients (app_key, name, permissions, masking, secret_enc)
          VALUES (${row.appKey}, ${row.name}, ${row.permissions}::text[], ${row.masking}, ${row.secretEnc})
          RETURNING ${cols}`
    })

    const update = SqlSchema.findOneOption({
      Request: Schema.Struct({ appKey: Schema.String, change: ClientChange }),
      Result: ClientRow,
      execute: ({ appKey, change }) => {
        const values: Record<string, unknown> = {}
        for (const [k, v] of Object.entries(change)) {
          if (v !== undefined) values[k] = v
        }
        return sql`UPDATE clients SET ${sql.update(values)}, updated_at = now()
          WHERE app_key = ${appKey} RETURNING ${cols}`
      }
    })

    // One statement: the binding and the flag change together, and the row's NOTIFY (and the
    // binding table's) reach every API instance's cache at commit.
    const replaceScope = SqlSchema.findOneOption({
      Request: Schema.Struct({ appKey: Schema.String, companies: Schema.NullOr(Schema.Array(Schema.Int)) }),
      Result: ClientRow,
      execute: ({ appKey, companies }) =>
        sql`WITH c AS (
            UPDATE clients SET scoped = ${companies !== null}, updated_at = now() WHERE app_key = ${appKey} RETURNING id
          ), gone AS (
            DELETE FROM client_companies cc USING c
            WHERE cc.client_id = c.id AND NOT (cc.company_id = ANY (${companies ?? []}::bigint[]))
          ), added AS (
            INSERT INTO client_companies (client_id, company_id)
            SELECT c.id, x.id FROM c, unnest(${companies ?? []}::bigint[]) AS x(id)
            WHERE EXISTS (SELECT 1 FROM companies WHERE companies.id = x.id)
            ON CONFLICT DO NOTHING
          )
          SELECT id FROM c`.pipe(
          Effect.flatMap((rows) => rows.length === 0 ? Effect.succeed(rows) : sql`SELECT ${cols} FROM clients WHERE app_key = ${appKey}`)
        )
    })

    return {
      findByAppKey: (appKey: string) => sqlEdge(findByAppKey(appKey)),
      /** The row, locked until the enclosing transaction ends (none for an unknown app_key). */
      lockByAppKey: (appKey: string) => sqlEdge(lockByAppKey(appKey)),
      list: sqlEdge(listAll(undefined)),
      insert: (row: typeof NewClient.Type) => sqlEdge(insert(row)),
      /** Applies a partial change; returns the updated row, or none for an unknown app_key. */
      update: (appKey: string, change: ClientChange) => sqlEdge(update({ appKey, change })),
      /**
       * Binds the client to these companies (null: unbinds it); the row as it is now, or none for an
       * unknown app_key. Ids of no company are left out (the caller compares). Run it in a
       * transaction: the second statement reads what the first wrote.
       */
      replaceScope: (appKey: string, companies: ReadonlyArray<number> | null) => sqlEdge(replaceScope({ appKey, companies }))
    } as const
  })
}) {
  static readonly layer = Layer.effect(ClientsRepo, ClientsRepo.make)
}
