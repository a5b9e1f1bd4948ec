// Per-app_key request state shared by every API instance: seen nonces and rate-limit buckets.
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

import { CountRow } from "./rows.js"
import { sqlEdge } from "./sqlHelpers.js"

/** The answer of a token bucket: whether this request may pass, and the tokens left after it. */
const BucketRow = Schema.Struct({ allowed: Schema.Boolean, tokens: Schema.Number })
export type BucketResult = typeof BucketRow.Type

const Bucket = Schema.Struct({ appKey: Schema.String, nowMs: Schema.Number, rps: Schema.Number, burst: Schema.Number })

export class ReplayRepo extends Effect.Service<ReplayRepo>()("Auth/ReplayRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // One statement, so two instances racing on the same nonce cannot both accept it.
    const recordNonce = SqlSchema.single({
      Request: Schema.Struct({ appKey: Schema.String, nonce: Schema.String, nowMs: Schema.Number, notBeforeMs: Schema.Number }),
      Result: Schema.Struct({ fresh: Schema.Boolean }),
      execute: ({ appKey, nonce, notBeforeMs, nowMs }) =>
        sql`WITH n AS (
            INSERT INTO request_nonces (app_key, nonce, seen_ms) VALUES (${appKey}, ${nonce}, ${nowMs})
            ON CONFLICT (app_key, nonce) DO UPDATE SET seen_ms = EXCLUDED.seen_ms
              WHERE request_nonces.seen_ms < ${notBeforeMs}
            RETURNING 1)
          SELECT EXISTS (SELECT 1 FROM n) AS fresh`
    })

    const takeExisting = SqlSchema.findOne({
      Request: Bucket,
      Result: BucketRow,
      execute: ({ appKey, burst, nowMs, rps }) =>
        sql`WITH cur AS (
            SELECT LEAST(${burst}::float8, tokens + GREATEST(0, ${nowMs}::bigint - updated_ms) * ${rps}::float8 / 1000.0) AS refill
            FROM rate_buckets WHERE app_key = ${appKey} FOR UPDATE),
          upd AS (
            UPDATE rate_buckets b
            SET tokens = CASE WHEN cur.refill >= 1 THEN cur.refill - 1 ELSE cur.refill END,
                updated_ms = GREATEST(b.updated_ms, ${nowMs}::bigint)
            FROM cur WHERE b.app_key = ${appKey}
            RETURNING cur.refill >= 1 AS allowed, b.tokens AS tokens)
          SELECT allowed, tokens FROM upd`
    })

    const createBucket = SqlSchema.void({
      Request: Bucket,
      execute: ({ appKey, burst, nowMs }) =>
        sql`INSERT INTO rate_buckets (app_key, tokens, updated_ms) VALUES (${appKey}, ${burst}, ${nowMs})
          ON CONFLICT (app_key) DO NOTHING`
    })

    const pruneNonces = SqlSchema.single({
      Request: Schema.Number,
      Result: CountRow,
      execute: (beforeMs) =>
        sql`WITH d AS (DELETE FROM request_nonces WHERE seen_ms < ${beforeMs} RETURNING 1)
          SELECT count(*)::int AS n FROM d`
    })

    const resetBucket = SqlSchema.void({
      Request: Schema.String,
      execute: (appKey) => sql`DELETE FROM rate_buckets WHERE app_key = ${appKey}`
    })

    /** Token bucket per app_key: `rps` refill per second up to `burst`; takes one token if it can. */
    const takeToken = (appKey: string, nowMs: number, rps: number, burst: number) => {
      const bucket = { appKey, nowMs, rps, burst }
      return sqlEdge(Effect.gen(function*() {
        const first = yield* takeExisting(bucket)
        if (first._tag === "Some") return first.value
        // A first request of this app_key (or one after a reset): create the bucket full, take again.
        yield* createBucket(bucket)
        const second = yield* takeExisting(bucket)
        return second._tag === "Some" ? second.value : { allowed: true, tokens: burst - 1 }
      }))
    }

    return {
      /** Records the nonce; false when it was already seen after `notBeforeMs` (a replay). */
      recordNonce: (appKey: string, nonce: string, nowMs: number, notBeforeMs: number) =>
        sqlEdge(Effect.map(recordNonce({ appKey, nonce, nowMs, notBeforeMs }), (row) => row.fresh)),
      takeToken,
      /** Forgets nonces older than `beforeMs`; returns how many. */
      pruneNonces: (beforeMs: number) => sqlEdge(Effect.map(pruneNonces(beforeMs), (row) => row.n)),
      resetBucket: (appKey: string) => sqlEdge(resetBucket(appKey))
    } as const
  })
}) {}
