// The API process: serves the Open API over HTTP. Applies pending migrations at start.
import { bootstrapOrExit } from "./bootstrap.js"

// Every setting is checked before anything starts, so a bad value is one clear line, not a stack.
const { appConfig } = await import("./Config.js")
const { cardParserConfig } = await import("./card/CardParser.js")
await bootstrapOrExit("api", [appConfig, cardParserConfig])

const { HttpServer } = await import("@effect/platform")
const { NodeHttpServer, NodeRuntime } = await import("@effect/platform-node")
const { Effect, Layer } = await import("effect")
const { createServer } = await import("node:http")
const { AppConfig } = await import("./Config.js")
const { AppLive } = await import("./Layers.js")
const { HttpAppLive } = await import("./http/Server.js")
const { LoggingLive, logStopReason } = await import("./logging.js")

const ServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (c) => NodeHttpServer.layer(createServer, { port: c.port, host: c.host }))
)

HttpAppLive.pipe(
  HttpServer.withLogAddress,
  Layer.provide(ServerLive),
  Layer.provide(AppLive),
  Layer.launch,
  Effect.tapErrorCause(logStopReason("api")),
  Effect.provide(LoggingLive),
  NodeRuntime.runMain({ disablePrettyLogger: true, disableErrorReporting: true })
)
