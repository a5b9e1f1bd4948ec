// Operator-side management of API clients (DECISIONS §3): credentials, permissions, masking,
// rate limits and webhook settings. Used by the admin command line and the tests.
import { randomBytes } from "node:crypto"

import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { ALL_PERMISSIONS, type Permission } from "../../schema/Common.js"
import { ClientCache } from "../auth/ClientCache.js"
import { SecretBox } from "../auth/SecretBox.js"
import { AppConfig } from "../Config.js"
import { formatIso } from "../domain/time.js"
import { type ClientChange, type ClientRow, ClientsRepo } from "../repos/ClientsRepo.js"
import { EventType } from "../repos/OutboxRepo.js"
import { ReplayRepo } from "../repos/ReplayRepo.js"

export class ClientCommandError extends Data.TaggedError("ClientCommandError")<{ readonly message: string }> {}

/** The events a webhook may subscribe to: every type the outbox records. */
export const WEBHOOK_EVENT_TYPES = EventType.literals
const isEventType = (name: string): name is EventType => (WEBHOOK_EVENT_TYPES as ReadonlyArray<string>).includes(name)

/** `all` or a comma list of SPEC §5 permission strings. */
export const parsePermissions = (text: string): Effect.Effect<ReadonlyArray<Permission>, ClientCommandError> => {
  const items = text.split(",").map((s) => s.trim()).filter((s) => s.length > 0)
  if (items.length === 1 && items[0] === "all") return Effect.succeed(ALL_PERMISSIONS)
  const unknown = items.filter((p) => !(ALL_PERMISSIONS as ReadonlyArray<string>).includes(p))
  if (items.length === 0 || unknown.length > 0) {
    return Effect.fail(
      new ClientCommandError({
        message: items.length === 0
          ? "no permissions given"
          : `unknown permission(s): ${unknown.join(", ")}; use 'all' or some of: ${ALL_PERMISSIONS.join(", ")}`
      })
    )
  }
  return Effect.succeed(items as ReadonlyArray<Permission>)
}

export interface ClientSummary {
  readonly app_key: string
  readonly name: string
  readonly status: string
  readonly permissions: ReadonlyArray<string>
  readonly masking: boolean
  readonly rate_limit: { readonly rps: number; readonly burst: number; readonly custom: boolean }
  readonly webhook: { readonly enabled: boolean; readonly url: string | null; readonly events: ReadonlyArray<string> }
  readonly previous_secret_expires_at: string | null
  readonly created_at: string
}

export const newAppSecret = (): string => randomBytes(32).toString("hex")
const newAppKey = (): string => "ak_" + randomBytes(8).toString("hex")
const newWebhookSecret = (): string => "whsec_" + randomBytes(32).toString("base64")

