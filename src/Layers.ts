// The layers both processes (API and job daemon) and the admin command line are built from;
// only the top of each entry point differs.
import { Effect, Layer } from "effect"
import { CardParserLive, cardParserConfig } from "./card/CardParser.js"
import { AuthenticatorLive } from "./auth/Authenticator.js"
import { SecretBoxLive } from "./auth/SecretBox.js"
import { AppConfigLive } from "./Config.js"
import { ClientsRepoLive } from "./repos/ClientsRepo.js"
import { CompaniesRepo } from "./repos/CompaniesRepo.js"
import { CardTasksRepoLive } from "./repos/CardTasksRepo.js"
import { GuestsRepoLive } from "./repos/GuestsRepo.js"
import { ImageBlacklistRepoLive } from "./repos/ImageBlacklistRepo.js"
import { MatchmakersRepoLive } from "./repos/MatchmakersRepo.js"
import { OutboxRepoLive } from "./repos/OutboxRepo.js"
import { ReplayRepoLive } from "./repos/ReplayRepo.js"
import { UsersRepoLive } from "./repos/UsersRepo.js"
import { WorkGroupsRepoLive } from "./repos/WorkGroupsRepo.js"
import { WorkWechatsRepoLive } from "./repos/WorkWechatsRepo.js"
import { ClientsLive } from "./services/Clients.js"
import { Companies } from "./services/Companies.js"
import { CardImportLive } from "./services/CardImport.js"
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
  CompaniesRepo.Default,
  MatchmakersRepoLive,
  GuestsRepoLive,
  WorkWechatsRepoLive,
  WorkGroupsRepoLive,
  UsersRepoLive,
  ImageBlacklistRepoLive,
  CardTasksRepoLive,
  OutboxRepoLive
)

/** Services over the repositories; needs AppConfig, a PgClient and a CardParser. */
export const ServicesLive = Layer.mergeAll(
  ClientsLive,
  AuthenticatorLive,
  CardImportLive.pipe(Layer.provideMerge(Layer.mergeAll(GuestsLive, ImageBlacklistLive))),
  WorkWechatsLive,
  WorkGroupsLive,
  UsersLive,
  MatchmakersLive.pipe(Layer.provideMerge(Companies.Default))
).pipe(
  Layer.provideMerge(SecretBoxLive),
  Layer.provideMerge(ReposLive)
)

/** The card parser configured from the environment (AI when ANTHROPIC_API_KEY is set, OCR). */
export const CardParserFromEnv = Layer.unwrapEffect(Effect.map(cardParserConfig, CardParserLive)).pipe(Layer.orDie)

/** Everything over a migrated database, configured from the environment. */
export const AppLive = ServicesLive.pipe(
  Layer.provide(CardParserFromEnv),
  Layer.provideMerge(SqlLive),
  Layer.provideMerge(AppConfigLive)
)
