// Folds the delta rows of the list counters (migration 0012) into one row per counter, so that a
// total stays a read of a few rows however many writes came before it.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { AppConfig } from "../src/Config.js"
import { RowCountsRepo } from "../src/repos/RowCountsRepo.js"
import { periodicJob } from "./Job.js"

export const compactRowCountsOnce = Effect.gen(function*() {
  const counts = yield* RowCountsRepo
  const folded = yield* counts.compact
  if (folded > 0) yield* Effect.logDebug("folded list counters").pipe(Effect.annotateLogs({ folded }))
  return folded
})

export const RowCountCompactJob = Layer.unwrap(
  Effect.map(
    AppConfig,
    (config) =>
      periodicJob({ name: "row-count-compact", every: Duration.millis(config.rowCountCompactSeconds * 1000), run: compactRowCountsOnce })
  )
)
