// The in-memory client and replay repositories pass the same contracts as the real ones.
import { clientsRepoContract } from "../contracts/clientsRepo.contract.js"
import { replayRepoContract } from "../contracts/replayRepo.contract.js"
import { FakeClientsRepo } from "./clientsRepo.js"
import { FakeReplayRepo } from "./replayRepo.js"

clientsRepoContract("in-memory fake", FakeClientsRepo)
replayRepoContract("in-memory fake", FakeReplayRepo)
