// The runtime half of every area, registered once: its handlers, the services they call, the
// repositories it owns, and its operator commands (with the services those use). The contract
// half (group, permissions, resource names) is the area's `Area` in schema/ (listed in
// schema/Api.ts's AREAS). The server takes its handlers from here, src/Layers.ts the services
// and repositories each process builds, the admin command line its commands. Keyed by group: a
// group of the API without its entry here, or an entry without a group, does not compile.
import type * as Command from "effect/cli/Command"
import type * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as Layer from "effect/Layer"

import type { OpenApiDef } from "../schema/Api.js"
import { activitiesCommand } from "./admin/activities.js"
import { blacklistCommand } from "./admin/blacklist.js"
import { companiesCommand } from "./admin/companies.js"
import { followUpCommand } from "./admin/followUps.js"
import { matchmakersCommand } from "./admin/matchmakers.js"
import { membershipPlansCommand, membershipsCommand } from "./admin/memberships.js"
import { usersCommand } from "./admin/users.js"
import { ActivitiesHandlers } from "./http/handlers/Activities.js"
import { CompaniesHandlers } from "./http/handlers/Companies.js"
import { EventsHandlers } from "./http/handlers/Events.js"
import { FollowUpsHandlers } from "./http/handlers/FollowUps.js"
import { GuestsHandlers } from "./http/handlers/Guests.js"
import { ImageBlacklistHandlers } from "./http/handlers/ImageBlacklist.js"
import { MatchesHandlers } from "./http/handlers/Matches.js"
import { MatchmakersHandlers } from "./http/handlers/Matchmakers.js"
import { MembershipsHandlers } from "./http/handlers/Memberships.js"
import { SelfServiceHandlers } from "./http/handlers/SelfService.js"
import { SystemHandlers } from "./http/handlers/System.js"
import { WorkGroupsHandlers } from "./http/handlers/WorkGroups.js"
import { WorkWechatsHandlers } from "./http/handlers/WorkWechats.js"
import { ActivitiesRepo } from "./repos/ActivitiesRepo.js"
import { CardTasksRepo } from "./repos/CardTasksRepo.js"
import { CompaniesRepo } from "./repos/CompaniesRepo.js"
import { EventsRepo } from "./repos/EventsRepo.js"
import { FollowUpsRepo } from "./repos/FollowUpsRepo.js"
import { GuestsRepo } from "./repos/GuestsRepo.js"
import { ImageBlacklistRepo } from "./repos/ImageBlacklistRepo.js"
import { MatchesRepo } from "./repos/MatchesRepo.js"
import { MatchmakersRepo } from "./repos/MatchmakersRepo.js"
import { MembershipsRepo } from "./repos/MembershipsRepo.js"
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
import { ImageBlacklist } from "./services/ImageBlacklist.js"
import { Matches } from "./services/Matches.js"
import { Matchmakers } from "./services/Matchmakers.js"
import { Memberships } from "./services/Memberships.js"
import { Users } from "./services/Users.js"
import { Webhooks } from "./services/Webhooks.js"
import { WorkGroups } from "./services/WorkGroups.js"
import { WorkWechats } from "./services/WorkWechats.js"

type Groups = typeof OpenApiDef extends HttpApi.HttpApi<string, infer G> ? G : never
/** The identifier of every group of the API ("system", "guests", …). */
export type GroupName = HttpApiGroup.Identifier<Groups>

/** Any layer (its output, error and requirements are whatever it is). */
type AnyLayer = Layer.Layer<never, unknown, unknown>

/**
 * The runtime half of one area. Its layers' requirements (configuration, the database, …) are
 * checked where a process builds them (src/Layers.ts, src/http/Server.ts).
 */
export interface RuntimeArea<Name extends string> {
  /** Its group's handlers (`HttpApiBuilder.group`), one service call each. */
  readonly handlers: Layer.Layer<HttpApiGroup.Service<"open-api", Name>, unknown, unknown>
  /** The services its handlers call; each service's `layer` provides its own repositories. */
  readonly services: ReadonlyArray<AnyLayer>
  /** The repositories it owns, offered beside the services (jobs, tests). */
  readonly repos: ReadonlyArray<AnyLayer>
  /** Its operator commands (`npm run admin -- <command>`), and the services they call. */
  readonly admin?: {
    readonly commands: ReadonlyArray<Command.Command.Any>
    readonly services: ReadonlyArray<AnyLayer>
  }
}

