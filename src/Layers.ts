// The layers both processes (API and job daemon) and the admin command line are built from;
// only the top of each entry point differs.
import { Layer } from "effect"
import { AuthenticatorLive } from "./auth/Authenticator.js"
import { SecretBoxLive } from "./auth/SecretBox.js"
import { AppConfigLive } from "./Config.js"
import { ClientsRepoLive } from "./repos/ClientsRepo.js"
import { CompaniesRepoLive } from "./repos/CompaniesRepo.js"
import { GuestsRepoLive } from "./repos/GuestsRepo.js"
import { ImageBlacklistRepoLive } from "./repos/ImageBlacklistRepo.js"
import { MatchmakersRepoLive } from "./repos/MatchmakersRepo.js"
import { OutboxRepoLive } from "./repos/OutboxRepo.js"
import { ReplayRepoLive } from "./repos/ReplayRepo.js"
import { UsersRepoLive } from "./repos/UsersRepo.js"
import { WorkGroupsRepoLive } from "./repos/WorkGroupsRepo.js"
import { WorkWechatsRepoLive } from "./repos/WorkWechatsRepo.js"
import { ClientsLive } from "./services/Clients.js"
import { CompaniesLive } from "./services/Companies.js"
import { GuestsLive } from "./services/Guests.js"
import { ImageBlacklistLive } from "./services/ImageBlacklist.js"
import { MatchmakersLive } from "./services/Matchmakers.js"
import { UsersLive } from "./services/Users.js"
import { WorkGroupsLive } from "./services/WorkGroups.js"
import { WorkWechatsLive } from "./services/WorkWechats.js"
import { SqlLive } from "./sql/Sql.js"

export const ReposLive = Layer.mergeAll(
  ClientsRepoLive,
  ReplayRepoLive,
  CompaniesRepoLive,
  MatchmakersRepoLive,
  GuestsRepoLive,
  WorkWechatsRepoLive,
  WorkGroupsRepoLive,
  UsersRepoLive,
  ImageBlacklistRepoLive,
  OutboxRepoLive
)

/** Services over the repositories; needs AppConfig and a SqlClient. */
export const ServicesLive = Layer.mergeAll(
  ClientsLive,
  AuthenticatorLive,
  GuestsLive,
  WorkWechatsLive,
  WorkGroupsLive,
  UsersLive,
  ImageBlacklistLive,
  MatchmakersLive.pipe(Layer.provideMerge(CompaniesLive))
).pipe(
  Layer.provideMerge(SecretBoxLive),
  Layer.provideMerge(ReposLive)
)

/** Everything over a migrated database, configured from the environment. */
export const AppLive = ServicesLive.pipe(Layer.provideMerge(SqlLive), Layer.provideMerge(AppConfigLive))
