// An in-memory ReplayRepo: seen nonces, the nonce record's epoch and the token buckets, answering
// `admit` as admitSql's statements do (a replay inside the retention is refused, a lease is granted only for a
// fresh nonce, a new bucket starts full, refill at rps up to burst). Checked against the real one by
// test/contracts/replayRepo.contract.ts.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { type AdmitResult, ReplayRepo } from "../../src/repos/ReplayRepo.js"

export interface FakeReplayState {
  readonly nonces: Map<string, number>
  readonly buckets: Map<string, { tokens: number; updatedMs: number }>
  /** Since when the nonce record is complete (Unix seconds); null: emptied by a crash. */
  epochS: number | null
}

export const makeFakeReplayRepo = (state: FakeReplayState = { nonces: new Map(), buckets: new Map(), epochS: 0 }) =>
  Effect.sync(() => {
    const keyOf = (appKey: string, nonce: string) => `${appKey}\u0000${nonce}`
    return ReplayRepo.of({
      admit: (r) =>
        Effect.sync((): AdmitResult => {
          const epoch = state.epochS
          const key = keyOf(r.appKey, r.nonce)
          const seen = state.nonces.get(key)
          const fresh = epoch !== null && epoch <= r.signedS && (seen === undefined || seen < r.notBeforeMs)
          if (fresh) state.nonces.set(key, r.nowMs)
          if (!fresh || r.want <= 0) return { epoch_s: epoch, fresh, granted: null, tokens: null }
          const bucket = state.buckets.get(r.appKey)
          const refill = bucket === undefined
            ? r.burst
            : Math.min(r.burst, bucket.tokens + Math.max(0, r.nowMs - bucket.updatedMs) * r.rps / 1000)
          const granted = Math.min(r.want, bucket === undefined ? r.burst : Math.floor(refill))
          const tokens = refill - granted
          state.buckets.set(r.appKey, { tokens, updatedMs: Math.max(bucket?.updatedMs ?? r.nowMs, r.nowMs) })
          return { epoch_s: epoch, fresh, granted, tokens }
        }),
      restartEpoch: Effect.sync(() => {
        if (state.epochS === null) state.epochS = Math.floor(Date.now() / 1000)
      }),
      recordNonce: (appKey, nonce, nowMs, notBeforeMs) =>
        Effect.sync(() => {
          const key = keyOf(appKey, nonce)
          const seen = state.nonces.get(key)
          const fresh = state.epochS !== null && state.epochS <= Math.floor(nowMs / 1000) && (seen === undefined || seen < notBeforeMs)
          if (fresh) state.nonces.set(key, nowMs)
          return fresh
        }),
      resetBucket: (appKey) => Effect.sync(() => void state.buckets.delete(appKey))
    })
  })

export const FakeReplayRepo = Layer.effect(ReplayRepo, makeFakeReplayRepo())
