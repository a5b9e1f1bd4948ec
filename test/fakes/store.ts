// Every in-memory repository fake and the fake Transaction over one fresh fake database: the
// store a service test provides instead of PostgreSQL. The fake database itself (FakeDb) is in
// the output too, so a test can seed rows no repository writes (companies, matchmakers, users)
// and read what the services stored.
import * as Layer from "effect/Layer"

import { FakeActivitiesRepo } from "./activitiesRepo.js"
import { FakeCardTasksRepo } from "./cardTasksRepo.js"
import { FakeChangeEvents } from "./changeEvents.js"
import { FakeDbLive, FakeTransaction } from "./db.js"
import { FakeFollowUpsRepo } from "./followUpsRepo.js"
import { FakeGuestsRepo } from "./guestsRepo.js"
import { FakeMembershipsRepo } from "./membershipsRepo.js"
import { FakeOutboxRepo } from "./outboxRepo.js"

export const FakeStore = Layer.mergeAll(
  FakeGuestsRepo,
  FakeOutboxRepo,
  FakeChangeEvents.pipe(Layer.provide(FakeOutboxRepo)),
  FakeFollowUpsRepo,
  FakeActivitiesRepo,
  FakeMembershipsRepo,
  FakeCardTasksRepo,
  FakeTransaction
).pipe(Layer.provideMerge(FakeDbLive))
