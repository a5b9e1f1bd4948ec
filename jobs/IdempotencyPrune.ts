// Forgets Idempotency-Keys past their window (DECISIONS §11), a batch at a time, so the kept
// responses do not grow without bound.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { AppConfig } from "../src/Config.js"
import { Idempotency } from "../src/services/Idempotency.js"
import { periodicJob } from "./Job.js"

const BATCH = 5_000

export const pruneIdempotencyKeysOnce = Effect.gen(function*() {
  const idempotency = yield* Idempotency
  let removed = 0
  for (;;) {
    const n = yield* idempotency.prune(BATCH)
    removed += n
    if (n < BATCH) break
  }
  if (removed > 0) yield* Effect.logInfo("pruned idempotency keys").pipe(Effect.annotateLogs({ removed }))
  return removed
})

export const IdempotencyPruneJob = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    periodicJob({
      name: "idempotency-prune",
      every: Duration.seconds(config.idempotencyPruneIntervalSeconds),
      run: pruneIdempotencyKeysOnce
    }))
)
