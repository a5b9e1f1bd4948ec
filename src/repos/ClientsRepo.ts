// API clients (app_key/app_secret holders): the only SQL over `clients`.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"

export interface ClientRow {
  readonly id: number
  readonly app_key: string
  readonly name: string
  readonly status: "active" | "disabled"
  readonly permissions: ReadonlyArray<string>
  readonly masking: boolean
  readonly secret_enc: string
  readonly prev_secret_enc: string | null
  readonly prev_secret_expires_at: Date | null
  readonly rate_rps: number | null
  readonly rate_burst: number | null
  readonly webhook_url: string | null
  readonly webhook_events: ReadonlyArray<string>
  readonly webhook_enabled: boolean
  readonly webhook_secret_enc: string | null
  readonly webhook_prev_secret_enc: string | null
  readonly webhook_prev_expires_at: Date | null
  readonly created_at: Date
}

const COLUMNS = `id::int AS id, app_key, name, status, permissions, masking, secret_enc, prev_secret_enc,
  prev_secret_expires_at, rate_rps, rate_burst, webhook_url, webhook_events, webhook_enabled,
  webhook_secret_enc, webhook_prev_secret_enc, webhook_prev_expires_at, created_at`

export const makeClientsRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cols = sql.literal(COLUMNS)

  const findByAppKey = (appKey: string) =>
    Effect.map(
      sql<ClientRow>`SELECT ${cols} FROM clients WHERE app_key = ${appKey}`,
      (rows) => Option.fromNullable(rows[0])
    )

  const list = sql<ClientRow>`SELECT ${cols} FROM clients ORDER BY id`

  const insert = (row: { appKey: string; name: string; permissions: ReadonlyArray<string>; masking: boolean; secretEnc: string }) =>
    Effect.map(
      sql<ClientRow>`INSERT INTO clients (app_key, name, permissions, masking, secret_enc)
        VALUES (${row.appKey}, ${row.name}, ${[...row.permissions]}::text[], ${row.masking}, ${row.secretEnc})
        RETURNING ${cols}`,
      (rows) => rows[0]!
    )

  /** Applies a partial change; returns the updated row, or none for an unknown app_key. */
  const update = (appKey: string, change: Partial<{
    status: "active" | "disabled"
    permissions: ReadonlyArray<string>
    masking: boolean
    secret_enc: string
    prev_secret_enc: string | null
    prev_secret_expires_at: Date | null
    rate_rps: number | null
    rate_burst: number | null
    webhook_url: string | null
    webhook_events: ReadonlyArray<string>
    webhook_enabled: boolean
    webhook_secret_enc: string | null
    webhook_prev_secret_enc: string | null
    webhook_prev_expires_at: Date | null
  }>) => {
    const values: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(change)) {
      if (v !== undefined) values[k] = v
    }
    return Effect.map(
      sql<ClientRow>`UPDATE clients SET ${sql.update(values)}, updated_at = now()
        WHERE app_key = ${appKey} RETURNING ${cols}`,
      (rows) => Option.fromNullable(rows[0])
    )
  }

  return { findByAppKey, list, insert, update } as const
})

export class ClientsRepo extends Context.Tag("Clients/Repo")<ClientsRepo, Effect.Effect.Success<typeof makeClientsRepo>>() {}
export const ClientsRepoLive = Layer.effect(ClientsRepo, makeClientsRepo)
