// Creates the follow-up tasks that are due (DECISIONS §7): every plan day scheduled up to today (in
// the platform time zone) that has no task gets one, at least every 30 s by default. Safe with any
// number of daemons: plans are claimed with SKIP LOCKED and the (plan, day) key refuses a second task.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { AppConfig } from "../src/Config.js"
import { FollowUps } from "../src/services/FollowUps.js"
import { periodicJob } from "./Job.js"

export const generateFollowUpsOnce = Effect.gen(function*() {
  const followUps = yield* FollowUps
  const outcome = yield* followUps.generateDue
  if (outcome.created > 0) yield* Effect.logInfo("follow-up tasks created").pipe(Effect.annotateLogs(outcome))
  return outcome
})

export const FollowUpGenerateJob = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    periodicJob({
      name: "follow-up-generate",
      every: Duration.seconds(config.followUpGenerateIntervalSeconds),
      run: generateFollowUpsOnce
    }))
)