export class Clients extends Context.Service<Clients>()("Clients/Service", {
  make: Effect.gen(function*() {
    const repo = yield* ClientsRepo
    // Other instances learn of a change through NOTIFY; this one at once.
    const cache = yield* ClientCache
    const replay = yield* ReplayRepo
    const box = yield* SecretBox
    const config = yield* AppConfig

    const summary = (row: ClientRow): ClientSummary => ({
      app_key: row.app_key,
      name: row.name,
      status: row.status,
      permissions: row.permissions,
      masking: row.masking,
      rate_limit: {
        rps: row.rate_rps ?? config.rateLimitRps,
        burst: row.rate_burst ?? config.rateLimitBurst,
        custom: row.rate_rps !== null
      },
      webhook: { enabled: row.webhook_enabled, url: row.webhook_url, events: row.webhook_events },
      previous_secret_expires_at: row.prev_secret_expires_at === null ? null : formatIso(row.prev_secret_expires_at, config.timeZone),
      created_at: row.created_at
    })

    const mustUpdate = (appKey: string, change: ClientChange) =>
      Effect.flatMap(
        Effect.ensuring(repo.update(appKey, change), cache.forget(appKey)),
        Option.match({
          onNone: () => Effect.fail(new ClientCommandError({ message: `unknown app_key ${appKey}` })),
          onSome: Effect.succeed
        })
      )

    const mustFind = (appKey: string) =>
      Effect.flatMap(
        repo.findByAppKey(appKey),
        Option.match({
          onNone: () => Effect.fail(new ClientCommandError({ message: `unknown app_key ${appKey}` })),
          onSome: Effect.succeed
        })
      )

    const create = (input: { name: string; permissions: ReadonlyArray<Permission>; masking: boolean }) =>
      Effect.gen(function*() {
        if (input.name.trim() === "") return yield* new ClientCommandError({ message: "--name must not be empty" })
        const appSecret = newAppSecret()
        const row = yield* repo.insert({
          appKey: newAppKey(),
          name: input.name,
          permissions: input.permissions,
          masking: input.masking,
          secretEnc: box.seal(appSecret)
        })
        return { app_key: row.app_key, app_secret: appSecret }
      })

    const list = Effect.map(repo.list, (rows) => rows.map(summary))

    const grant = (appKey: string, perms: ReadonlyArray<Permission>) =>
      Effect.gen(function*() {
        const row = yield* mustFind(appKey)
        const next = [...new Set([...row.permissions, ...perms])].sort()
        return summary(yield* mustUpdate(appKey, { permissions: next }))
      })

    const revoke = (appKey: string, perms: ReadonlyArray<Permission>) =>
      Effect.gen(function*() {
        const row = yield* mustFind(appKey)
        const drop = new Set<string>(perms)
        return summary(yield* mustUpdate(appKey, { permissions: row.permissions.filter((p) => !drop.has(p)) }))
      })

    const setStatus = (appKey: string, status: "active" | "disabled") => Effect.map(mustUpdate(appKey, { status }), summary)

    const setMasking = (appKey: string, masking: boolean) => Effect.map(mustUpdate(appKey, { masking }), summary)

    const setRateLimit = (appKey: string, rps: number, burst: number) =>
      Effect.gen(function*() {
        if (!(rps > 0) || !Number.isInteger(burst) || burst < 1) {
          return yield* new ClientCommandError({ message: "--rps must be > 0 and --burst a whole number >= 1" })
        }
        const row = yield* mustUpdate(appKey, { rate_rps: rps, rate_burst: burst })
        yield* replay.resetBucket(appKey)
        return summary(row)
      })

    /** New secret; the current one keeps working until the overlap ends. */
    const resetSecret = (appKey: string) =>
      Effect.gen(function*() {
        const row = yield* mustFind(appKey)
        const now = yield* Clock.currentTimeMillis
        const expires = new Date(now + config.secretOverlapSeconds * 1000)
        const appSecret = newAppSecret()
        yield* mustUpdate(appKey, { secret_enc: box.seal(appSecret), prev_secret_enc: row.secret_enc, prev_secret_expires_at: expires })
        return { app_key: appKey, app_secret: appSecret, previous_secret_expires_at: formatIso(expires, config.timeZone) }
      })

    const webhook = (
      appKey: string,
      options:
        | { readonly _tag: "Set"; readonly url: string; readonly events: ReadonlyArray<string> }
        | { readonly _tag: "Off" }
        | { readonly _tag: "RotateSecret" }
    ) =>
      Effect.gen(function*() {
        const row = yield* mustFind(appKey)
        const now = yield* Clock.currentTimeMillis
        switch (options._tag) {
          case "Off": {
            const updated = yield* mustUpdate(appKey, { webhook_enabled: false })
            return { app_key: appKey, webhook: summary(updated).webhook }
          }
          case "Set": {
            let url: URL
            try {
              url = new URL(options.url)
            } catch {
              return yield* new ClientCommandError({ message: `--url is not a valid URL: ${options.url}` })
            }
            if (url.protocol !== "https:" && url.protocol !== "http:") {
              return yield* new ClientCommandError({ message: "--url must be http(s)" })
            }
            const events = options.events.filter(isEventType)
            const unknown = options.events.filter((e) => !isEventType(e))
            if (options.events.length === 0 || unknown.length > 0) {
              return yield* new ClientCommandError({
                message: `--events must list some of: ${WEBHOOK_EVENT_TYPES.join(", ")}${
                  unknown.length ? ` (unknown: ${unknown.join(", ")})` : ""
                }`
              })
            }
            const secret = row.webhook_secret_enc === null ? newWebhookSecret() : box.open(row.webhook_secret_enc)
            const updated = yield* mustUpdate(appKey, {
              webhook_url: url.toString(),
              webhook_events: [...new Set(events)],
              webhook_enabled: true,
              webhook_secret_enc: box.seal(secret)
            })
            return { app_key: appKey, webhook: summary(updated).webhook, signing_secret: secret }
          }
          case "RotateSecret": {
            // Deliveries are signed with both secrets until the previous one expires (DECISIONS §9).
            const secret = newWebhookSecret()
            const expires = row.webhook_secret_enc === null ? null : new Date(now + config.secretOverlapSeconds * 1000)
            const updated = yield* mustUpdate(appKey, {
              webhook_secret_enc: box.seal(secret),
              webhook_prev_secret_enc: row.webhook_secret_enc,
              webhook_prev_expires_at: expires
            })
            return {
              app_key: appKey,
              webhook: summary(updated).webhook,
              signing_secret: secret,
              previous_secret_expires_at: expires === null ? null : formatIso(expires, config.timeZone)
            }
          }
        }
      })

    return { create, list, grant, revoke, setStatus, setMasking, setRateLimit, resetSecret, webhook } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Clients, Clients.make)
  static readonly layer = Clients.layerWithoutDependencies.pipe(Layer.provide([ClientsRepo.layer, ReplayRepo.layer, ClientCache.layer]))
}
