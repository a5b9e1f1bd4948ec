// Guest-card tasks on the generic runner: claim with a lease, parse, create the guest.
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { AppConfig } from "../src/Config.js"
import { CARD_TASK_CHANNEL, CardTasksRepo } from "../src/repos/CardTasksRepo.js"
import { CardImport } from "../src/services/CardImport.js"
import { taskRunner } from "./TaskRunner.js"

export const CardTasksJob = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const repo = yield* CardTasksRepo
    const cards = yield* CardImport
    return taskRunner({
      name: "card-tasks",
      channel: CARD_TASK_CHANNEL,
      concurrency: config.cardTaskConcurrency,
      pollInterval: Duration.seconds(config.cardTaskPollSeconds),
      claim: (worker) => Effect.flatMap(Clock.currentTimeMillis, (now) => repo.claim(worker, now, config.cardTaskLeaseSeconds * 1000)),
      process: (task, worker) =>
        task.attempts > config.cardTaskMaxAttempts
          ? cards.finishIfHeld(task, worker, { status: "failed", error: `gave up after ${task.attempts - 1} attempts that did not finish` })
          : Effect.tap(cards.processTask(task, worker), (outcome) =>
            Effect.logInfo(`card task ${outcome}`).pipe(Effect.annotateLogs({ task_id: task.task_id, attempts: task.attempts }))),
      release: (task, worker) => repo.release(task.id, worker),
      // A slow parse on a busy machine must not outlive its lease, or another daemon would take
      // the task and ask the parser again: the lease is renewed a few times per lease while it runs.
      renew: {
        every: Duration.millis(config.cardTaskLeaseSeconds * 1000 / 3),
        run: (task, worker) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => repo.renew(task.id, worker, now + config.cardTaskLeaseSeconds * 1000))
      }
    })
  })
)
