// Operator-side management of API clients (DECISIONS §3): credentials, permissions, masking,
// rate limits and webhook settings. Used by the admin command line and the tests.
import { randomBytes } from "node:crypto"

import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import type { Permission } from "../../schema/Permissions.js"
import type { SubscribableEventType, WebhookSettings, WebhookUpdate, WebhookUpdated } from "../../schema/SelfService.js"
import { ClientCache } from "../auth/ClientCache.js"
import { placeOf, SecretBox } from "../auth/SecretBox.js"
import { AppConfig } from "../Config.js"
import { InvalidInput, NotFound } from "../domain/errors.js"
import { type CatalogueEventType, EVENT_TYPES, isEventType } from "../domain/eventTypes.js"
import { formatIso, formatTimestamp } from "../domain/time.js"
import { changeWebhook, isWebhookUrl } from "../domain/webhooks.js"
import { type ClientChange, type ClientRow, ClientsRepo } from "../repos/ClientsRepo.js"
import { ReplayRepo } from "../repos/ReplayRepo.js"
import { Transaction } from "../repos/sqlHelpers.js"
import { WebhookDestinations } from "../webhooks/destinations.js"

/** No client has this app_key. */
export class UnknownClient extends Data.TaggedError("UnknownClient")<{ readonly appKey: string; readonly message: string }> {
  static of(appKey: string): UnknownClient {
    return new UnknownClient({ appKey, message: `unknown app_key ${appKey}` })
  }
}

/** The events a webhook may subscribe to: the catalogue (DECISIONS §12). */
export const WEBHOOK_EVENT_TYPES = EVENT_TYPES

export interface ClientSummary {
  readonly app_key: string
  readonly name: string
  readonly status: string
  readonly permissions: ReadonlyArray<string>
  readonly masking: boolean
  /** null: every company; otherwise the companies it is bound to (DECISIONS §14). */
  readonly scope: { readonly companies: ReadonlyArray<number> } | null
  readonly rate_limit: { readonly rps: number; readonly burst: number; readonly custom: boolean }
  readonly webhook: { readonly enabled: boolean; readonly url: string | null; readonly events: ReadonlyArray<string> }
  readonly previous_secret_expires_at: string | null
  readonly created_at: string
}

export const newAppSecret = (): string => randomBytes(32).toString("hex")
const newAppKey = (): string => "ak_" + randomBytes(8).toString("hex")
const newWebhookSecret = (): string => "whsec_" + randomBytes(32).toString("base64")

/** An operator's `clients webhook` change. */
type WebhookChange =
  | { readonly _tag: "Set"; readonly url: string; readonly events: ReadonlyArray<string> }
  | { readonly _tag: "Off" }
  | { readonly _tag: "RotateSecret" }

