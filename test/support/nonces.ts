// A sighting of a nonce as the admission statement takes it (ReplayRepo.admit), for the tests of
// nonces across hour partitions (test/keyPartitions.test.ts, test/keyRetention.test.ts): signed
// at `nowMs`, refused when seen within `retentionMs` before, no tokens asked.
import type { ReplayRepo } from "../../src/repos/ReplayRepo.js"

type AdmitRequest = Parameters<ReplayRepo["Service"]["admit"]>[0]

export const sighting = (appKey: string, nonce: string, nowMs: number, retentionMs: number): AdmitRequest => ({
  appKey,
  nonce,
  nowMs,
  notBeforeMs: nowMs - retentionMs,
  signedS: Math.floor(nowMs / 1000),
  want: 0,
  rps: 1,
  burst: 1
})
