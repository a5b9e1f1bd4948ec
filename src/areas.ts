// The runtime half of every area, registered once: its handlers, the services they call, the
// repositories it owns, and its operator commands (with the services those use). The contract
// half (group, permissions, resource names) is the area's `Area` in schema/ (listed in
// schema/Api.ts's AREAS). The server takes its handlers from here, src/Layers.ts the services
// and repositories each process builds, the admin command line its commands. Keyed by group: a
// group of the API without its entry here, or an entry without a group, does not compile.
import type * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import type * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as Layer from "effect/Layer"

import type { OpenApiDef } from "../schema/Api.js"
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

/**
 * A layer whose module is loaded when the layer is built: the API loads no admin command, the
 * admin command line no handler (each process loads only the modules of what it builds).
 */
const loaded = <M, A, E, R>(load: () => Promise<M>, pick: (module: M) => Layer.Layer<A, E, R>) =>
  Layer.unwrap(Effect.map(Effect.promise(load), pick))

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
    readonly commands: () => Promise<ReadonlyArray<Command.Command.Any>>
    readonly services: ReadonlyArray<AnyLayer>
  }
}

/**
 * Every area's runtime half. The order of the keys is the order of the admin commands in its
 * --help (the API's routes follow schema/Api.ts's AREAS).
 */
export const AREA_RUNTIMES = {
  system: { handlers: loaded(() => import("./http/handlers/System.js"), (m) => m.SystemHandlers), services: [], repos: [] },
  companies: {
    handlers: loaded(() => import("./http/handlers/Companies.js"), (m) => m.CompaniesHandlers),
    services: [Companies.layer],
    repos: [CompaniesRepo.layer],
    admin: {
      commands: async () => {
        const { companiesCommand } = await import("./admin/companies.js")
        return [companiesCommand]
      },
      services: [Companies.layer]
    }
  },
  matchmakers: {
    handlers: loaded(() => import("./http/handlers/Matchmakers.js"), (m) => m.MatchmakersHandlers),
    services: [Matchmakers.layer],
    repos: [MatchmakersRepo.layer],
    admin: {
      commands: async () => {
        const { matchmakersCommand } = await import("./admin/matchmakers.js")
        return [matchmakersCommand]
      },
      services: [Matchmakers.layer]
    }
  },
  workWechats: {
    handlers: loaded(() => import("./http/handlers/WorkWechats.js"), (m) => m.WorkWechatsHandlers),
    services: [WorkWechats.layer],
    repos: [WorkWechatsRepo.layer, UsersRepo.layer],
    admin: {
      commands: async () => {
        const { usersCommand } = await import("./admin/users.js")
        return [usersCommand]
      },
      services: [Users.layer]
    }
  },
  imageBlacklist: {
    handlers: loaded(() => import("./http/handlers/ImageBlacklist.js"), (m) => m.ImageBlacklistHandlers),
    services: [ImageBlacklist.layer],
    repos: [ImageBlacklistRepo.layer],
    admin: {
      commands: async () => {
        const { blacklistCommand } = await import("./admin/blacklist.js")
        return [blacklistCommand]
      },
      services: [ImageBlacklist.layer]
    }
  },
  memberships: {
    handlers: loaded(() => import("./http/handlers/Memberships.js"), (m) => m.MembershipsHandlers),
    services: [Memberships.layer],
    repos: [MembershipsRepo.layer],
    admin: {
      commands: async () => {
        const { membershipPlansCommand, membershipsCommand } = await import("./admin/memberships.js")
        return [membershipPlansCommand, membershipsCommand]
      },
      services: [Memberships.layer]
    }
  },
  activities: {
    handlers: loaded(() => import("./http/handlers/Activities.js"), (m) => m.ActivitiesHandlers),
    services: [Activities.layer],
    repos: [ActivitiesRepo.layer],
    admin: {
      commands: async () => {
        const { activitiesCommand } = await import("./admin/activities.js")
        return [activitiesCommand]
      },
      services: [Activities.layer]
    }
  },
  followUps: {
    handlers: loaded(() => import("./http/handlers/FollowUps.js"), (m) => m.FollowUpsHandlers),
    services: [FollowUps.layer],
    repos: [FollowUpsRepo.layer],
    admin: {
      commands: async () => {
        const { followUpCommand } = await import("./admin/followUps.js")
        return [followUpCommand]
      },
      services: [FollowUps.layer]
    }
  },
  guests: {
    handlers: loaded(() => import("./http/handlers/Guests.js"), (m) => m.GuestsHandlers),
    services: [Guests.layer, CardImport.layer],
    repos: [GuestsRepo.layer, CardTasksRepo.layer]
  },
  workGroups: {
    handlers: loaded(() => import("./http/handlers/WorkGroups.js"), (m) => m.WorkGroupsHandlers),
    services: [WorkGroups.layer],
    repos: [WorkGroupsRepo.layer]
  },
  events: {
    handlers: loaded(() => import("./http/handlers/Events.js"), (m) => m.EventsHandlers),
    services: [Events.layer],
    repos: [EventsRepo.layer]
  },
  matches: {
    handlers: loaded(() => import("./http/handlers/Matches.js"), (m) => m.MatchesHandlers),
    services: [Matches.layer],
    repos: [MatchesRepo.layer]
  },
  selfService: {
    handlers: loaded(() => import("./http/handlers/SelfService.js"), (m) => m.SelfServiceHandlers),
    services: [Clients.layer, Webhooks.layer],
    repos: [WebhooksRepo.layer]
  }
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

/** Every area's operator commands, in the registry's order (their modules loaded when asked for). */
export const areaCommands = Effect.map(
  Effect.promise(() => Promise.all(runtimes.map((area) => ("admin" in area ? area.admin.commands() : [])))),
  (lists) => lists.flat()
)

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