/**
 * Every area's runtime half. The order of the keys is the order of the admin commands in its
 * --help (the API's routes follow schema/Api.ts's AREAS).
 */
export const AREA_RUNTIMES = {
  system: { handlers: SystemHandlers, services: [], repos: [] },
  companies: {
    handlers: CompaniesHandlers,
    services: [Companies.layer],
    repos: [CompaniesRepo.layer],
    admin: { commands: [companiesCommand], services: [Companies.layer] }
  },
  matchmakers: {
    handlers: MatchmakersHandlers,
    services: [Matchmakers.layer],
    repos: [MatchmakersRepo.layer],
    admin: { commands: [matchmakersCommand], services: [Matchmakers.layer] }
  },
  workWechats: {
    handlers: WorkWechatsHandlers,
    services: [WorkWechats.layer],
    repos: [WorkWechatsRepo.layer, UsersRepo.layer],
    admin: { commands: [usersCommand], services: [Users.layer] }
  },
  imageBlacklist: {
    handlers: ImageBlacklistHandlers,
    services: [ImageBlacklist.layer],
    repos: [ImageBlacklistRepo.layer],
    admin: { commands: [blacklistCommand], services: [ImageBlacklist.layer] }
  },
  memberships: {
    handlers: MembershipsHandlers,
    services: [Memberships.layer],
    repos: [MembershipsRepo.layer],
    admin: { commands: [membershipPlansCommand, membershipsCommand], services: [Memberships.layer] }
  },
  activities: {
    handlers: ActivitiesHandlers,
    services: [Activities.layer],
    repos: [ActivitiesRepo.layer],
    admin: { commands: [activitiesCommand], services: [Activities.layer] }
  },
  followUps: {
    handlers: FollowUpsHandlers,
    services: [FollowUps.layer],
    repos: [FollowUpsRepo.layer],
    admin: { commands: [followUpCommand], services: [FollowUps.layer] }
  },
  guests: { handlers: GuestsHandlers, services: [Guests.layer, CardImport.layer], repos: [GuestsRepo.layer, CardTasksRepo.layer] },
  workGroups: { handlers: WorkGroupsHandlers, services: [WorkGroups.layer], repos: [WorkGroupsRepo.layer] },
  events: { handlers: EventsHandlers, services: [Events.layer], repos: [EventsRepo.layer] },
  matches: { handlers: MatchesHandlers, services: [Matches.layer], repos: [MatchesRepo.layer] },
  selfService: { handlers: SelfServiceHandlers, services: [Clients.layer, Webhooks.layer], repos: [WebhooksRepo.layer] }
} as const satisfies { readonly [Name in GroupName]: RuntimeArea<Name> }

type Runtimes = typeof AREA_RUNTIMES
type Runtime = Runtimes[keyof Runtimes]

const runtimes: ReadonlyArray<Runtime> = Object.values(AREA_RUNTIMES)

/** Every area's handlers. */
export const AREA_HANDLERS = runtimes.map((area) => area.handlers)

/** The services the API's handlers call, every area's. */
export const AREA_SERVICES = runtimes.flatMap((area): ReadonlyArray<Runtime["services"][number]> => area.services)

/** Every area's repositories. */
export const AREA_REPOS = runtimes.flatMap((area): ReadonlyArray<Runtime["repos"][number]> => area.repos)

type Admin = Extract<Runtime, { readonly admin: unknown }>["admin"]

/** Every area's operator commands, in the registry's order. */
export const AREA_COMMANDS = runtimes.flatMap((
  area
): ReadonlyArray<Admin["commands"][number]> => ("admin" in area ? area.admin.commands : []))

/** The services the areas' operator commands call. */
export const AREA_ADMIN_SERVICES = runtimes.flatMap((
  area
): ReadonlyArray<Admin["services"][number]> => ("admin" in area ? area.admin.services : []))

/** One layer of a list of them (as `Layer.mergeAll`, for a list built from the registry). */
export const mergeAll = <L extends AnyLayer>(layers: ReadonlyArray<L>) => {
  const [first, ...rest] = layers
  if (first === undefined) throw new Error("mergeAll: no layers")
  return Layer.mergeAll(first, ...rest)
}
