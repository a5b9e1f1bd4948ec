// The in-memory repositories and the fake Transaction pass the same contracts as the real ones
// (test/repoContracts.test.ts runs them against PostgreSQL). The fake's clock is set to a real
// instant, as PostgreSQL's now() would be.
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"

import { activitiesRepoContract } from "../contracts/activitiesRepo.contract.js"
import { cardTasksRepoContract } from "../contracts/cardTasksRepo.contract.js"
import { followUpsRepoContract } from "../contracts/followUpsRepo.contract.js"
import { guestsRepoContract } from "../contracts/guestsRepo.contract.js"
import { membershipsRepoContract } from "../contracts/membershipsRepo.contract.js"
import { outboxRepoContract } from "../contracts/outboxRepo.contract.js"
import { FakeContractSeed } from "../contracts/seed.js"
import { transactionContract } from "../contracts/transaction.contract.js"
import { FakeStore } from "./store.js"

const fake = FakeContractSeed.pipe(
  Layer.provideMerge(FakeStore),
  Layer.provideMerge(Layer.effectDiscard(TestClock.setTime(Date.UTC(2026, 10, 24, 4, 0, 0))))
)

guestsRepoContract("in-memory fake", fake)
outboxRepoContract("in-memory fake", fake)
transactionContract("in-memory fake", fake)
followUpsRepoContract("in-memory fake", fake)
cardTasksRepoContract("in-memory fake", fake)
activitiesRepoContract("in-memory fake", fake)
membershipsRepoContract("in-memory fake", fake)
