// Every job of the daemon; adding a job is adding its layer here.
import { Layer } from "effect"

import { CardTasksJob } from "./CardTasks.js"
import { NoncePruneJob } from "./NoncePrune.js"

export const JobsLive = Layer.mergeAll(NoncePruneJob, CardTasksJob)
