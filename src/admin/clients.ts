// Operator commands for API clients (DECISIONS §3): create, list, grant/revoke permissions,
// disable/enable, reset-secret and end-grace (§13), masking, rate-limit and webhook settings.
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

import { ALL_PERMISSIONS, type Permission } from "../../schema/Permissions.js"
import { Clients } from "../services/Clients.js"
import { answering, usage, type UsageError, withFlags } from "./cli.js"

const appKey = Argument.String("APP_KEY").pipe(Argument.withDescription("the client's app_key (ak_…)"))
const permissionList = Argument.String("PERMISSIONS").pipe(Argument.withDescription("P[,P...]: SPEC §5 permission strings"))
const positiveNumber = (name: string) => Flag.Finite(name).pipe(Flag.filter((n) => n > 0, () => "a positive number"))

/** `all` or a comma list of SPEC §5 permission strings. */
export const parsePermissions = (text: string): Effect.Effect<ReadonlyArray<Permission>, UsageError> => {
  const items = text.split(",").map((s) => s.trim()).filter((s) => s.length > 0)
  if (items.length === 1 && items[0] === "all") return Effect.succeed(ALL_PERMISSIONS)
  const unknown = items.filter((p) => !(ALL_PERMISSIONS as ReadonlyArray<string>).includes(p))
  if (items.length === 0) return usage("no permissions given")
  if (unknown.length > 0) return usage(`unknown permission(s): ${unknown.join(", ")}; use 'all' or some of: ${ALL_PERMISSIONS.join(", ")}`)
  return Effect.succeed(items as ReadonlyArray<Permission>)
}

const create = answering(
  "create",
  {
    name: Flag.String("name").pipe(Flag.withDescription("the client's name")),
    permissions: Flag.String("permissions").pipe(Flag.withDescription("P[,P...] or all")),
    masking: Flag.Boolean("masking").pipe(Flag.withDescription("mask personal data in answers"), Flag.withDefault(false))
  },
  Effect.fnUntraced(function*({ masking, name, permissions }) {
    const clients = yield* Clients
    return yield* clients.create({ name, permissions: yield* parsePermissions(permissions), masking })
  }, withFlags({ name: "--name" }))
).pipe(Command.withDescription("Create a client; prints its app_key and app_secret"))

const list = answering("list", {}, () => Effect.flatMap(Clients, (c) => c.list)).pipe(
  Command.withDescription("Every client, without secrets")
)

const grant = answering(
  "grant",
  { appKey, permissions: permissionList },
  Effect.fnUntraced(function*({ appKey, permissions }) {
    const clients = yield* Clients
    return yield* clients.grant(appKey, yield* parsePermissions(permissions))
  })
).pipe(Command.withDescription("Add permissions"))

const revoke = answering(
  "revoke",
  { appKey, permissions: permissionList },
  Effect.fnUntraced(function*({ appKey, permissions }) {
    const clients = yield* Clients
    return yield* clients.revoke(appKey, yield* parsePermissions(permissions))
  })
).pipe(Command.withDescription("Remove permissions"))

const disable = answering("disable", { appKey }, ({ appKey }) => Effect.flatMap(Clients, (c) => c.setStatus(appKey, "disabled")))
  .pipe(Command.withDescription("Refuse the client's requests"))

const enable = answering("enable", { appKey }, ({ appKey }) => Effect.flatMap(Clients, (c) => c.setStatus(appKey, "active")))
  .pipe(Command.withDescription("Accept the client's requests again"))

const resetSecret = answering("reset-secret", { appKey }, ({ appKey }) => Effect.flatMap(Clients, (c) => c.resetSecret(appKey)))
  .pipe(Command.withDescription("A new secret; the previous one keeps working for a while"))

const endGrace = answering("end-grace", {
  appKey,
  webhook: Flag.Boolean("webhook").pipe(
    Flag.withDescription("also end the webhook signing secret's overlap (deliveries then carry one signature)"),
    Flag.withDefault(false)
  )
}, ({ appKey, webhook }) => Effect.flatMap(Clients, (c) => c.endGrace(appKey, { webhook }))).pipe(
  Command.withDescription("The previous app secret stops signing now, on every API instance (--webhook: the previous webhook secret too)")
)