export class Clients extends Context.Service<Clients>()("Clients/Service", {
  make: Effect.gen(function*() {
    const repo = yield* ClientsRepo
    // Other instances learn of a change through NOTIFY; this one at once.
    const cache = yield* ClientCache
    const replay = yield* ReplayRepo
    const box = yield* SecretBox
    const config = yield* AppConfig
    const tx = yield* Transaction
    const destinations = yield* WebhookDestinations

    const summary = (row: ClientRow): ClientSummary => ({
      app_key: row.app_key,
      name: row.name,
      status: row.status,
      permissions: row.permissions,
      masking: row.masking,
      scope: row.scoped ? { companies: row.companies } : null,
      rate_limit: {
        rps: row.rate_rps ?? config.rateLimitRps,
        burst: row.rate_burst ?? config.rateLimitBurst,
        custom: row.rate_rps !== null
      },
      webhook: { enabled: row.webhook_enabled, url: row.webhook_url, events: row.webhook_events },
      previous_secret_expires_at: row.prev_secret_expires_at === null ? null : formatIso(row.prev_secret_expires_at, config.timeZone),
      created_at: row.created_at
    })

    const known = <E>(appKey: string, row: Effect.Effect<Option.Option<ClientRow>, E>) =>
      Effect.flatMap(
        row,
        Option.match({
          onNone: () => Effect.fail(UnknownClient.of(appKey)),
          onSome: Effect.succeed
        })
      )

    const mustUpdate = (appKey: string, change: ClientChange) =>
      known(appKey, Effect.ensuring(repo.update(appKey, change), cache.forget(appKey)))

    const mustFind = (appKey: string) => known(appKey, repo.findByAppKey(appKey))

    /** The row, locked until the transaction of `inTurn` ends. */
    const mustLock = (appKey: string) => known(appKey, repo.lockByAppKey(appKey))

    /**
     * A change computed from the client's row (permissions added to, a secret made the previous
     * one): in one transaction that reads the row with mustLock first, so that concurrent changes
     * of one client take turns, each computed from the one before (none is lost; the last one
     * wins). This instance's cache forgets the row again once the change has committed.
     */
    const inTurn = <A, E, R>(appKey: string, change: Effect.Effect<A, E, R>) => Effect.ensuring(tx.run(change), cache.forget(appKey))

    // Generator functions are made here, once per layer, never per call (docs/contributor.md,
    // "Generators are made once"): a change made in turn is a function of its own, given what it uses.
    const create = Effect.fnUntraced(function*(input: { name: string; permissions: ReadonlyArray<Permission>; masking: boolean }) {
      if (input.name.trim() === "") return yield* InvalidInput.at("name", "must not be empty")
      const appSecret = newAppSecret()
      const appKey = newAppKey()
      const row = yield* repo.insert({
        appKey,
        name: input.name,
        permissions: input.permissions,
        masking: input.masking,
        secretEnc: box.seal(appSecret, placeOf("clients.secret_enc", appKey))
      })
      return { app_key: row.app_key, app_secret: appSecret }
    })

    const list = Effect.map(repo.list, (rows) => rows.map(summary))

    const granted = Effect.fnUntraced(function*(appKey: string, perms: ReadonlyArray<Permission>) {
      const row = yield* mustLock(appKey)
      const next = [...new Set([...row.permissions, ...perms])].sort()
      return summary(yield* mustUpdate(appKey, { permissions: next }))
    })

    const grant = (appKey: string, perms: ReadonlyArray<Permission>) => inTurn(appKey, granted(appKey, perms))

    const revoked = Effect.fnUntraced(function*(appKey: string, perms: ReadonlyArray<Permission>) {
      const row = yield* mustLock(appKey)
      const drop = new Set<string>(perms)
      return summary(yield* mustUpdate(appKey, { permissions: row.permissions.filter((p) => !drop.has(p)) }))
    })

    const revoke = (appKey: string, perms: ReadonlyArray<Permission>) => inTurn(appKey, revoked(appKey, perms))

    const setStatus = (appKey: string, status: "active" | "disabled") => Effect.map(mustUpdate(appKey, { status }), summary)

    const setMasking = (appKey: string, masking: boolean) => Effect.map(mustUpdate(appKey, { masking }), summary)

    const scoped = Effect.fnUntraced(function*(appKey: string, companies: ReadonlyArray<number> | null) {
      if (companies !== null && companies.length === 0) {
        return yield* InvalidInput.at("companies", "name at least one company (or remove the scope)")
      }
      const row = yield* known(appKey, repo.replaceScope(appKey, companies))
      const missing = (companies ?? []).filter((id) => !row.companies.includes(id))
      if (missing.length > 0) return yield* NotFound.ids("company", [...new Set(missing)])
      return summary(row)
    })

    /**
     * Binds the client to companies (null: unbinds it, DECISIONS §14). Every id must be a company
     * (404 naming the unknown ones, nothing changed). Takes effect on this instance at once, on the
     * others when the change's NOTIFY reaches their caches.
     */
    const setScope = (appKey: string, companies: ReadonlyArray<number> | null) => inTurn(appKey, scoped(appKey, companies))

    const setRateLimit = Effect.fnUntraced(function*(appKey: string, rps: number, burst: number) {
      const issues = [
        ...(rps > 0 ? [] : [{ path: "rps", message: "must be > 0" }]),
        ...(Number.isInteger(burst) && burst >= 1 ? [] : [{ path: "burst", message: "must be a whole number >= 1" }])
      ]
      if (issues.length > 0) return yield* InvalidInput.of(issues)
      const row = yield* mustUpdate(appKey, { rate_rps: rps, rate_burst: burst })
      yield* replay.resetBucket(appKey)
      return summary(row)
    })

    const secretReset = Effect.fnUntraced(function*(appKey: string) {
      const row = yield* mustLock(appKey)
      const now = yield* Clock.currentTimeMillis
      const expires = new Date(now + config.secretOverlapSeconds * 1000)
      const appSecret = newAppSecret()
      yield* mustUpdate(appKey, {
        secret_enc: box.seal(appSecret, placeOf("clients.secret_enc", appKey)),
        // Sealed for its column: the current secret is opened and sealed again as the previous one.
        prev_secret_enc: box.move(row.secret_enc, placeOf("clients.secret_enc", appKey), placeOf("clients.prev_secret_enc", appKey)),
        prev_secret_expires_at: expires
      })
      return { app_key: appKey, app_secret: appSecret, previous_secret_expires_at: formatIso(expires, config.timeZone) }
    })

    /**
     * New secret; the current one keeps working until the overlap ends. Rotations of one client
     * take turns (DECISIONS §13): each makes the secret that the one before it made current the
     * previous one, so the last one wins and no new secret is lost to a concurrent rotation.
     */
    const resetSecret = (appKey: string) => inTurn(appKey, secretReset(appKey))

    const graceEnded = Effect.fnUntraced(function*(appKey: string, options: { readonly webhook: boolean }) {
      const row = yield* mustLock(appKey)
      const nowMs = yield* Clock.currentTimeMillis
      const running = (sealed: string | null, expires: Date | null) => sealed !== null && expires !== null && expires.getTime() > nowMs
      const appGrace = running(row.prev_secret_enc, row.prev_secret_expires_at)
      const webhookOverlap = running(row.webhook_prev_secret_enc, row.webhook_prev_expires_at)
      yield* mustUpdate(appKey, {
        prev_secret_enc: null,
        prev_secret_expires_at: null,
        ...(options.webhook ? { webhook_prev_secret_enc: null, webhook_prev_expires_at: null } : {})
      })
      return {
        app_key: appKey,
        previous_secret: appGrace ? "ended" : "none",
        webhook_previous_secret: !webhookOverlap ? "none" : options.webhook ? "ended" : "kept"
      } as const
    })

    /**
     * Ends the app secret's grace at once (`clients end-grace`, DECISIONS §13): the previous secret
     * stops signing on every API instance (each drops the row when NOTIFY tells it of the change).
     * With `webhook`, also the webhook signing secret's overlap: deliveries are then signed with the
     * current secret only. Not by default: that secret is another credential, held by the receiver,
     * and a receiver not yet moved to the new one would refuse every delivery.
     */
    const endGrace = (appKey: string, options: { readonly webhook: boolean }) => inTurn(appKey, graceEnded(appKey, options))

    /**
     * A new signing secret; deliveries are signed with both until the previous one expires
     * (DECISIONS §9). `row` was read with mustLock (inTurn), as for resetSecret.
     */
    const rotateWebhookSecret = Effect.fnUntraced(function*(row: ClientRow) {
      const now = yield* Clock.currentTimeMillis
      const secret = newWebhookSecret()
      const expires = row.webhook_secret_enc === null ? null : new Date(now + config.secretOverlapSeconds * 1000)
      const updated = yield* mustUpdate(row.app_key, {
        webhook_secret_enc: box.seal(secret, placeOf("clients.webhook_secret_enc", row.app_key)),
        webhook_prev_secret_enc: row.webhook_secret_enc === null ? null : box.move(
          row.webhook_secret_enc,
          placeOf("clients.webhook_secret_enc", row.app_key),
          placeOf("clients.webhook_prev_secret_enc", row.app_key)
        ),
        webhook_prev_expires_at: expires
      })
      return { updated, secret, expires }
    })

    /** The operator's webhook target: an http(s) URL to an allowed destination, and known event types. */
    const checkedWebhookTarget = Effect.fnUntraced(function*(url: string, sent: ReadonlyArray<string>) {
      if (!isWebhookUrl(url)) return yield* InvalidInput.at("url", `must be an absolute http(s) URL: ${url}`)
      const events = sent.filter(isEventType)
      const unknown = sent.filter((e) => !isEventType(e))
      if (sent.length === 0 || unknown.length > 0) {
        return yield* InvalidInput.at(
          "events",
          `must list some of: ${WEBHOOK_EVENT_TYPES.join(", ")}${unknown.length ? ` (unknown: ${unknown.join(", ")})` : ""}`
        )
      }
      yield* Effect.mapError(destinations.check(url), (e) => InvalidInput.at("url", e.message))
      return events
    })

    /** The operator's webhook change, in turn; `events` were checked by checkedWebhookTarget (Set). */
    const webhookChanged = Effect.fnUntraced(function*(appKey: string, options: WebhookChange, events: ReadonlyArray<CatalogueEventType>) {
      const row = yield* mustLock(appKey)
      switch (options._tag) {
        case "Off": {
          const updated = yield* mustUpdate(appKey, { webhook_enabled: false })
          return { app_key: appKey, webhook: summary(updated).webhook }
        }
        case "Set": {
          const secret = row.webhook_secret_enc === null
            ? newWebhookSecret()
            : box.open(row.webhook_secret_enc, placeOf("clients.webhook_secret_enc", appKey))
          const updated = yield* mustUpdate(appKey, {
            webhook_url: new URL(options.url).toString(),
            webhook_events: [...new Set(events)],
            webhook_enabled: true,
            webhook_secret_enc: box.seal(secret, placeOf("clients.webhook_secret_enc", appKey))
          })
          return { app_key: appKey, webhook: summary(updated).webhook, signing_secret: secret }
        }
        case "RotateSecret": {
          const { expires, secret, updated } = yield* rotateWebhookSecret(row)
          return {
            app_key: appKey,
            webhook: summary(updated).webhook,
            signing_secret: secret,
            previous_secret_expires_at: expires === null ? null : formatIso(expires, config.timeZone)
          }
        }
      }
    })

    const webhook = Effect.fnUntraced(function*(appKey: string, options: WebhookChange) {
      // The URL and events are checked before the row is locked: no lock is held while the name resolves.
      const events = options._tag === "Set" ? yield* checkedWebhookTarget(options.url, options.events) : []
      return yield* inTurn(appKey, webhookChanged(appKey, options, events))
    })

    // Self-service (DECISIONS §12): the calling client's own settings. Its app_key exists (it has
    // just signed the request), so an unknown one is a defect, not an answer.
    const own = <A, E>(effect: Effect.Effect<A, E | UnknownClient>) =>
      Effect.catchIf(effect, (e): e is UnknownClient => e instanceof UnknownClient, Effect.die)

    const settingsOf = (row: ClientRow, nowMs: number): WebhookSettings => ({
      url: row.webhook_url,
      events: row.webhook_events,
      enabled: row.webhook_enabled,
      secret_rotating_until: row.webhook_prev_expires_at !== null && row.webhook_prev_expires_at.getTime() > nowMs
        ? formatTimestamp(row.webhook_prev_expires_at, config.timeZone)
        : null
    })

    const ownSettings = Effect.fnUntraced(function*(appKey: string) {
      return settingsOf(yield* mustFind(appKey), yield* Clock.currentTimeMillis)
    })

    /** GET /webhook: the caller's settings, never the secret. */
    const webhookSettings = (appKey: string) => own(ownSettings(appKey))

    /** The caller's webhook change, in turn. */
    const ownWebhookChanged = Effect.fnUntraced(function*(appKey: string, sent: WebhookUpdate) {
      // Locked: two first PUTs with a URL cannot each mint a signing secret.
      const row = yield* mustLock(appKey)
      const changed = changeWebhook({ url: row.webhook_url, events: row.webhook_events, enabled: row.webhook_enabled }, sent)
      if (changed._tag === "Refused") {
        return yield* InvalidInput.of([{ path: changed.path, message: changed.message }], changed.message)
      }
      const { enabled, events, url } = changed.settings
      const secret = url !== null && row.webhook_secret_enc === null ? newWebhookSecret() : undefined
      const updated = yield* mustUpdate(appKey, {
        webhook_url: url === null ? null : new URL(url).toString(),
        webhook_events: events as ReadonlyArray<SubscribableEventType>,
        webhook_enabled: enabled,
        ...(secret === undefined ? {} : { webhook_secret_enc: box.seal(secret, placeOf("clients.webhook_secret_enc", appKey)) })
      })
      const answer: WebhookUpdated = {
        ...settingsOf(updated, yield* Clock.currentTimeMillis),
        ...(secret === undefined ? {} : { signing_secret: secret })
      }
      return answer
    })

    /** PUT /webhook: the settings after the change; the first URL also brings the signing secret, once. */
    const updateWebhook = (appKey: string, sent: WebhookUpdate) =>
      own(Effect.andThen(
        // Checked before the row is locked: no lock or connection is held while the name resolves.
        sent.url === undefined
          ? Effect.void
          : Effect.mapError(destinations.check(sent.url), (e) => InvalidInput.of([{ path: "url", message: e.message }], e.message)),
        inTurn(appKey, ownWebhookChanged(appKey, sent))
      ))

    const ownWebhookRotated = Effect.fnUntraced(function*(appKey: string) {
      const { secret } = yield* rotateWebhookSecret(yield* mustLock(appKey))
      return { signing_secret: secret }
    })

    /** POST /webhook/rotate-secret: the new signing secret (the previous one signs too for the overlap). */
    const rotateOwnWebhookSecret = (appKey: string) => own(inTurn(appKey, ownWebhookRotated(appKey)))

    /** POST /credentials/rotate: the operator's reset-secret, answered with the new secret only. */
    const rotateOwnSecret = (appKey: string) => own(Effect.map(resetSecret(appKey), ({ app_secret }) => ({ app_secret })))

    return {
      create,
      list,
      grant,
      revoke,
      setStatus,
      setMasking,
      setScope,
      setRateLimit,
      resetSecret,
      endGrace,
      webhook,
      webhookSettings,
      updateWebhook,
      rotateOwnWebhookSecret,
      rotateOwnSecret
    } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Clients, Clients.make)
  /** Needs the resolver (`Dns`, for webhook URLs), AppConfig, SecretBox and the database. */
  static readonly layer = Clients.layerWithoutDependencies.pipe(
    Layer.provide([ClientsRepo.layer, ReplayRepo.layer, ClientCache.layer, Transaction.layer, WebhookDestinations.layer])
  )
}
