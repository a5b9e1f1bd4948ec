// The API process: serves the Open API over HTTP. Applies pending migrations at start.
import { bootstrapEnv } from "./bootstrap.js"

await bootstrapEnv()

const { HttpServer } = await import("@effect/platform")
const { NodeHttpServer, NodeRuntime } = await import("@effect/platform-node")
const { Effect, Layer } = await import("effect")
const { createServer } = await import("node:http")
const { AppConfig } = await import("./Config.js")
const { AppLive } = await import("./Layers.js")
const { HttpAppLive } = await import("./http/Server.js")
const { LoggingLive } = await import("./logging.js")

const ServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (c) => NodeHttpServer.layer(createServer, { port: c.port, host: c.host }))
)

HttpAppLive.pipe(
  HttpServer.withLogAddress,
  Layer.provide(ServerLive),
  Layer.provide(AppLive),
  Layer.launch,
  Effect.provide(LoggingLive),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
