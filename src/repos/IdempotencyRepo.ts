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

    /** For the rest of the transaction, lock waits end after `ms` (0: never); the setting it replaces. */
    const lockTimeout = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ previous: Schema.String }),
      execute: (value) =>
        sql`WITH before AS (SELECT current_setting('lock_timeout') AS previous)
          SELECT previous, set_config('lock_timeout', ${value}, true) AS applied FROM before`
    })

    /** Claims the key (or one whose window has passed): true when this attempt runs. */
    const insert = SqlSchema.findOne({
      Request: ClaimRequest,
      Result: Schema.Struct({ claimed: Schema.Boolean }),
      execute: (r) => sql`SELECT idempotency_claim(${r.app_key}, ${r.key}, ${r.fingerprint}, ${r.ttl_seconds}) AS claimed`
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
     * The transaction's own lock timeout is back in force once the claim is decided.
     */
    const claim = (r: typeof ClaimRequest.Type, waitSeconds: number) =>
      sqlEdge(Effect.gen(function*() {
        const { previous } = yield* lockTimeout(`${Math.max(1, Math.round(waitSeconds * 1000))}ms`)
        const claimed = yield* Effect.catchIf(
          Effect.map(insert(r), (row) => row.claimed),
          isLockTimeout,
          () => Effect.fail(new KeyStillHeld({ waitedSeconds: waitSeconds }))
        )
        yield* lockTimeout(previous)
        return claimed
      }))

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