const masking = answering(
  "masking",
  { appKey, mode: Argument.Literals("MODE", ["on", "off"]) },
  ({ appKey, mode }) => Effect.flatMap(Clients, (c) => c.setMasking(appKey, mode === "on"))
).pipe(
  Command.withDescription("Mask personal data in the client's answers (on) or not (off)")
)

const scope = answering(
  "scope",
  {
    appKey,
    companies: Flag.String("companies").pipe(Flag.withDescription("ID[,ID...]: the companies whose records it may use"), Flag.optional),
    none: Flag.Boolean("none").pipe(Flag.withDescription("remove the scope: every company's records"), Flag.withDefault(false))
  },
  Effect.fnUntraced(function*({ appKey, companies, none }) {
    const clients = yield* Clients
    if (none && Option.isSome(companies)) return yield* usage("--companies and --none exclude each other")
    if (none) return yield* clients.setScope(appKey, null)
    if (Option.isNone(companies)) return yield* usage("--companies ID[,ID...] is required (or --none)")
    const parts = companies.value.split(",").map((s) => s.trim()).filter((s) => s !== "")
    const ids = parts.map(Number)
    if (parts.length === 0 || ids.some((id) => !Number.isSafeInteger(id) || id < 1)) {
      return yield* usage("--companies takes positive company ids separated by commas")
    }
    return yield* clients.setScope(appKey, ids)
  }, withFlags({ companies: "--companies" }))
).pipe(
  Command.withDescription(
    "Bind the client to companies (--companies ID[,ID...]): it reads and changes only their records; --none removes the scope"
  )
)

const rateLimit = answering(
  "rate-limit",
  {
    appKey,
    rps: positiveNumber("rps").pipe(Flag.withDescription("requests per second")),
    burst: positiveNumber("burst").pipe(Flag.withDescription("requests at once"))
  },
  ({ appKey, burst, rps }) =>
    Effect.flatMap(Clients, (c) => c.setRateLimit(appKey, rps, burst)).pipe(withFlags({ rps: "--rps", burst: "--burst" }))
).pipe(
  Command.withDescription("The client's own rate limit")
)

const webhook = answering(
  "webhook",
  {
    appKey,
    url: Flag.String("url").pipe(Flag.withDescription("where events are posted"), Flag.optional),
    events: Flag.String("events").pipe(Flag.withDescription("E[,E...]: the event types to send"), Flag.optional),
    off: Flag.Boolean("off").pipe(Flag.withDescription("stop sending events"), Flag.withDefault(false)),
    rotateSecret: Flag.Boolean("rotate-secret").pipe(Flag.withDescription("a new signing secret"), Flag.withDefault(false))
  },
  Effect.fnUntraced(function*({ appKey, events, off, rotateSecret, url }) {
    const clients = yield* Clients
    if (off) return yield* clients.webhook(appKey, { _tag: "Off" })
    if (rotateSecret) return yield* clients.webhook(appKey, { _tag: "RotateSecret" })
    if (Option.isNone(url)) return yield* usage("--url VALUE is required (or --off, or --rotate-secret)")
    if (Option.isNone(events)) return yield* usage("--events VALUE is required")
    const list = events.value.split(",").map((s) => s.trim()).filter((s) => s !== "")
    return yield* clients.webhook(appKey, { _tag: "Set", url: url.value, events: list })
  }, withFlags({ url: "--url", events: "--events" }))
).pipe(
  Command.withDescription("Webhook settings: --url URL --events E[,E...] | --off | --rotate-secret")
)

export const clientsCommand = Command.make("clients").pipe(
  Command.withDescription("API clients: credentials, permissions, limits, webhooks"),
  Command.withSubcommands([create, list, grant, revoke, disable, enable, resetSecret, endGrace, masking, scope, rateLimit, webhook])
)
