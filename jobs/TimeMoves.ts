// The daemon's time-driven moves (DECISIONS §5, §7): activities registering → ongoing → ended and
// memberships active → expired, each with its events (activity.updated, membership.expired), each one set-based
// statement that is safe to run from several daemons at once.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { AppConfig } from "../src/Config.js"
import { Activities } from "../src/services/Activities.js"
import { Memberships } from "../src/services/Memberships.js"
import { periodicJob } from "./Job.js"

/** One pass: every record whose time has passed moves; the counts moved. */
export const moveByTimeOnce = Effect.gen(function*() {
  const activities = yield* Activities
  const memberships = yield* Memberships
  const { ended, started } = yield* activities.moveByTime
  const expired = yield* memberships.expireDue
  if (started + ended + expired > 0) {
    yield* Effect.logInfo("moved by time").pipe(
      Effect.annotateLogs({ activities_started: started, activities_ended: ended, memberships_expired: expired })
    )
  }
  return { activitiesStarted: started, activitiesEnded: ended, membershipsExpired: expired }
})

export const TimeMovesJob = Layer.unwrap(
  Effect.map(
    AppConfig,
    (config) => periodicJob({ name: "time-moves", every: Duration.seconds(config.timeMovesIntervalSeconds), run: moveByTimeOnce })
  )
)
