// Every sealed value at rest (DECISIONS §13), for the operator's `keys list` and `keys rotate`: the
// count per column and key id, and batches of values not under the sealing key with their
// replacement written only where the stored value is still the one read (compare-and-set), so a
// client's rotation meanwhile is never overwritten. The only SQL that reads sealed columns across
// rows; the services write them through their own repositories.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { Bytes } from "./rows.js"
import { sqlEdge } from "./sqlHelpers.js"

/** The sealed columns of `clients` (all keyed by app_key). */
export const CLIENT_SECRET_COLUMNS = ["secret_enc", "prev_secret_enc", "webhook_secret_enc", "webhook_prev_secret_enc"] as const
export type ClientSecretColumn = typeof CLIENT_SECRET_COLUMNS[number]

const CountRow = Schema.Struct({
  column: Schema.String,
  /** `v2`, `v1`, `plain` (an answer kept before sealing) or `unrecognised` (never the value itself). */
  scheme: Schema.String,
  kid: Schema.NullOr(Schema.String),
  n: Schema.Int
})
export type SealedCount = typeof CountRow.Type

const ClientSecrets = Schema.Struct({
  id: Schema.Int,
  app_key: Schema.String,
  secret_enc: Schema.String,
  prev_secret_enc: Schema.NullOr(Schema.String),
  webhook_secret_enc: Schema.NullOr(Schema.String),
  webhook_prev_secret_enc: Schema.NullOr(Schema.String)
})
export type ClientSecrets = typeof ClientSecrets.Type

const KeptAnswer = Schema.Struct({
  app_key: Schema.String,
  key: Schema.String,
  response_sealed: Schema.NullOr(Schema.String),
  /** An answer kept in plain bytes before sealing, and its MD5 (what the compare-and-set checks). */
  response_body: Schema.NullOr(Bytes),
  body_md5: Schema.NullOr(Schema.String)
})
export type KeptAnswer = typeof KeptAnswer.Type

/** A replacement: the value read (or the plain body's MD5) and the value sealed under the sealing key. */
export interface ClientReplacement {
  readonly id: number
  readonly old: string
  readonly sealed: string
}

export interface AnswerReplacement {
  readonly app_key: string
  readonly key: string
  /** The sealed value read; null for a plain body, then matched by `body_md5`. */
  readonly old: string | null
  readonly body_md5: string | null
  readonly sealed: string
}

