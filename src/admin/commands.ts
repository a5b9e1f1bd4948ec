// The operator command line of DECISIONS §3 as a function from argv to one JSON-able value, so it
// can be tested in-process; main.ts prints the value and turns failures into exit codes.
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { CompanyStatus } from "../../schema/Companies.js"
import { CertLevel } from "../../schema/Matchmakers.js"
import { ClientCommandError, Clients, parsePermissions } from "../services/Clients.js"
import { Companies } from "../services/Companies.js"
import { ImageBlacklist } from "../services/ImageBlacklist.js"
import { Matchmakers } from "../services/Matchmakers.js"
import { UserCommandError, Users } from "../services/Users.js"
import { ActivityAction, activityCommand } from "./activities.js"
import { followUpPlansCommand, generateFollowUpTasks } from "./followUps.js"
import { cancelMembership, createPlan, listPlans } from "./memberships.js"
import { daemonsList, status } from "./status.js"
import { webhooksCommand } from "./webhooks.js"

export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

export const USAGE = `usage: npm run admin -- <command>

  clients create --name NAME --permissions P[,P...]|all [--masking]
  clients list
  clients grant APP_KEY P[,P...]
  clients revoke APP_KEY P[,P...]
  clients disable APP_KEY | clients enable APP_KEY
  clients reset-secret APP_KEY
  clients masking APP_KEY on|off
  clients rate-limit APP_KEY --rps N --burst M
  clients webhook APP_KEY --url URL --events E[,E...] | --off | --rotate-secret
  webhooks deliveries [--client APP_KEY] [--status pending|succeeded|failed] [--limit N]
  webhooks redeliver ID | webhooks redeliver --client APP_KEY --since YYYY-MM-DDTHH:MM:SS
  webhooks test APP_KEY
  companies status ID frozen|active|pending|rejected
  companies cert-level ID none|junior|intermediate|senior
  matchmakers status ID active|disabled
  matchmakers cert-level ID none|junior|intermediate|senior
  users create --name NAME [--phone P] [--work-wechat-id ID]
  users update ID --work-wechat-id ID|none
  blacklist disable ID
  membership-plans create --name NAME --days N
  membership-plans list
  memberships cancel ID
  activities approve|reject|open ID
  follow-up plans create --guest ID --days 1,3,7 --type recommend|revisit|reactivate [--start YYYY-MM-DD]
  follow-up plans list [--guest ID]
  follow-up generate [--date YYYY-MM-DD]
  status
  daemons list`

interface Parsed {
  readonly positional: ReadonlyArray<string>
  readonly flags: ReadonlyMap<string, string | true>
}

const BOOLEAN_FLAGS = new Set(["masking", "off", "rotate-secret"])

export const parseArgs = (argv: ReadonlyArray<string>): Parsed => {
  const positional: Array<string> = []
  const flags = new Map<string, string | true>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=")
      if (eq !== -1) {
        flags.set(arg.slice(2, eq), arg.slice(eq + 1))
      } else {
        const name = arg.slice(2)
        const next = argv[i + 1]
        if (!BOOLEAN_FLAGS.has(name) && next !== undefined && !next.startsWith("--")) {
          flags.set(name, next)
          i++
        } else {
          flags.set(name, true)
        }
      }
    } else {
      positional.push(arg)
    }
  }
  return { positional, flags }
}

const usage = (message: string) => Effect.fail(new UsageError({ message: `${message}\n\n${USAGE}` }))

const flag = (p: Parsed, name: string) => {
  const v = p.flags.get(name)
  return typeof v === "string" ? Effect.succeed(v) : usage(`--${name} VALUE is required`)
}

const arg = (p: Parsed, index: number, what: string) => {
  const v = p.positional[index]
  return v !== undefined ? Effect.succeed(v) : usage(`${what} is required`)
}

const idArg = (p: Parsed, index: number) =>
  Effect.flatMap(
    arg(p, index, "ID"),
    (s) => (/^\d+$/.test(s) ? Effect.succeed(Number(s)) : usage(`ID must be a positive integer, got ${s}`))
  )

const literalArg = <A extends string>(schema: Schema.Schema<A>, p: Parsed, index: number, what: string) =>
  Effect.flatMap(
    arg(p, index, what),
    (s) => Schema.is(schema)(s) ? Effect.succeed(s) : usage(`${what} must be one of the allowed values, got ${s}`)
  )

const positiveInt = (s: string, name: string) =>
  /^\d+$/.test(s) && Number(s) > 0 ? Effect.succeed(Number(s)) : usage(`${name} must be a positive integer (or none), got ${s}`)

const positiveNumber = (s: string, name: string) =>
  Number.isFinite(Number(s)) && Number(s) > 0 ? Effect.succeed(Number(s)) : usage(`--${name} must be a positive number`)

