// Per-app_key request state shared by every API instance: seen nonces and rate-limit buckets
// (unlogged tables, migration 0013). Nonces are partitioned by hour (migration 0025): the daemon
// drops a partition whole once the retention has passed it (jobs/Partitions.ts).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { sqlEdge } from "./sqlHelpers.js"
import { admitSql } from "./statements.js"

// The admit statement is admitSql (src/repos/statements.ts), shared with the benchmark floor.

export interface AdmitRequest {
  readonly appKey: string
  readonly nonce: string
  readonly nowMs: number
  readonly notBeforeMs: number
  readonly signedS: number
  readonly want: number
  readonly rps: number
  readonly burst: number
}

const AdmitRow = Schema.Struct({
  /** Since when the nonce record is complete; null right after a crash emptied it. */
  epoch_s: Schema.NullOr(Schema.Number),
  fresh: Schema.Boolean,
  /** Tokens leased (null: no lease asked or the nonce was not fresh). */
  granted: Schema.NullOr(Schema.Number),
  /** Tokens left in the shared bucket after the lease. */
  tokens: Schema.NullOr(Schema.Number)
})
export type AdmitResult = typeof AdmitRow.Type

export class ReplayRepo extends Context.Service<ReplayRepo>()("Auth/ReplayRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // One statement, so two instances racing on the same nonce cannot both accept it.
    // Every signed request runs it: the request is typed by the caller and goes out as parameters
    // as it is (no encoding to do), the one row is decoded and checked.
    const decodeAdmitRow = Schema.decodeUnknownEffect(AdmitRow)
    const admit = (r: AdmitRequest) =>
      Effect.flatMap(
        sql.unsafe(admitSql(r.nowMs, r.notBeforeMs), [r.appKey, r.nonce, r.nowMs, r.notBeforeMs, r.signedS, r.want, r.rps, r.burst]),
        (rows) => rows.length === 1 ? decodeAdmitRow(rows[0]) : Effect.die(new Error(`the admit statement returned ${rows.length} rows`))
      )

    // After a crash emptied the unlogged nonce record: requests signed before now may have been seen.
    const restartEpoch = SqlSchema.void({
      Request: Schema.Void,
      execute: () =>
        sql`INSERT INTO nonce_epoch (id, since_s) VALUES (1, floor(extract(epoch FROM now()))::bigint)
          ON CONFLICT (id) DO NOTHING`
    })

    const resetBucket = SqlSchema.void({
      Request: Schema.String,
      execute: (appKey) => sql`DELETE FROM rate_buckets WHERE app_key = ${appKey}`
    })

    return {
      /** Records the nonce and leases tokens (see admitSql). */
      admit: (request: AdmitRequest) => sqlEdge(admit(request)),
      /** Marks the nonce record complete from now on (after a crash emptied it). */
      restartEpoch: sqlEdge(restartEpoch(undefined)),
      /** Records the nonce alone; false when it was already seen after `notBeforeMs` (a replay). */
      recordNonce: (appKey: string, nonce: string, nowMs: number, notBeforeMs: number) =>
        sqlEdge(Effect.map(
          admit({ appKey, nonce, nowMs, notBeforeMs, signedS: Math.floor(nowMs / 1000), want: 0, rps: 0, burst: 0 }),
          (row) => row.fresh
        )),
      resetBucket: (appKey: string) => sqlEdge(resetBucket(appKey))
    } as const
  })
}) {
  static readonly layer = Layer.effect(ReplayRepo, ReplayRepo.make)
}
