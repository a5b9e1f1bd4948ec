// Per-app_key request state shared by every API instance: seen nonces and rate-limit buckets.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"

export interface BucketResult {
  readonly allowed: boolean
  /** Tokens left after this request. */
  readonly tokens: number
}

export const makeReplayRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /**
   * Records the nonce; false when it was already seen after `notBeforeMs` (a replay). One
   * statement, so two instances racing on the same nonce cannot both accept it.
   */
  const recordNonce = (appKey: string, nonce: string, nowMs: number, notBeforeMs: number) =>
    Effect.map(
      sql<{ fresh: boolean }>`WITH n AS (
          INSERT INTO request_nonces (app_key, nonce, seen_ms) VALUES (${appKey}, ${nonce}, ${nowMs})
          ON CONFLICT (app_key, nonce) DO UPDATE SET seen_ms = EXCLUDED.seen_ms
            WHERE request_nonces.seen_ms < ${notBeforeMs}
          RETURNING 1)
        SELECT EXISTS (SELECT 1 FROM n) AS fresh`,
      (rows) => rows[0]?.fresh === true
    )

  const takeExisting = (appKey: string, nowMs: number, rps: number, burst: number) =>
    sql<BucketResult>`WITH cur AS (
        SELECT LEAST(${burst}::float8, tokens + GREATEST(0, ${nowMs}::bigint - updated_ms) * ${rps}::float8 / 1000.0) AS refill
        FROM rate_buckets WHERE app_key = ${appKey} FOR UPDATE),
      upd AS (
        UPDATE rate_buckets b
        SET tokens = CASE WHEN cur.refill >= 1 THEN cur.refill - 1 ELSE cur.refill END,
            updated_ms = GREATEST(b.updated_ms, ${nowMs}::bigint)
        FROM cur WHERE b.app_key = ${appKey}
        RETURNING cur.refill >= 1 AS allowed, b.tokens AS tokens)
      SELECT allowed, tokens FROM upd`

  /** Token bucket per app_key: `rps` refill per second up to `burst`; takes one token if it can. */
  const takeToken = (appKey: string, nowMs: number, rps: number, burst: number) =>
    Effect.gen(function*() {
      const first = yield* takeExisting(appKey, nowMs, rps, burst)
      if (first[0] !== undefined) return first[0]
      yield* sql`INSERT INTO rate_buckets (app_key, tokens, updated_ms) VALUES (${appKey}, ${burst}, ${nowMs})
        ON CONFLICT (app_key) DO NOTHING`
      const second = yield* takeExisting(appKey, nowMs, rps, burst)
      return second[0] ?? { allowed: true, tokens: burst - 1 }
    })

  /** Forgets nonces older than `beforeMs`; returns how many. */
  const pruneNonces = (beforeMs: number) =>
    Effect.map(
      sql<{ n: number }>`WITH d AS (DELETE FROM request_nonces WHERE seen_ms < ${beforeMs} RETURNING 1)
        SELECT count(*)::int AS n FROM d`,
      (rows) => rows[0]?.n ?? 0
    )

  const resetBucket = (appKey: string) => sql`DELETE FROM rate_buckets WHERE app_key = ${appKey}`

  return { recordNonce, takeToken, pruneNonces, resetBucket } as const
})

export class ReplayRepo extends Context.Tag("Auth/ReplayRepo")<ReplayRepo, Effect.Effect.Success<typeof makeReplayRepo>>() {}
export const ReplayRepoLive = Layer.effect(ReplayRepo, makeReplayRepo)
