// Every job of the daemon; adding a job is adding its layer here.
import * as Layer from "effect/Layer"

import { CardTasksJob } from "./CardTasks.js"
import { FollowUpGenerateJob } from "./FollowUpGenerate.js"
import { PartitionsJob } from "./Partitions.js"
import { RowCountCompactJob } from "./RowCountCompact.js"
import { TimeMovesJob } from "./TimeMoves.js"
import { WebhookJobsLive } from "./Webhooks.js"

export const JobsLive = Layer.mergeAll(
  RowCountCompactJob,
  CardTasksJob,
  TimeMovesJob,
  FollowUpGenerateJob,
  WebhookJobsLive,
  PartitionsJob
)
