// The real repositories and Transaction against PostgreSQL pass the contracts their in-memory
// fakes pass (test/fakes/repoContracts.test.ts): each suite over its own copy of the database.
import * as Layer from "effect/Layer"

import { ActivitiesRepo } from "../src/repos/ActivitiesRepo.js"
import { CardTasksRepo } from "../src/repos/CardTasksRepo.js"
import { FollowUpsRepo } from "../src/repos/FollowUpsRepo.js"
import { GuestsRepo } from "../src/repos/GuestsRepo.js"
import { MembershipsRepo } from "../src/repos/MembershipsRepo.js"
import { OutboxRepo } from "../src/repos/OutboxRepo.js"
import { Transaction } from "../src/repos/sqlHelpers.js"
import { activitiesRepoContract } from "./contracts/activitiesRepo.contract.js"
import { cardTasksRepoContract } from "./contracts/cardTasksRepo.contract.js"
import { followUpsRepoContract } from "./contracts/followUpsRepo.contract.js"
import { guestsRepoContract } from "./contracts/guestsRepo.contract.js"
import { membershipsRepoContract } from "./contracts/membershipsRepo.contract.js"
import { outboxRepoContract } from "./contracts/outboxRepo.contract.js"
import { SqlContractSeed } from "./contracts/seed.js"
import { transactionContract } from "./contracts/transaction.contract.js"
import { TestDatabaseLive } from "./support/harness.js"

const real = Layer.mergeAll(
  GuestsRepo.layer,
  OutboxRepo.layer,
  FollowUpsRepo.layer,
  ActivitiesRepo.layer,
  MembershipsRepo.layer,
  CardTasksRepo.layer,
  Transaction.layer,
  SqlContractSeed
).pipe(Layer.provideMerge(TestDatabaseLive))

guestsRepoContract("PostgreSQL", real)
outboxRepoContract("PostgreSQL", real)
transactionContract("PostgreSQL", real)
followUpsRepoContract("PostgreSQL", real)
cardTasksRepoContract("PostgreSQL", real)
activitiesRepoContract("PostgreSQL", real)
membershipsRepoContract("PostgreSQL", real)
