// Test harness: a private copy of the migrated template database per test layer, the app's
// layers over it, and a real HTTP server on a free loopback port with a signing client.
import { randomBytes } from "node:crypto"

import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import * as TestClock from "effect/testing/TestClock"
import { inject } from "vitest"

import { ALL_PERMISSIONS, type Permission } from "../../schema/Permissions.js"
import { CardParserTest } from "../../src/card/CardParser.js"
import { type CardParser, emptyParsedCard } from "../../src/card/types.js"
import { type ClientOptions, makeOpenApiClient } from "../../src/client/Client.js"
import { type AppConfigShape, appConfigWith } from "../../src/Config.js"
import { LOOPBACK_NETWORKS, parseAllowedNetworks } from "../../src/domain/destinations.js"
import { HttpAppLive } from "../../src/http/Server.js"
import { makeApiServer } from "../../src/http/Transport.js"
import { ServicesLive } from "../../src/Layers.js"
import { Clients } from "../../src/services/Clients.js"
import { type DatabaseOptions, type DatabaseServices, pgClientLayer } from "../../src/sql/Sql.js"
import { withDatabase } from "../../src/sql/urls.js"
import { fakeDnsLayer } from "../fakes/dns.js"
import { databaseAdminUrl } from "./cluster.js"

/**
 * A fresh database copied from the migrated template, dropped when the layer is released. `via`
 * may route the service's connections elsewhere (a proxy that plays an outage); `options` set the
 * service's database client (its deadline).
 */
export const testDatabaseLayer = (
  via: (url: string) => Effect.Effect<string, never, Scope.Scope> = Effect.succeed,
  options: DatabaseOptions = {}
): Layer.Layer<DatabaseServices> =>
  Layer.unwrap(
    Effect.gen(function*() {
      const adminUrl = databaseAdminUrl()
      const template = inject("templateDatabase")
      const strategy = inject("copyStrategy")
      const name = `${template}_${randomBytes(5).toString("hex")}`
      const admin = yield* Layer.build(pgClientLayer(Redacted.make(adminUrl), "test-admin"))
      const sql = Context.get(admin, SqlClient.SqlClient)
      yield* Effect.acquireRelease(
        Effect.orDie(sql.unsafe(`CREATE DATABASE "${name}" TEMPLATE "${template}" ${strategy}`)),
        () => Effect.ignore(sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))
      )
      return pgClientLayer(Redacted.make(yield* via(withDatabase(adminUrl, name))), "test", options)
    })
  ).pipe(Layer.orDie)

export const TestDatabaseLive: Layer.Layer<DatabaseServices> = testDatabaseLayer()

/** A card parser that reads every card as the same guest (tests where parsing is not the point). */
export const fakeCardParser = CardParserTest({
  method: "ai",
  confidence: "high",
  parsed: { ...emptyParsedCard(), name: "卡片嘉宾", gender: "female", age: 29, education: "本科", occupation: "教师" }
})

/**
 * Loopback, admitted as a webhook destination (WEBHOOK_ALLOWED_NETWORKS) in tests by default: their
 * receivers listen on 127.0.0.1. A test of the refusal sets `webhookAllowedNetworks: []`, the default of production.
 */
export const LOOPBACK_ADMITTED = Result.getOrThrow(parseAllowedNetworks(LOOPBACK_NETWORKS))

/**
 * The services over a database, on whatever clock the test runs (the real one without test
 * services), with a fake resolver (FakeDns: no name resolves until a test says so).
 */
export const liveAppLayer = (
  config: Partial<AppConfigShape> = {},
  parser: Layer.Layer<CardParser> = fakeCardParser,
  database: Layer.Layer<DatabaseServices> = TestDatabaseLive
) =>
  ServicesLive.pipe(
    Layer.provide(parser),
    Layer.provideMerge(fakeDnsLayer()),
    Layer.provideMerge(database),
    Layer.provideMerge(appConfigWith({ webhookAllowedNetworks: LOOPBACK_ADMITTED, ...config }))
  )

