// Client rows (with their secrets opened) kept in each API instance, so a signed request needs no
// round trip to learn its caller. Every change of `clients` is announced at commit on
// `clients_changed` (migration 0013) and evicts the row here; while the LISTEN connection is down
// nothing is cached, so a disabled key or a reset secret can never outlive the notification.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"

import type { CallerInfo } from "../../schema/Auth.js"
import * as Scopes from "../domain/scope.js"
import { type ClientRow, ClientsRepo } from "../repos/ClientsRepo.js"
import { listen, type ListenerHandlers } from "../sql/Listener.js"
import { DatabaseUrl } from "../sql/Sql.js"
import { placeOf, SecretBox } from "./SecretBox.js"

export interface CachedClient {
  readonly row: ClientRow
  /** The current secret, opened. */
  readonly secret: string
  /** The previous secret, opened, while it has an expiry (its validity is checked per request). */
  readonly previousSecret: string | undefined
  /** The client as its requests' handlers see it, made once per row (not per request). */
  readonly caller: CallerInfo
  /** The same, for a request signed with the previous secret during its grace. */
  readonly deprecatedCaller: CallerInfo
}

export const CLIENTS_CHANNEL = "clients_changed"

/** The stream of client changes: the app_key of every changed row, and when it can be trusted. */
export class ClientChanges extends Context.Service<ClientChanges>()("Auth/ClientChanges", {
  make: Effect.map(DatabaseUrl, (url) => ({
    /** Follows `clients_changed` for as long as the scope is open (onMessage gets the app_key). */
    follow: (handlers: ListenerHandlers): Effect.Effect<void, never, Scope.Scope> =>
      listen({ channel: CLIENTS_CHANNEL, applicationName: "matchmaking-open-api:clients-cache" }, handlers).pipe(
        Effect.provideService(DatabaseUrl, url)
      )
  }))
}) {
  static readonly layer = Layer.effect(ClientChanges, ClientChanges.make)
}

/** Past this many entries (mostly unknown keys a caller made up) the cache starts over. */
const MAX_ENTRIES = 10_000

export class ClientCache extends Context.Service<ClientCache>()("Auth/ClientCache", {
  make: Effect.gen(function*() {
    const repo = yield* ClientsRepo
    const box = yield* SecretBox
    const changes = yield* ClientChanges
    const scope = yield* Effect.scope

    const entries = new Map<string, Option.Option<CachedClient>>()
    let live = false
    // Moves on every notification, connection and loss: a row read before a move may be stale.
    let version = 0
    let started = false
    // Told of every row dropped (undefined: all of them), so that state kept per client goes with it.
    const dropped = new Set<(appKey: string | undefined) => void>()
    const drop = (appKey: string | undefined) => {
      for (const listener of dropped) listener(appKey)
    }

    const start = changes.follow({
      onMessage: (appKey) => {
        version++
        entries.delete(appKey)
        drop(appKey)
      },
      onLive: () => {
        version++
        entries.clear()
        live = true
      },
      onLost: () => {
        version++
        live = false
        entries.clear()
        drop(undefined)
      }
    }).pipe(Scope.provide(scope))

    const open = (row: ClientRow): CachedClient => {
      const caller: CallerInfo = {
        id: row.id,
        appKey: row.app_key,
        name: row.name,
        permissions: new Set(row.permissions),
        masking: row.masking,
        scope: row.scoped ? Scopes.of(row.companies) : Scopes.all,
        deprecatedSecret: false
      }
      return {
        row,
        secret: box.open(row.secret_enc, placeOf("clients.secret_enc", row.app_key)),
        previousSecret: row.prev_secret_enc !== null && row.prev_secret_expires_at !== null
          ? box.open(row.prev_secret_enc, placeOf("clients.prev_secret_enc", row.app_key))
          : undefined,
        caller,
        deprecatedCaller: { ...caller, deprecatedSecret: true }
      }
    }

    /** The client of this app_key (none: unknown), from the cache when it can be trusted. */
    const get = (appKey: string) => {
      // Every signed request asks: a held row is answered without a generator or a fiber step.
      const held = started ? entries.get(appKey) : undefined
      return held !== undefined ? Effect.succeed(held) : load(appKey)
    }

    const load = Effect.fnUntraced(function*(appKey: string) {
      if (!started) {
        started = true
        yield* start
      }
      const cached = entries.get(appKey)
      if (cached !== undefined) return cached
      const seen = version
      const found = Option.map(yield* repo.findByAppKey(appKey), open)
      if (live && version === seen) {
        if (entries.size >= MAX_ENTRIES) entries.clear()
        entries.set(appKey, found)
      }
      return found
    })

    return {
      get,
      /** Drops a row this instance has just changed (other instances hear of it by NOTIFY). */
      forget: (appKey: string) =>
        Effect.sync(() => {
          version++
          entries.delete(appKey)
          drop(appKey)
        }),
      /** Calls `listener` with the app_key of every row dropped (undefined: all rows). */
      onDrop: (listener: (appKey: string | undefined) => void) => Effect.sync(() => void dropped.add(listener)),
      /** Whether rows are being cached (the LISTEN connection is up); for tests and status. */
      isLive: () => live,
      /** Whether the row of this app_key is held now (answered without a round trip); for tests. */
      holds: (appKey: string) => entries.has(appKey)
    } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(ClientCache, ClientCache.make)
  static readonly layer = ClientCache.layerWithoutDependencies.pipe(Layer.provide([ClientsRepo.layer, ClientChanges.layer]))
}
