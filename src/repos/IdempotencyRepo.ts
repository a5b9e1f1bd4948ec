// Idempotency keys (DECISIONS §11): the only SQL over `idempotency_keys`. The claim
// (idempotency_claim, migration 0025) is made in the transaction of the endpoint's writes and
// kept with its answer at commit: it takes a transaction-level advisory lock on the key, so a
// repeat's claim waits until the first attempt commits (then the answer is there) or rolls back
// (then the key is free), and then looks for the key in every partition of the table (it is
// partitioned by `expires_at`, so no unique constraint can span the partitions). Answers are
// stored sealed (the service seals and opens them); `response_body` holds only answers kept in
// plain bytes before migration 0020, until they expire or `keys rotate` seals them.
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"
import * as SqlSchema from "effect/sql/SqlSchema"

import { Bytes } from "./rows.js"
import { sqlEdge } from "./sqlHelpers.js"

/** The key's row stayed locked by a running first attempt for as long as the claim would wait. */
export class KeyStillHeld extends Data.TaggedError("KeyStillHeld")<{ readonly waitedSeconds: number }> {}

const KeyRef = Schema.Struct({ app_key: Schema.String, key: Schema.String })

const ClaimRequest = Schema.Struct({
  app_key: Schema.String,
  key: Schema.String,
  fingerprint: Schema.String,
  ttl_seconds: Schema.Number
})

const KeptRow = Schema.Struct({
  fingerprint: Schema.String,
  response_status: Schema.Int,
  response_sealed: Schema.NullOr(Schema.String),
  response_body: Schema.NullOr(Bytes),
  response_type: Schema.String
})

/** A kept answer as stored: its body sealed, or (kept before sealing) in plain bytes. */
export interface StoredAnswer {
  readonly fingerprint: string
  readonly status: number
  readonly body: { readonly _tag: "Sealed"; readonly sealed: string } | { readonly _tag: "Plain"; readonly bytes: Uint8Array }
  readonly contentType: string
}

const toStored = (row: typeof KeptRow.Type): StoredAnswer => ({
  fingerprint: row.fingerprint,
  status: row.response_status,
  body: row.response_sealed !== null
    ? { _tag: "Sealed", sealed: row.response_sealed }
    : { _tag: "Plain", bytes: row.response_body ?? new Uint8Array(0) },
  contentType: row.response_type
})

const isLockTimeout = (error: unknown): boolean => SqlError.isSqlError(error) && error.reason._tag === "LockTimeoutError"

export class IdempotencyRepo extends Context.Service<IdempotencyRepo>()("Idempotency/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Claims the key (or one whose window has passed) in one statement, its lock wait bounded:
     * `bound` sets lock_timeout to `wait` for the transaction and keeps the setting it replaces;
     * `c` calls idempotency_claim() (migration 0025: the key's advisory lock, then a look in every
     * partition) over `bound`'s row, so the setting is in force before the claim can wait on the
     * key; the answer's projection, made once `c` is done (a CTE with a volatile call is evaluated
     * whole before it is read), puts the replaced setting back for the rest of the transaction.
     * `claimed`: this attempt runs.
     */
    const insert = SqlSchema.findOne({
      Request: Schema.Struct({ ...ClaimRequest.fields, wait: Schema.String }),
      Result: Schema.Struct({ claimed: Schema.Boolean }),
      execute: (r) =>
        sql`WITH before AS (SELECT current_setting('lock_timeout') AS previous),
          bound AS (SELECT previous, set_config('lock_timeout', ${r.wait}, true) AS applied FROM before),
          c AS (SELECT idempotency_claim(${r.app_key}::text, ${r.key}::text, ${r.fingerprint}::text, ${r.ttl_seconds}::float8) AS claimed FROM bound)
          SELECT c.claimed, set_config('lock_timeout', bound.previous, true) AS restored
          FROM c, bound`
    })

    const find = SqlSchema.findOneOption({
      Request: KeyRef,
      Result: KeptRow,
      execute: (r) =>
        sql`SELECT fingerprint, response_status, response_sealed, response_body, response_type FROM idempotency_keys
          WHERE app_key = ${r.app_key} AND key = ${r.key} AND expires_at > now() AND response_status IS NOT NULL`
    })

    const complete = SqlSchema.void({
      Request: Schema.Struct({
        app_key: Schema.String,
        key: Schema.String,
        status: Schema.Int,
        sealed: Schema.String,
        content_type: Schema.String
      }),
      execute: (r) =>
        sql`UPDATE idempotency_keys SET response_status = ${r.status}, response_sealed = ${r.sealed}, response_type = ${r.content_type}
          WHERE app_key = ${r.app_key} AND key = ${r.key} AND expires_at > now()`
    })

    const release = SqlSchema.void({
      Request: KeyRef,
      execute: (r) => sql`DELETE FROM idempotency_keys WHERE app_key = ${r.app_key} AND key = ${r.key}`
    })

    /**
     * Inside a transaction: claims the key, waiting at most `waitSeconds` for a first attempt that
     * holds it uncommitted (KeyStillHeld after that). False: the key is kept by a committed attempt.
     * The transaction's own lock timeout is back in force once the claim is decided. One round trip.
     */
    const claim = (r: typeof ClaimRequest.Type, waitSeconds: number) =>
      sqlEdge(Effect.catchIf(
        Effect.map(insert({ ...r, wait: `${Math.max(1, Math.round(waitSeconds * 1000))}ms` }), (row) => row.claimed),
        isLockTimeout,
        () => Effect.fail(new KeyStillHeld({ waitedSeconds: waitSeconds }))
      ))

    return {
      claim,
      find: (appKey: string, key: string) => sqlEdge(Effect.map(find({ app_key: appKey, key }), Option.map(toStored))),
      /** Keeps the answer, its body sealed by the caller. */
      complete: (r: typeof KeyRef.Type & { readonly status: number; readonly sealed: string; readonly content_type: string }) =>
        sqlEdge(complete(r)),
      /** Inside the claiming transaction: frees the key while the endpoint's writes commit. */
      release: (appKey: string, key: string) => sqlEdge(release({ app_key: appKey, key }))
    } as const
  })
}) {
  static readonly layer = Layer.effect(IdempotencyRepo, IdempotencyRepo.make)
}