/** The services over a private database; time starts at the real now (tests may move it). */
export const testAppLayer = (
  config: Partial<AppConfigShape> = {},
  parser: Layer.Layer<CardParser> = fakeCardParser,
  database: Layer.Layer<DatabaseServices> = TestDatabaseLive
) => liveAppLayer(config, parser, database).pipe(Layer.provideMerge(Layer.effectDiscard(TestClock.setTime(Date.now()))))

export class TestServer extends Context.Service<TestServer, { readonly baseUrl: string }>()("Test/Server") {}

/**
 * The app (HttpAppLive: the contract's routes, the edge, the docs and the probes) served by whatever
 * HttpServer is provided, and TestServer saying where: a Node server on a socket here, the
 * in-memory one of test/support/memory.ts.
 */
export const appServed = Layer.effect(
  TestServer,
  Effect.map(HttpServer.HttpServer, (server) => {
    const address = server.address
    if (address._tag === "UnixPathAddress") throw new Error("expected a TCP server")
    return { baseUrl: `http://127.0.0.1:${address.port}` }
  })
).pipe(Layer.provideMerge(HttpAppLive))

/** An HTTP server of the app over the given services (one more "API instance"). */
export const serverLayer = appServed.pipe(
  Layer.provide(Layer.unwrap(Effect.map(makeApiServer, (server) => NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1" })))),
  Layer.orDie
)

/** Services, one server and an HTTP client: what most endpoint tests need. */
export const testServerLayer = (
  config: Partial<AppConfigShape> = {},
  parser: Layer.Layer<CardParser> = fakeCardParser,
  database?: Layer.Layer<DatabaseServices>
) => serverLayer.pipe(Layer.provideMerge(testAppLayer(config, parser, database)), Layer.provideMerge(FetchHttpClient.layer))

/**
 * A test database whose URL is kept, so that more API instances (each with its own services, caches
 * and connection pool, as separate processes would have) can serve it: `database` goes to
 * testServerLayer, `anotherInstance` is built inside a test (through `Layer.fresh`, so that it
 * shares nothing with the instance already built); its services come with it (a test may look at its caches).
 */
export const sharedTestDatabase = (config: Partial<AppConfigShape> = {}, clock: "test" | "live" = "test") => {
  const appLayer = clock === "test" ? testAppLayer : liveAppLayer
  let url = ""
  return {
    database: testDatabaseLayer((given) =>
      Effect.sync(() => {
        url = given
        return given
      })
    ),
    anotherInstance: Layer.suspend(() =>
      serverLayer.pipe(Layer.provideMerge(appLayer(config, fakeCardParser, Layer.orDie(pgClientLayer(Redacted.make(url), "another")))))
    )
  }
}

/**
 * Creates an API client with the given permissions (bound to the `scope` companies when given,
 * DECISIONS §14) and returns its credentials.
 */
export const createCredentials = (
  permissions: ReadonlyArray<Permission> = ALL_PERMISSIONS,
  options: { masking?: boolean; name?: string; scope?: ReadonlyArray<number> } = {}
) =>
  Effect.flatMap(Clients, (clients) =>
    Effect.gen(function*() {
      const c = yield* Effect.orDie(clients.create({ name: options.name ?? "test", permissions, masking: options.masking ?? false }))
      if (options.scope !== undefined) yield* Effect.orDie(clients.setScope(c.app_key, options.scope))
      return { appKey: c.app_key, appSecret: c.app_secret }
    }))

/** A signed typed client for a new API client with these permissions. */
export const signedClient = (
  permissions: ReadonlyArray<Permission> = ALL_PERMISSIONS,
  options: { masking?: boolean; scope?: ReadonlyArray<number>; sign?: ClientOptions } = {}
) =>
  Effect.gen(function*() {
    const { baseUrl } = yield* TestServer
    const credentials = yield* createCredentials(permissions, options)
    // No retries by default: tests see each answer as it comes (and run on the TestClock).
    const client = yield* makeOpenApiClient(baseUrl, credentials, { retries: 0, ...options.sign })
    return { client, credentials, baseUrl }
  })
