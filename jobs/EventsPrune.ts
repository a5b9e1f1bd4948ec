// Keeps the outbox bounded (DECISIONS §9): events older than the retention (30 days) whose
// deliveries are all finished are removed, their deliveries and attempts with them.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { AppConfig } from "../src/Config.js"
import { EventsRepo } from "../src/repos/EventsRepo.js"
import { periodicJob } from "./Job.js"

const BATCH = 5000

/** Removes every prunable event, a batch per statement (short locks); how many. */
export const pruneEventsOnce = Effect.gen(function*() {
  const config = yield* AppConfig
  const events = yield* EventsRepo
  let removed = 0
  for (;;) {
    const n = yield* events.prune(config.eventsRetentionDays, BATCH)
    removed += n
    if (n < BATCH) break
  }
  if (removed > 0) yield* Effect.logInfo("pruned events").pipe(Effect.annotateLogs({ removed }))
  return removed
})

export const EventsPruneJob = Layer.unwrap(
  Effect.map(
    AppConfig,
    (config) => periodicJob({ name: "events-prune", every: Duration.seconds(config.eventsPruneIntervalSeconds), run: pruneEventsOnce })
  )
)
