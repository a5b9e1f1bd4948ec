// The layers each process (the API, the job daemon, the admin command line) is built from: each
// builds only the services it uses. The areas' services, repositories and commands come from their
// registrations (src/areas.ts); this file adds what no area owns (signing, clients, webhooks, the
// master keys, the jobs' queues). Each service declares its own dependencies (its `layer` provides
// them); layers are memoised by reference, so a repository shared by services is built once.
import * as NodeDns from "@effect/platform-node/NodeDns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { AREA_ADMIN_SERVICES, AREA_REPOS, AREA_SERVICES, mergeAll } from "./areas.js"
import { Authenticator } from "./auth/Authenticator.js"
import { ClientCache } from "./auth/ClientCache.js"
import { Masker } from "./auth/Masker.js"
import { SecretBoxLive } from "./auth/SecretBox.js"
import { Signer } from "./auth/Signer.js"
import { cardParserConfig, CardParserLive } from "./card/CardParser.js"
import { AppConfigLive } from "./Config.js"
import { CardTasksRepo } from "./repos/CardTasksRepo.js"
import { ClientsRepo } from "./repos/ClientsRepo.js"
import { EventsRepo } from "./repos/EventsRepo.js"
import { OutboxRepo } from "./repos/OutboxRepo.js"
import { PartitionsRepo } from "./repos/PartitionsRepo.js"
import { ReplayRepo } from "./repos/ReplayRepo.js"
import { RowCountsRepo } from "./repos/RowCountsRepo.js"
import { Transaction } from "./repos/sqlHelpers.js"
import { Activities } from "./services/Activities.js"
import { CardImport } from "./services/CardImport.js"
import { Clients } from "./services/Clients.js"
import { FollowUps } from "./services/FollowUps.js"
import { Idempotency } from "./services/Idempotency.js"
import { Memberships } from "./services/Memberships.js"
import { SealedSecrets } from "./services/SealedSecrets.js"
import { Webhooks } from "./services/Webhooks.js"
import { SqlLive } from "./sql/Sql.js"
import { AdmittedNetworksNotice } from "./webhooks/destinations.js"

/** The API's: every area's services, and the signing's (the signed groups' middlewares call them). */
export const ApiServicesLive = mergeAll([
  ...AREA_SERVICES,
  Signer.layer,
  Masker.layer,
  ClientCache.layer,
  Authenticator.layer,
  Idempotency.layer
]).pipe(Layer.provideMerge(SecretBoxLive))

/** The job daemon's: what its jobs (jobs/Jobs.ts) call. */
export const DaemonServicesLive = Layer.mergeAll(
  CardImport.layer,
  CardTasksRepo.layer,
  FollowUps.layer,
  Activities.layer,
  Memberships.layer,
  Webhooks.layer,
  Idempotency.layer,
  EventsRepo.layer,
  ReplayRepo.layer,
  RowCountsRepo.layer,
  PartitionsRepo.layer,
  Transaction.layer
).pipe(Layer.provideMerge(SecretBoxLive))

/** The admin command line's: what the areas' commands call, and the platform's (clients, webhooks, master keys). */
export const AdminServicesLive = mergeAll([...AREA_ADMIN_SERVICES, Clients.layer, Webhooks.layer, SealedSecrets.layer]).pipe(
  Layer.provideMerge(SecretBoxLive)
)

/** Every repository with an owner (the areas' and the platform's), for tests and benchmarks. */
export const ReposLive = mergeAll([
  ...AREA_REPOS,
  ClientsRepo.layer,
  ReplayRepo.layer,
  RowCountsRepo.layer,
  OutboxRepo.layer,
  PartitionsRepo.layer,
  Transaction.layer
])

/**
 * Every service of every process and every repository, over one database: for tests and
 * benchmarks, which look at any of them. No process builds it.
 */
export const ServicesLive = Layer.mergeAll(ApiServicesLive, DaemonServicesLive, AdminServicesLive).pipe(
  Layer.provideMerge(ReposLive),
  Layer.provideMerge(SecretBoxLive)
)

/** The card parser configured from the environment (AI when ANTHROPIC_API_KEY is set, OCR). */
export const CardParserFromEnv = Layer.unwrap(Effect.map(cardParserConfig, CardParserLive)).pipe(Layer.orDie)

/** A process's services over a migrated database, configured from the environment, with the system's resolver. */
export const processLayer = <A, E, R>(services: Layer.Layer<A, E, R>) =>
  Layer.merge(services, AdmittedNetworksNotice).pipe(
    Layer.provide(CardParserFromEnv),
    Layer.provide(NodeDns.layer),
    Layer.provideMerge(SqlLive),
    Layer.provideMerge(AppConfigLive)
  )

/** The API process's services. */
export const ApiAppLive = processLayer(ApiServicesLive)

/** The job daemon's services. */
export const DaemonAppLive = processLayer(DaemonServicesLive)