export const runAdmin = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const p = parseArgs(argv)
    const [group, command] = p.positional
    const key = `${group ?? ""} ${command ?? ""}`
    switch (key) {
      case "clients create": {
        const clients = yield* Clients
        const name = yield* flag(p, "name")
        const permissions = yield* parsePermissions(yield* flag(p, "permissions"))
        return yield* clients.create({ name, permissions, masking: p.flags.get("masking") === true })
      }
      case "clients list":
        return yield* Effect.flatMap(Clients, (c) => c.list)
      case "clients grant":
      case "clients revoke": {
        const clients = yield* Clients
        const appKey = yield* arg(p, 2, "APP_KEY")
        const permissions = yield* parsePermissions(yield* arg(p, 3, "permissions"))
        return yield* (command === "grant" ? clients.grant(appKey, permissions) : clients.revoke(appKey, permissions))
      }
      case "clients disable":
      case "clients enable": {
        const clients = yield* Clients
        return yield* clients.setStatus(yield* arg(p, 2, "APP_KEY"), command === "disable" ? "disabled" : "active")
      }
      case "clients reset-secret":
        return yield* Effect.flatMap(Clients, (c) => Effect.flatMap(arg(p, 2, "APP_KEY"), c.resetSecret))
      case "clients masking": {
        const clients = yield* Clients
        const appKey = yield* arg(p, 2, "APP_KEY")
        const mode = yield* arg(p, 3, "on|off")
        if (mode !== "on" && mode !== "off") return yield* usage("masking takes on or off")
        return yield* clients.setMasking(appKey, mode === "on")
      }
      case "clients rate-limit": {
        const clients = yield* Clients
        const appKey = yield* arg(p, 2, "APP_KEY")
        const rps = yield* Effect.flatMap(flag(p, "rps"), (s) => positiveNumber(s, "rps"))
        const burst = yield* Effect.flatMap(flag(p, "burst"), (s) => positiveNumber(s, "burst"))
        return yield* clients.setRateLimit(appKey, rps, burst)
      }
      case "clients webhook": {
        const clients = yield* Clients
        const appKey = yield* arg(p, 2, "APP_KEY")
        if (p.flags.get("off") === true) return yield* clients.webhook(appKey, { _tag: "Off" })
        if (p.flags.get("rotate-secret") === true) return yield* clients.webhook(appKey, { _tag: "RotateSecret" })
        const url = yield* flag(p, "url")
        const events = (yield* flag(p, "events")).split(",").map((s) => s.trim()).filter((s) => s !== "")
        return yield* clients.webhook(appKey, { _tag: "Set", url, events })
      }
      case "companies status": {
        const companies = yield* Companies
        return yield* companies.setStatus(yield* idArg(p, 2), yield* literalArg(CompanyStatus, p, 3, "STATUS"))
      }
      case "companies cert-level": {
        const companies = yield* Companies
        return yield* companies.setCertLevel(yield* idArg(p, 2), yield* literalArg(CertLevel, p, 3, "LEVEL"))
      }
      case "matchmakers status": {
        const matchmakers = yield* Matchmakers
        return yield* matchmakers.setStatus(yield* idArg(p, 2), yield* literalArg(Schema.Literal("active", "disabled"), p, 3, "STATUS"))
      }
      case "matchmakers cert-level": {
        const matchmakers = yield* Matchmakers
        return yield* matchmakers.setCertLevel(yield* idArg(p, 2), yield* literalArg(CertLevel, p, 3, "LEVEL"))
      }
      case "users create": {
        const users = yield* Users
        const name = yield* flag(p, "name")
        const phone = p.flags.get("phone")
        const account = p.flags.get("work-wechat-id")
        const workWechatId = typeof account === "string" ? yield* positiveInt(account, "--work-wechat-id") : null
        return yield* users.create({ name, phone: typeof phone === "string" ? phone : null, work_wechat_id: workWechatId })
      }
      case "users update": {
        const users = yield* Users
        const id = yield* idArg(p, 2)
        const account = yield* flag(p, "work-wechat-id")
        return yield* users.setWorkWechat(id, account === "none" ? null : yield* positiveInt(account, "--work-wechat-id"))
      }
      case "blacklist disable": {
        const blacklist = yield* ImageBlacklist
        return yield* blacklist.disable(yield* idArg(p, 2))
      }
      case "membership-plans create":
        return yield* createPlan(yield* flag(p, "name"), yield* Effect.flatMap(flag(p, "days"), (s) => positiveInt(s, "--days")))
      case "membership-plans list":
        return yield* listPlans
      case "memberships cancel":
        return yield* cancelMembership(yield* idArg(p, 2))
      case "activities approve":
      case "activities reject":
      case "activities open":
        return yield* activityCommand(yield* literalArg(ActivityAction, p, 1, "ACTION"), yield* idArg(p, 2))
      case "follow-up plans":
        return yield* followUpPlansCommand(p.positional[2], p.flags)
      case "follow-up generate":
        return yield* generateFollowUpTasks(p.flags)
      case "webhooks deliveries":
      case "webhooks redeliver":
      case "webhooks test":
        return yield* webhooksCommand(command!, p.positional.slice(2), p.flags)
      case "status ":
        return yield* status
      case "daemons list":
        return yield* daemonsList
      default:
        return yield* usage(group === undefined ? "no command given" : `unknown command: ${key.trim()}`)
    }
  })

/** The message an operator sees for a failed command. */
export const describeFailure = (error: unknown): string => {
  if (error instanceof UsageError || error instanceof ClientCommandError || error instanceof UserCommandError) return error.message
  if (typeof error === "object" && error !== null && "message" in error) return String(error.message)
  return String(error)
}
