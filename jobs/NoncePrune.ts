// Forgets request nonces past their retention window (DECISIONS §2), so the table stays small.
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { AppConfig } from "../src/Config.js"
import { ReplayRepo } from "../src/repos/ReplayRepo.js"
import { periodicJob } from "./Job.js"

export const pruneNoncesOnce = Effect.gen(function*() {
  const config = yield* AppConfig
  const replay = yield* ReplayRepo
  const now = yield* Clock.currentTimeMillis
  const removed = yield* replay.pruneNonces(now - config.nonceRetentionSeconds * 1000)
  if (removed > 0) yield* Effect.logInfo("pruned nonces").pipe(Effect.annotateLogs({ removed }))
  return removed
})

export const NoncePruneJob = Layer.unwrap(
  Effect.map(
    AppConfig,
    (config) => periodicJob({ name: "nonce-prune", every: Duration.seconds(config.noncePruneIntervalSeconds), run: pruneNoncesOnce })
  )
)
