// What the authenticator relies on from ReplayRepo (DECISIONS §2 nonces, §10 rate buckets), run
// against the real repository (integration) and its in-memory fake (unit).
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"

import { type AdmitRequest, ReplayRepo } from "../../src/repos/ReplayRepo.js"

let seq = 0
const appKey = () => `ak_replay_${process.pid}_${Date.now().toString(36)}_${seq++}`
const NOW = 1_800_000_000_000
const RETENTION = 900_000

const request = (over: Partial<AdmitRequest> & { appKey: string }): AdmitRequest => ({
  nonce: "nonce-0000000000000001",
  nowMs: NOW,
  notBeforeMs: NOW - RETENTION,
  signedS: NOW / 1000,
  want: 0,
  rps: 10,
  burst: 20,
  ...over
})

export const replayRepoContract = (name: string, repo: Layer.Layer<ReplayRepo>) =>
  layer(repo)(`ReplayRepo contract (${name})`, (it) => {
    it.effect("a nonce is fresh once; the same nonce within the retention is a replay, for that app_key only", () =>
      Effect.gen(function*() {
        const replay = yield* ReplayRepo
        const key = appKey()
        expect((yield* replay.admit(request({ appKey: key }))).fresh).toBe(true)
        expect((yield* replay.admit(request({ appKey: key, nowMs: NOW + 1 }))).fresh).toBe(false)
        expect((yield* replay.admit(request({ appKey: appKey() }))).fresh).toBe(true)
      }))

    it.effect("a nonce older than the retention may be used again", () =>
      Effect.gen(function*() {
        const replay = yield* ReplayRepo
        const key = appKey()
        expect((yield* replay.admit(request({ appKey: key, nowMs: NOW - RETENTION - 1 }))).fresh).toBe(true)
        expect((yield* replay.admit(request({ appKey: key }))).fresh).toBe(true)
      }))

    it.effect("without a lease asked, nothing is granted and the answer names the nonce record's epoch", () =>
      Effect.gen(function*() {
        const replay = yield* ReplayRepo
        const answer = yield* replay.admit(request({ appKey: appKey() }))
        expect(answer).toMatchObject({ fresh: true, granted: null, tokens: null })
        expect(answer.epoch_s).not.toBeNull()
      }))

    it.effect("a first lease takes from a full bucket; leases drain it to the last whole token, then grant nothing", () =>
      Effect.gen(function*() {
        const replay = yield* ReplayRepo
        const key = appKey()
        const lease = (i: number, want: number) => replay.admit(request({ appKey: key, nonce: `nonce-lease-${i}-000000000`, want }))
        expect(yield* lease(1, 8)).toMatchObject({ fresh: true, granted: 8, tokens: 12 })
        expect(yield* lease(2, 8)).toMatchObject({ granted: 8, tokens: 4 })
        expect(yield* lease(3, 8)).toMatchObject({ granted: 4, tokens: 0 })
        expect(yield* lease(4, 8)).toMatchObject({ fresh: true, granted: 0, tokens: 0 })
      }))

    it.effect("the bucket refills at rps per second up to the burst", () =>
      Effect.gen(function*() {
        const replay = yield* ReplayRepo
        const key = appKey()
        const lease = (i: number, nowMs: number, want: number) =>
          replay.admit(request({ appKey: key, nonce: `nonce-refill-${i}-00000000`, nowMs, want }))
        expect(yield* lease(1, NOW, 20)).toMatchObject({ granted: 20, tokens: 0 })
        // 0.5 s at 10/s: 5 tokens.
        expect(yield* lease(2, NOW + 500, 20)).toMatchObject({ granted: 5, tokens: 0 })
        // An hour later the bucket holds the burst, not more.
        expect(yield* lease(3, NOW + 3_600_000, 100)).toMatchObject({ granted: 20, tokens: 0 })
      }))

    it.effect("a replayed nonce leases nothing", () =>
      Effect.gen(function*() {
        const replay = yield* ReplayRepo
        const key = appKey()
        yield* replay.admit(request({ appKey: key, want: 1 }))
        expect(yield* replay.admit(request({ appKey: key, want: 5 }))).toMatchObject({ fresh: false, granted: null })
        expect(yield* replay.admit(request({ appKey: key, nonce: "nonce-after-replay-0001", want: 19 }))).toMatchObject({
          granted: 19,
          tokens: 0
        })
      }))

    it.effect("a reset bucket starts full again", () =>
      Effect.gen(function*() {
        const replay = yield* ReplayRepo
        const key = appKey()
        yield* replay.admit(request({ appKey: key, want: 20 }))
        yield* replay.resetBucket(key)
        expect(yield* replay.admit(request({ appKey: key, nonce: "nonce-after-reset-00001", want: 3 }))).toMatchObject({
          granted: 3,
          tokens: 17
        })
      }))

    it.effect("a request signed before the nonce record's epoch is not admitted", () =>
      Effect.gen(function*() {
        const replay = yield* ReplayRepo
        const answer = yield* replay.admit(request({ appKey: appKey(), signedS: -1 }))
        expect(answer.fresh).toBe(false)
        expect(answer.epoch_s).toBeGreaterThan(-1)
      }))

    it.effect("recording a nonce alone refuses it within the retention, not past it; restarting an intact epoch changes nothing", () =>
      Effect.gen(function*() {
        const replay = yield* ReplayRepo
        const key = appKey()
        expect(yield* replay.recordNonce(key, "nonce-alone-0000000001", NOW - 10 * RETENTION, NOW - 11 * RETENTION)).toBe(true)
        expect(yield* replay.recordNonce(key, "nonce-alone-0000000002", NOW, NOW - RETENTION)).toBe(true)
        expect(yield* replay.recordNonce(key, "nonce-alone-0000000001", NOW, NOW - RETENTION)).toBe(true)
        expect(yield* replay.recordNonce(key, "nonce-alone-0000000002", NOW + 1, NOW - RETENTION)).toBe(false)
        const before = (yield* replay.admit(request({ appKey: key, nonce: "nonce-epoch-0000000001" }))).epoch_s
        yield* replay.restartEpoch
        expect((yield* replay.admit(request({ appKey: key, nonce: "nonce-epoch-0000000002" }))).epoch_s).toBe(before)
      }))
  })
