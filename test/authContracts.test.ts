// The real client and replay repositories against PostgreSQL pass the contracts their fakes pass.
import * as Layer from "effect/Layer"

import { ClientsRepo } from "../src/repos/ClientsRepo.js"
import { ReplayRepo } from "../src/repos/ReplayRepo.js"
import { clientsRepoContract } from "./contracts/clientsRepo.contract.js"
import { replayRepoContract } from "./contracts/replayRepo.contract.js"
import { TestDatabaseLive } from "./support/harness.js"

clientsRepoContract("PostgreSQL", ClientsRepo.layer.pipe(Layer.provide(TestDatabaseLive)))
replayRepoContract("PostgreSQL", ReplayRepo.layer.pipe(Layer.provide(TestDatabaseLive)))
