// Idempotency keys (DECISIONS §11): the only SQL over `idempotency_keys`. The claim is one INSERT
// on the (app_key, key) primary key, so exactly one attempt runs across every API instance.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import type { KeptRequest } from "../domain/idempotency.js"
import { Bytes } from "./rows.js"
import { sqlEdge } from "./sqlHelpers.js"

const KeyRef = Schema.Struct({ app_key: Schema.String, key: Schema.String })

const ClaimRequest = Schema.Struct({
  app_key: Schema.String,
  key: Schema.String,
  fingerprint: Schema.String,
  lease_seconds: Schema.Number,
  ttl_seconds: Schema.Number
})

const KeptRow = Schema.Struct({
  fingerprint: Schema.String,
  state: Schema.Literals(["running", "done"]),
  lease_left_seconds: Schema.Number,
  response_status: Schema.NullOr(Schema.Int),
  response_body: Schema.NullOr(Bytes),
  response_type: Schema.NullOr(Schema.String)
})

const toKept = (row: typeof KeptRow.Type): KeptRequest =>
  row.state === "done" && row.response_status !== null && row.response_body !== null
    ? {
      state: "done",
      fingerprint: row.fingerprint,
      status: row.response_status,
      body: row.response_body,
      contentType: row.response_type ?? "application/json"
    }
    : { state: "running", fingerprint: row.fingerprint, leaseLeftSeconds: row.lease_left_seconds }

export class IdempotencyRepo extends Context.Service<IdempotencyRepo>()("Idempotency/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Claims the key, or takes over one whose window has passed; Some(true) when this attempt runs. */
    const insert = SqlSchema.findOneOption({
      Request: ClaimRequest,
      Result: Schema.Struct({ claimed: Schema.Boolean }),
      execute: (r) =>
        sql`INSERT INTO idempotency_keys (app_key, key, fingerprint, lease_until, expires_at)
          VALUES (${r.app_key}, ${r.key}, ${r.fingerprint},
            now() + make_interval(secs => ${r.lease_seconds}), now() + make_interval(secs => ${r.ttl_seconds}))
          ON CONFLICT (app_key, key) DO UPDATE SET
            fingerprint = EXCLUDED.fingerprint, state = 'running', lease_until = EXCLUDED.lease_until,
            expires_at = EXCLUDED.expires_at, response_status = NULL, response_body = NULL, response_type = NULL,
            created_at = now()
          WHERE idempotency_keys.expires_at <= now()
          RETURNING true AS claimed`
    })

    const find = SqlSchema.findOneOption({
      Request: KeyRef,
      Result: KeptRow,
      execute: (r) =>
        sql`SELECT fingerprint, state, extract(epoch FROM lease_until - now())::float8 AS lease_left_seconds,
            response_status, response_body, response_type
          FROM idempotency_keys WHERE app_key = ${r.app_key} AND key = ${r.key} AND expires_at > now()`
    })

    /** A running attempt whose lease ran out (its instance died) is taken over by exactly one repeat. */
    const takeOver = SqlSchema.findOneOption({
      Request: Schema.Struct({ app_key: Schema.String, key: Schema.String, lease_seconds: Schema.Number }),
      Result: Schema.Struct({ claimed: Schema.Boolean }),
      execute: (r) =>
        sql`UPDATE idempotency_keys SET lease_until = now() + make_interval(secs => ${r.lease_seconds})
          WHERE app_key = ${r.app_key} AND key = ${r.key} AND state = 'running' AND lease_until <= now()
          RETURNING true AS claimed`
    })

    const complete = SqlSchema.void({
      Request: Schema.Struct({
        app_key: Schema.String,
        key: Schema.String,
        status: Schema.Int,
        body: Schema.Uint8Array,
        content_type: Schema.String
      }),
      execute: (r) =>
        sql`UPDATE idempotency_keys SET state = 'done', response_status = ${r.status}, response_body = ${r.body},
          response_type = ${r.content_type} WHERE app_key = ${r.app_key} AND key = ${r.key}`
    })

    const release = SqlSchema.void({
      Request: KeyRef,
      execute: (r) => sql`DELETE FROM idempotency_keys WHERE app_key = ${r.app_key} AND key = ${r.key} AND state = 'running'`
    })

    const prune = SqlSchema.findAll({
      Request: Schema.Int,
      Result: Schema.Struct({ n: Schema.Int }),
      execute: (limit) =>
        sql`WITH gone AS (
            DELETE FROM idempotency_keys WHERE ctid IN (
              SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT ${limit})
            RETURNING 1)
          SELECT count(*)::int AS n FROM gone`
    })

    return {
      claim: (r: typeof ClaimRequest.Type) => sqlEdge(Effect.map(insert(r), Option.isSome)),
      find: (appKey: string, key: string) => sqlEdge(Effect.map(find({ app_key: appKey, key }), Option.map(toKept))),
      takeOver: (appKey: string, key: string, leaseSeconds: number) =>
        sqlEdge(Effect.map(takeOver({ app_key: appKey, key, lease_seconds: leaseSeconds }), Option.isSome)),
      complete: (r: typeof KeyRef.Type & { readonly status: number; readonly body: Uint8Array; readonly content_type: string }) =>
        sqlEdge(complete(r)),
      release: (appKey: string, key: string) => sqlEdge(release({ app_key: appKey, key })),
      /** Removes up to `limit` expired keys; the number removed. */
      prune: (limit: number) => sqlEdge(Effect.map(prune(limit), (rows) => rows[0]?.n ?? 0))
    } as const
  })
}) {
  static readonly layer = Layer.effect(IdempotencyRepo, IdempotencyRepo.make)
}