export class SealedValuesRepo extends Context.Service<SealedValuesRepo>()("SealedValues/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const count = SqlSchema.findAll({
      Request: Schema.Void,
      Result: CountRow,
      execute: () =>
        sql`SELECT v.col AS column,
            CASE WHEN v.val IS NULL THEN 'plain' WHEN starts_with(v.val, 'v2:') THEN 'v2' WHEN starts_with(v.val, 'v1:') THEN 'v1'
              ELSE 'unrecognised' END AS scheme,
            CASE WHEN starts_with(v.val, 'v2:') THEN split_part(v.val, ':', 2) END AS kid,
            count(*)::int AS n
          FROM (
            SELECT 'clients.secret_enc' AS col, secret_enc AS val FROM clients
            UNION ALL SELECT 'clients.prev_secret_enc', prev_secret_enc FROM clients WHERE prev_secret_enc IS NOT NULL
            UNION ALL SELECT 'clients.webhook_secret_enc', webhook_secret_enc FROM clients WHERE webhook_secret_enc IS NOT NULL
            UNION ALL SELECT 'clients.webhook_prev_secret_enc', webhook_prev_secret_enc FROM clients
              WHERE webhook_prev_secret_enc IS NOT NULL
            UNION ALL SELECT 'idempotency_keys.response_sealed', response_sealed FROM idempotency_keys WHERE response_sealed IS NOT NULL
            UNION ALL SELECT 'idempotency_keys.response_body', NULL FROM idempotency_keys WHERE response_body IS NOT NULL
          ) AS v
          GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`
    })

    const clientsBatch = SqlSchema.findAll({
      Request: Schema.Struct({ after: Schema.Int, prefix: Schema.String, limit: Schema.Int }),
      Result: ClientSecrets,
      execute: ({ after, limit, prefix }) =>
        sql`SELECT id::int AS id, app_key, secret_enc, prev_secret_enc, webhook_secret_enc, webhook_prev_secret_enc
          FROM clients
          WHERE id > ${after} AND (NOT starts_with(secret_enc, ${prefix}) OR NOT starts_with(prev_secret_enc, ${prefix})
            OR NOT starts_with(webhook_secret_enc, ${prefix}) OR NOT starts_with(webhook_prev_secret_enc, ${prefix}))
          ORDER BY id LIMIT ${limit}`
    })

    const replaceClients = SqlSchema.findAll({
      Request: Schema.Struct({
        column: Schema.Literals(CLIENT_SECRET_COLUMNS),
        ids: Schema.Array(Schema.Int),
        olds: Schema.Array(Schema.String),
        sealed: Schema.Array(Schema.String)
      }),
      Result: Schema.Struct({ id: Schema.Int }),
      execute: ({ column, ids, olds, sealed }) =>
        sql`UPDATE clients AS c SET ${sql(column)} = u.sealed
          FROM unnest(${ids}::bigint[], ${olds}::text[], ${sealed}::text[]) AS u(id, old, sealed)
          WHERE c.id = u.id AND c.${sql(column)} = u.old
          RETURNING c.id::int AS id`
    })

    const answersBatch = SqlSchema.findAll({
      Request: Schema.Struct({
        after: Schema.NullOr(Schema.Struct({ app_key: Schema.String, key: Schema.String })),
        prefix: Schema.String,
        limit: Schema.Int
      }),
      Result: KeptAnswer,
      execute: ({ after, limit, prefix }) =>
        sql`SELECT app_key, key, response_sealed, response_body, md5(response_body) AS body_md5
          FROM idempotency_keys
          WHERE ${after === null ? sql`TRUE` : sql`(app_key, key) > (${after.app_key}, ${after.key})`}
            AND (NOT starts_with(response_sealed, ${prefix}) OR response_body IS NOT NULL)
          ORDER BY app_key, key LIMIT ${limit}`
    })

    const replaceAnswers = SqlSchema.findAll({
      Request: Schema.Struct({
        app_keys: Schema.Array(Schema.String),
        keys: Schema.Array(Schema.String),
        olds: Schema.Array(Schema.String),
        md5s: Schema.Array(Schema.String),
        sealed: Schema.Array(Schema.String)
      }),
      Result: Schema.Struct({ plain: Schema.Boolean }),
      execute: (r) =>
        sql`UPDATE idempotency_keys AS i SET response_sealed = u.sealed, response_body = NULL
          FROM unnest(${r.app_keys}::text[], ${r.keys}::text[], ${r.olds}::text[], ${r.md5s}::text[], ${r.sealed}::text[])
            AS u(app_key, key, old, body_md5, sealed)
          WHERE i.app_key = u.app_key AND i.key = u.key
            AND CASE WHEN u.old <> '' THEN i.response_sealed = u.old
              ELSE i.response_sealed IS NULL AND md5(i.response_body) = u.body_md5 END
          RETURNING u.old = '' AS plain`
    })

    return {
      /** How many values each column holds per scheme and key id. */
      count: sqlEdge(count(undefined)),
      /** Clients after `after` (by id) holding a value not under `prefix` (`v2:<sealing kid>:`). */
      clientsBatch: (after: number, prefix: string, limit: number) => sqlEdge(clientsBatch({ after, prefix, limit })),
      /** Writes each replacement where the column still holds the value read; the ids written. */
      replaceClients: (column: ClientSecretColumn, replacements: ReadonlyArray<ClientReplacement>) =>
        replacements.length === 0 ? Effect.succeed(0) : sqlEdge(Effect.map(
          replaceClients({
            column,
            ids: replacements.map((r) => r.id),
            olds: replacements.map((r) => r.old),
            sealed: replacements.map((r) => r.sealed)
          }),
          (rows) => rows.length
        )),
      /** Kept answers after `after` (by app_key, key) not sealed under `prefix`, or kept plain. */
      answersBatch: (after: { readonly app_key: string; readonly key: string } | null, prefix: string, limit: number) =>
        sqlEdge(answersBatch({ after, prefix, limit })),
      /** Writes each replacement where the answer is still the one read; per row written, whether it was plain. */
      replaceAnswers: (replacements: ReadonlyArray<AnswerReplacement>) =>
        replacements.length === 0 ? Effect.succeed([]) : sqlEdge(Effect.map(
          replaceAnswers({
            app_keys: replacements.map((r) => r.app_key),
            keys: replacements.map((r) => r.key),
            // '' for none: the driver cannot type an array of nulls alone (no sealed value or MD5 is '').
            olds: replacements.map((r) => r.old ?? ""),
            md5s: replacements.map((r) => r.body_md5 ?? ""),
            sealed: replacements.map((r) => r.sealed)
          }),
          (rows) => rows.map((r) => r.plain)
        ))
    } as const
  })
}) {
  static readonly layer = Layer.effect(SealedValuesRepo, SealedValuesRepo.make)
}
