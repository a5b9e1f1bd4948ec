// The app in memory: the real HttpAppLive (the contract's routes with their handlers, the signed
// groups' middlewares, the edge that reads bodies, masks, signs and makes every error an envelope,
// the OpenAPI document, the docs page, the probes) over the real ServicesLive (signer, masker,
// authenticator, client cache, every service), exactly as test/support/harness.ts assembles them for
// PostgreSQL, with two things swapped:
//
// - no socket: HttpAppLive is served by an HttpServer that keeps its handler (Effect's web handler
//   over the same request pipeline Node's server runs) and `fetch` (FetchHttpClient.Fetch, which
//   the typed client and rawRequest use) hands each request to that handler;
// - no database: the repositories that have an in-memory fake (test/fakes/*, checked against the
//   PostgreSQL ones by the contract suites) replace the real ones wherever a layer asks for them.
//   The swap is by layer identity in the build's MemoMap (Effect memoises a layer by reference, so
//   `GuestsRepo.layer` asked for by `Guests.layer` is the fake the map already holds): the app is
//   assembled by the production layers as they are, and a new area needs no line here. A
//   repository without a fake is built over a database client that fails every query loudly
//   ("no database in the in-memory app"), so a test that reaches one fails, never passes silently.
//
// What stays in the integration project: SQL (constraints, locks, concurrency, crashes), event
// payloads (ChangeEvents here is the fake's: ids only), the byte-level HTTP of Node's server
// (parser errors, keep-alive, a missing Host, a declared Content-Length: Transport.ts), and the
// endpoints over repositories that have no fake.
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"

import { ClientChanges } from "../../src/auth/ClientCache.js"
import type { CardParser } from "../../src/card/types.js"
import type { AppConfigShape } from "../../src/Config.js"
import { ActivitiesRepo } from "../../src/repos/ActivitiesRepo.js"
import { CardTasksRepo } from "../../src/repos/CardTasksRepo.js"
import { ClientsRepo } from "../../src/repos/ClientsRepo.js"
import { CompaniesRepo } from "../../src/repos/CompaniesRepo.js"
import { FollowUpsRepo } from "../../src/repos/FollowUpsRepo.js"
import { GuestsRepo } from "../../src/repos/GuestsRepo.js"
import { MembershipsRepo } from "../../src/repos/MembershipsRepo.js"
import { OutboxRepo } from "../../src/repos/OutboxRepo.js"
import { ReplayRepo } from "../../src/repos/ReplayRepo.js"
import { Transaction } from "../../src/repos/sqlHelpers.js"
import { UsersRepo } from "../../src/repos/UsersRepo.js"
import { ChangeEvents } from "../../src/services/ChangeEvents.js"
import type { ListenerHandlers } from "../../src/sql/Listener.js"
import { type DatabaseServices, DatabaseUrl } from "../../src/sql/Sql.js"
import { FakeActivitiesRepo } from "../fakes/activitiesRepo.js"
import { FakeCardTasksRepo } from "../fakes/cardTasksRepo.js"
import { FakeChangeEvents } from "../fakes/changeEvents.js"
import { makeFakeClientsRepo } from "../fakes/clientsRepo.js"
import { FakeDbLive, FakeTransaction } from "../fakes/db.js"
import { FakeFollowUpsRepo } from "../fakes/followUpsRepo.js"
import { FakeGuestsRepo } from "../fakes/guestsRepo.js"
import { FakeCompanyLookup, FakeUserLookup } from "../fakes/lookups.js"
import { FakeMembershipsRepo } from "../fakes/membershipsRepo.js"
import { FakeOutboxRepo } from "../fakes/outboxRepo.js"
import { makeFakeReplayRepo } from "../fakes/replayRepo.js"
import { appServed, fakeCardParser, testAppLayer } from "./harness.js"

/** A query that cannot run: there is no database here. */
const noDatabase = Effect.die(
  new Error("no database in the in-memory app: this test reaches a repository without a fake (test/support/memory.ts)")
)

