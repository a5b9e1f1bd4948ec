// The layers both processes (API and job daemon) and the admin command line are built from;
// only the top of each entry point differs. Each service declares its own dependencies
// (`Effect.Service` with `dependencies`), so this file only lists what the processes use: one line
// per service. Layers are memoised by reference, so a repository shared by services is built once.
import { Effect, Layer } from "effect"

import { Authenticator } from "./auth/Authenticator.js"
import { SecretBoxLive } from "./auth/SecretBox.js"
import { cardParserConfig, CardParserLive } from "./card/CardParser.js"
import { AppConfigLive } from "./Config.js"
import { CardTasksRepo } from "./repos/CardTasksRepo.js"
import { ClientsRepo } from "./repos/ClientsRepo.js"
import { CompaniesRepo } from "./repos/CompaniesRepo.js"
import { GuestsRepo } from "./repos/GuestsRepo.js"
import { ImageBlacklistRepo } from "./repos/ImageBlacklistRepo.js"
import { MatchmakersRepo } from "./repos/MatchmakersRepo.js"
import { OutboxRepo } from "./repos/OutboxRepo.js"
import { ReplayRepo } from "./repos/ReplayRepo.js"
import { Transaction } from "./repos/sqlHelpers.js"
import { UsersRepo } from "./repos/UsersRepo.js"
import { WorkGroupsRepo } from "./repos/WorkGroupsRepo.js"
import { WorkWechatsRepo } from "./repos/WorkWechatsRepo.js"
import { CardImport } from "./services/CardImport.js"
import { Clients } from "./services/Clients.js"
import { Companies } from "./services/Companies.js"
import { Guests } from "./services/Guests.js"
import { ImageBlacklist } from "./services/ImageBlacklist.js"
import { Matchmakers } from "./services/Matchmakers.js"
import { Users } from "./services/Users.js"
import { WorkGroups } from "./services/WorkGroups.js"
import { WorkWechats } from "./services/WorkWechats.js"
import { SqlLive } from "./sql/Sql.js"

/** The repositories, also offered to the jobs, the admin command line and tests directly. */
export const ReposLive = Layer.mergeAll(
  ClientsRepo.Default,
  ReplayRepo.Default,
  CompaniesRepo.Default,
  MatchmakersRepo.Default,
  GuestsRepo.Default,
  WorkWechatsRepo.Default,
  WorkGroupsRepo.Default,
  UsersRepo.Default,
  ImageBlacklistRepo.Default,
  CardTasksRepo.Default,
  OutboxRepo.Default,
  Transaction.Default
)

/** The service registry; needs AppConfig, a PgClient and a CardParser. */
export const ServicesLive = Layer.mergeAll(
  Authenticator.Default,
  Clients.Default,
  Companies.Default,
  Matchmakers.Default,
  Guests.Default,
  CardImport.Default,
  ImageBlacklist.Default,
  WorkWechats.Default,
  WorkGroups.Default,
  Users.Default
).pipe(
  Layer.provideMerge(ReposLive),
  Layer.provideMerge(SecretBoxLive)
)

/** The card parser configured from the environment (AI when ANTHROPIC_API_KEY is set, OCR). */
export const CardParserFromEnv = Layer.unwrapEffect(Effect.map(cardParserConfig, CardParserLive)).pipe(Layer.orDie)

/** Everything over a migrated database, configured from the environment. */
export const AppLive = ServicesLive.pipe(
  Layer.provide(CardParserFromEnv),
  Layer.provideMerge(SqlLive),
  Layer.provideMerge(AppConfigLive)
)
