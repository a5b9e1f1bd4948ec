// The layers both processes (API and job daemon) and the admin command line are built from;
// only the top of each entry point differs. Each service declares its own dependencies
// (its `layer` provides them), so this file only lists what the processes use: one line
// per service. Layers are memoised by reference, so a repository shared by services is built once.
import * as NodeDns from "@effect/platform-node/NodeDns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { Authenticator } from "./auth/Authenticator.js"
import { ClientCache } from "./auth/ClientCache.js"
import { Masker } from "./auth/Masker.js"
import { SecretBoxLive } from "./auth/SecretBox.js"
import { Signer } from "./auth/Signer.js"
import { cardParserConfig, CardParserLive } from "./card/CardParser.js"
import { AppConfigLive } from "./Config.js"
import { ActivitiesRepo } from "./repos/ActivitiesRepo.js"
import { CardTasksRepo } from "./repos/CardTasksRepo.js"
import { ClientsRepo } from "./repos/ClientsRepo.js"
import { CompaniesRepo } from "./repos/CompaniesRepo.js"
import { EventsRepo } from "./repos/EventsRepo.js"
import { FollowUpsRepo } from "./repos/FollowUpsRepo.js"
import { GuestsRepo } from "./repos/GuestsRepo.js"
import { ImageBlacklistRepo } from "./repos/ImageBlacklistRepo.js"
import { MatchesRepo } from "./repos/MatchesRepo.js"
import { MatchmakersRepo } from "./repos/MatchmakersRepo.js"
import { MembershipsRepo } from "./repos/MembershipsRepo.js"
import { OutboxRepo } from "./repos/OutboxRepo.js"
import { ReplayRepo } from "./repos/ReplayRepo.js"
import { RowCountsRepo } from "./repos/RowCountsRepo.js"
import { Transaction } from "./repos/sqlHelpers.js"
import { UsersRepo } from "./repos/UsersRepo.js"
import { WebhooksRepo } from "./repos/WebhooksRepo.js"
import { WorkGroupsRepo } from "./repos/WorkGroupsRepo.js"
import { WorkWechatsRepo } from "./repos/WorkWechatsRepo.js"
import { Activities } from "./services/Activities.js"
import { CardImport } from "./services/CardImport.js"
import { Clients } from "./services/Clients.js"
import { Companies } from "./services/Companies.js"
import { Events } from "./services/Events.js"
import { FollowUps } from "./services/FollowUps.js"
import { Guests } from "./services/Guests.js"
import { Idempotency } from "./services/Idempotency.js"
import { ImageBlacklist } from "./services/ImageBlacklist.js"
import { Matches } from "./services/Matches.js"
import { Matchmakers } from "./services/Matchmakers.js"
import { Memberships } from "./services/Memberships.js"
import { SealedSecrets } from "./services/SealedSecrets.js"
import { Users } from "./services/Users.js"
import { Webhooks } from "./services/Webhooks.js"
import { WorkGroups } from "./services/WorkGroups.js"
import { WorkWechats } from "./services/WorkWechats.js"
import { SqlLive } from "./sql/Sql.js"
import { AdmittedNetworksNotice } from "./webhooks/destinations.js"

/** The repositories, also offered to the jobs, the admin command line and tests directly. */
export const ReposLive = Layer.mergeAll(
  ClientsRepo.layer,
  ReplayRepo.layer,
  RowCountsRepo.layer,
  CompaniesRepo.layer,
  MatchmakersRepo.layer,
  GuestsRepo.layer,
  WorkWechatsRepo.layer,
  WorkGroupsRepo.layer,
  UsersRepo.layer,
  ImageBlacklistRepo.layer,
  CardTasksRepo.layer,
  OutboxRepo.layer,
  WebhooksRepo.layer,
  EventsRepo.layer,
  FollowUpsRepo.layer,
  ActivitiesRepo.layer,
  MatchesRepo.layer,
  MembershipsRepo.layer,
  Transaction.layer
)

/** The service registry; needs AppConfig, a PgClient, a CardParser and a resolver (`Dns`: webhook destinations). */
export const ServicesLive = Layer.mergeAll(
  Signer.layer,
  Masker.layer,
  ClientCache.layer,
  Authenticator.layer,
  Clients.layer,
  Companies.layer,
  FollowUps.layer,
  Matchmakers.layer,
  Guests.layer,
  CardImport.layer,
  ImageBlacklist.layer,
  WorkWechats.layer,
  WorkGroups.layer,
  Activities.layer,
  Matches.layer,
  Memberships.layer,
  Users.layer,
  Webhooks.layer,
  Events.layer,
  Idempotency.layer,
  SealedSecrets.layer
).pipe(
  Layer.provideMerge(ReposLive),
  Layer.provideMerge(SecretBoxLive)
)

/** The card parser configured from the environment (AI when ANTHROPIC_API_KEY is set, OCR). */
export const CardParserFromEnv = Layer.unwrap(Effect.map(cardParserConfig, CardParserLive)).pipe(Layer.orDie)

/** Everything over a migrated database, configured from the environment, with the system's resolver. */
export const AppLive = Layer.merge(ServicesLive, AdmittedNetworksNotice).pipe(
  Layer.provide(CardParserFromEnv),
  Layer.provide(NodeDns.layer),
  Layer.provideMerge(SqlLive),
  Layer.provideMerge(AppConfigLive)
)
