// Shared by the HTTP benchmarks: the bench database, an in-process API server over it with a
// signing client that is not rate limited, and latency percentiles.
import { createServer } from "node:http"

import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import type * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"

import type { Permission } from "../schema/Permissions.js"
import { prepareDatabase, ProjectEnvFile, ProjectEnvLive } from "../src/bootstrap.js"
import { makeOpenApiClient } from "../src/client/Client.js"
import { HttpAppLive } from "../src/http/Server.js"
import { processLayer, ServicesLive } from "../src/Layers.js"
import { LoggingLive } from "../src/logging.js"
import { Clients } from "../src/services/Clients.js"
import { withPgClient } from "../src/sql/embedded.js"
import { withDatabase } from "../src/sql/urls.js"

export const log = (line: string) => process.stderr.write(line + "\n")

/**
 * What `npm start` prepares (the .env, the embedded PostgreSQL and its key when DATABASE_URL is
 * unset), put into this bench process's own environment, which the servers and floors it starts
 * inherit.
 */
export const prepareBenchEnv = async (): Promise<void> => {
  const { envFile, prepared } = await Effect.runPromise(
    Effect.all({ envFile: ProjectEnvFile, prepared: prepareDatabase }).pipe(
      Effect.provide(LoggingLive("bench").pipe(Layer.provideMerge(ProjectEnvLive)))
    )
  )
  for (const [name, value] of Object.entries(envFile.settings)) process.env[name] ??= value
  Object.assign(process.env, prepared.settings)
}

/** BENCH_DATABASE_URL, or `matchmaking_bench` on the server of DATABASE_URL / the embedded one. */
export const benchDatabaseUrl = async (): Promise<string> => {
  await prepareBenchEnv()
  if (process.env.BENCH_DATABASE_URL) return process.env.BENCH_DATABASE_URL
  await withPgClient(process.env.DATABASE_URL!, async (client) => {
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = 'matchmaking_bench'")
    if (exists.rows.length === 0) await client.query("CREATE DATABASE matchmaking_bench ENCODING 'UTF8' TEMPLATE template0")
  })
  return withDatabase(process.env.DATABASE_URL!, "matchmaking_bench")
}

/** The configuration of an in-process service on the bench database: its URL and the secret key, nothing else. */
export const benchConfig = (url: string): ConfigProvider.ConfigProvider =>
  // The bench's receivers listen on loopback, admitted as an operator would a trusted network.
  ConfigProvider.fromUnknown({ DATABASE_URL: url, SECRET_KEY: process.env.SECRET_KEY!, WEBHOOK_ALLOWED_NETWORKS: "127.0.0.0/8" })

export const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

/** Runs `call` `warmup` times, then `samples` times; milliseconds per call, sorted. */
export const timeCalls = <A, E>(call: Effect.Effect<A, E>, samples: number, warmup = 5) =>
  Effect.gen(function*() {
    for (let i = 0; i < warmup; i++) yield* call
    const times: Array<number> = []
    let last: A | undefined
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now()
      last = yield* call
      times.push(performance.now() - t0)
    }
    return { times: times.sort((a, b) => a - b), last: last! }
  })

export type BenchApi = Effect.Success<ReturnType<typeof makeOpenApiClient>>

/** The port of a server listening on TCP. */
export const portOf = (server: HttpServer.HttpServer["Service"]): number => {
  const address = server.address
  if (address._tag === "UnixPathAddress") throw new Error("the bench server does not listen on TCP")
  return address.port
}

/**
 * The service in this process on the bench database: its HTTP app on a Node server (a free port),
 * every service and repository (benchmarks look at them), the database (migrated) and its configuration, and an HTTP client.
 */
export const inProcessService = () => {
  return HttpAppLive.pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(processLayer(ServicesLive)),
    Layer.provideMerge(FetchHttpClient.layer)
  )
}

/** Runs `effect` with the bench database's configuration, logging warnings and worse only. */
export const runWithBenchConfig = <A, E>(url: string, effect: Effect.Effect<A, E, Scope.Scope>): Promise<A> =>
  Effect.runPromise(
    effect.pipe(
      Effect.scoped,
      Effect.provideService(ConfigProvider.ConfigProvider, benchConfig(url)),
      Effect.provideService(References.MinimumLogLevel, "Warn")
    )
  )

/** Runs a benchmark against an API server on the bench database, with a signing client. */
export const runBench = async <E>(
  permissions: ReadonlyArray<Permission>,
  program: (api: BenchApi, sql: SqlClient.SqlClient) => Effect.Effect<void, E, SqlClient.SqlClient>
): Promise<void> => {
  const url = await benchDatabaseUrl()
  const main = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const port = portOf(yield* HttpServer.HttpServer)
    const clients = yield* Clients
    const creds = yield* clients.create({ name: "bench", permissions, masking: false })
    yield* clients.setRateLimit(creds.app_key, 1_000_000, 1_000_000)
    const api = yield* makeOpenApiClient(`http://127.0.0.1:${port}`, { appKey: creds.app_key, appSecret: creds.app_secret })
    yield* program(api, sql)
  })
  await runWithBenchConfig(url, Effect.provide(main, inProcessService()))
}