/**
 * A database client every use of which fails loudly: a tagged query or any method call gives the
 * dying effect above (real repositories without a fake are built over it, and only fail if used).
 */
const noDatabaseClient: unknown = new Proxy(() => noDatabase, {
  get: (_target, member) => typeof member === "symbol" || member === "then" ? undefined : noDatabaseClient,
  apply: () => noDatabase
})

/** SqlClient, PgClient and DatabaseUrl without a database behind them. */
export const NoDatabase: Layer.Layer<DatabaseServices> = Layer.mergeAll(
  Layer.succeed(SqlClient.SqlClient)(noDatabaseClient as SqlClient.SqlClient),
  Layer.succeed(PgClient.PgClient)(noDatabaseClient as PgClient.PgClient),
  Layer.succeed(DatabaseUrl)(Redacted.make("postgres://no-database.invalid/none"))
)

/** The client caches following `clients_changed` in this app. */
class ClientFeed extends Context.Service<ClientFeed, Set<ListenerHandlers>>()("Test/MemoryClientFeed") {}

const ClientFeedLive = Layer.sync(ClientFeed, () => new Set<ListenerHandlers>())

/** `clients_changed` in memory: live from the start (there is no connection to lose). */
const MemoryClientChanges = Layer.effect(
  ClientChanges,
  Effect.map(ClientFeed, (followers) =>
    ClientChanges.of({
      follow: (handlers) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            followers.add(handlers)
            handlers.onLive()
          }),
          () => Effect.sync(() => followers.delete(handlers))
        )
    }))
).pipe(Layer.provide(ClientFeedLive))

/** The fake clients repository, announcing each insert and update to the followers (as the table's trigger does at commit). */
const NotifyingClientsRepo = Layer.effect(
  ClientsRepo,
  Effect.gen(function*() {
    const repo = yield* makeFakeClientsRepo()
    const followers = yield* ClientFeed
    const announce = (appKey: string) => Effect.sync(() => followers.forEach((h) => h.onMessage(appKey)))
    return ClientsRepo.of({
      ...repo,
      insert: (row) => Effect.tap(repo.insert(row), (created) => announce(created.app_key)),
      update: (appKey, change) => Effect.tap(repo.update(appKey, change), () => announce(appKey))
    })
  })
).pipe(Layer.provide(ClientFeedLive))

/** Puts `fake` in the MemoMap under `real`, so that whoever asks for `real` gets the fake. */
function substitute<A>(real: Layer.Layer<A, unknown, unknown>, fake: Layer.Layer<A>) {
  return (memoMap: Layer.MemoMap, scope: Scope.Scope): Effect.Effect<void> =>
    // The fake needs nothing: what the real layer would need (a database) is never asked for.
    Effect.asVoid(memoMap.getOrElseMemoize(real, scope, (map, s) => buildIn(fake, map, s))) as Effect.Effect<void>
}

/** Builds `layer` in a child of `memoMap` (Layer.build forks the current one), which finds what the map holds. */
const buildIn = <A, E>(layer: Layer.Layer<A, E>, memoMap: Layer.MemoMap, scope: Scope.Scope) =>
  Layer.build(layer).pipe(Effect.provideService(Layer.CurrentMemoMap, memoMap), Scope.provide(scope))

/**
 * What the fakes share (one fake database, one client feed), in the map before the fakes: each
 * fake is built in a child map of its own, which finds these in the parent. Built fresh here, so
 * that building them does not wait on their own entry.
 */
function shared<A>(layer: Layer.Layer<A>) {
  return (memoMap: Layer.MemoMap, scope: Scope.Scope): Effect.Effect<void> =>
    Effect.asVoid(memoMap.getOrElseMemoize(layer, scope, (map, s) => buildIn(Layer.fresh(layer), map, s)))
}

/**
 * Which production layer is replaced by which fake, wherever it is asked for. The fakes share one
 * in-memory database (FakeDbLive, memoised in the same build).
 */
const SEEDS = [
  shared(FakeDbLive),
  shared(ClientFeedLive),
  substitute(ClientChanges.layer, MemoryClientChanges),
  substitute(ClientsRepo.layer, NotifyingClientsRepo),
  substitute(ReplayRepo.layer, Layer.effect(ReplayRepo, Effect.suspend(() => makeFakeReplayRepo()))),
  substitute(GuestsRepo.layer, Layer.provide(FakeGuestsRepo, FakeDbLive)),
  substitute(OutboxRepo.layer, Layer.provide(FakeOutboxRepo, FakeDbLive)),
  substitute(ChangeEvents.layer, FakeChangeEvents.pipe(Layer.provide(FakeOutboxRepo), Layer.provide(FakeDbLive))),
  substitute(FollowUpsRepo.layer, Layer.provide(FakeFollowUpsRepo, FakeDbLive)),
  substitute(ActivitiesRepo.layer, Layer.provide(FakeActivitiesRepo, FakeDbLive)),
  substitute(MembershipsRepo.layer, Layer.provide(FakeMembershipsRepo, FakeDbLive)),
  substitute(CardTasksRepo.layer, Layer.provide(FakeCardTasksRepo, FakeDbLive)),
  substitute(UsersRepo.layer, Layer.provide(FakeUserLookup, FakeDbLive)),
  substitute(CompaniesRepo.layer, Layer.provide(FakeCompanyLookup, FakeDbLive)),
  substitute(Transaction.layer, Layer.provide(FakeTransaction, FakeDbLive))
]

/** Builds `app` in a MemoMap that already holds each fake under the production layer it replaces. */
const withFakes = <A, E>(app: Layer.Layer<A, E>): Layer.Layer<A, E> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const memoMap = yield* Layer.makeMemoMap
      const scope = yield* Effect.scope
      for (const seed of SEEDS) yield* seed(memoMap, scope)
      return yield* Layer.build(app).pipe(Effect.provideService(Layer.CurrentMemoMap, memoMap))
    })
  )

/** Where TestServer says the app is: a port nothing listens on, so a request that bypasses memory fails. */
const MEMORY_ADDRESS = Result.getOrThrow(NetAddress.inetAddressFromIpString("127.0.0.1", 9))

/**
 * An HttpServer without a socket: `serve` keeps the app as a web handler (Effect's own
 * HttpEffect.toWebHandlerWith: the request pipeline, pre-response handlers and request scopes of
 * a served app) and FetchHttpClient.Fetch hands it each request.
 */
const MemoryHttpServer: Layer.Layer<HttpServer.HttpServer> = Layer.effectContext(
  Effect.sync(() => {
    let handler: ((request: Request) => Promise<Response>) | undefined
    const server = HttpServer.make({
      serve: (app, middleware) =>
        Effect.map(Effect.context<Scope.Scope>(), (context) => {
          handler = HttpEffect.toWebHandlerWith<Scope.Scope, Scope.Scope | HttpServerRequest.HttpServerRequest>(context)(app, middleware)
        }),
      address: MEMORY_ADDRESS
    })
    const fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
      handler === undefined ? Promise.reject(new Error("the in-memory app is not served yet")) : handler(new Request(input, init))
    return Context.make(HttpServer.HttpServer, server).pipe(Context.add(FetchHttpClient.Fetch, fetch as typeof globalThis.fetch))
  })
)

/**
 * Services over the fakes, the app served in memory, and an HTTP client (the typed client and
 * rawRequest) that reaches it: what testServerLayer gives an endpoint test, without PostgreSQL or
 * a socket. Time starts at the real now on the TestClock, as there.
 */
export const memoryServerLayer = (config: Partial<AppConfigShape> = {}, parser: Layer.Layer<CardParser> = fakeCardParser) =>
  withFakes(
    appServed.pipe(
      Layer.provideMerge(MemoryHttpServer),
      // The platform services Node's server layer brings (files, paths, ETags) for the docs and the favicon.
      Layer.provide(NodeHttpServer.layerHttpServices),
      Layer.provideMerge(testAppLayer(config, parser, NoDatabase)),
      Layer.provideMerge(FetchHttpClient.layer),
      Layer.orDie
    )
  )
