// The API process: serves the Open API over HTTP, with /healthz, /readyz and /metrics beside it.
// Applies pending migrations at start. On SIGTERM it stops accepting, finishes the requests in
// flight (at most SHUTDOWN_GRACE_SECONDS), then closes the database pool.
import { bootstrapOrExit } from "./bootstrap.js"

// Every setting is checked before anything starts, so a bad value is one clear line, not a stack.
const { appConfig } = await import("./Config.js")
const { cardParserConfig } = await import("./card/CardParser.js")
const { tracingConfig } = await import("./observability/tracing.js")
const SERVICE_NAME = "matchmaking-open-api"
await bootstrapOrExit("api", [appConfig, cardParserConfig, tracingConfig(SERVICE_NAME)])

const HttpServer = await import("@effect/platform/HttpServer")
const NodeRuntime = await import("@effect/platform-node/NodeRuntime")
const Duration = await import("effect/Duration")
const Effect = await import("effect/Effect")
const Layer = await import("effect/Layer")
const { AppConfig } = await import("./Config.js")
const { AppLive } = await import("./Layers.js")
const { HttpAppLive } = await import("./http/Server.js")
const { LoggingLive, logStopReason } = await import("./logging.js")
const { DrainOnShutdown, drainableServerLayer } = await import("./observability/shutdown.js")
const { TracingLive } = await import("./observability/tracing.js")

const ServerLive = Layer.unwrapEffect(Effect.map(AppConfig, (c) => drainableServerLayer({ port: c.port, host: c.host })))
// Built after the app, so released before it: the drain runs while the handler still answers.
const DrainLive = Layer.unwrapEffect(Effect.map(AppConfig, (c) => DrainOnShutdown(Duration.seconds(c.shutdownGraceSeconds))))

DrainLive.pipe(
  Layer.provide(HttpAppLive.pipe(HttpServer.withLogAddress, Layer.provideMerge(ServerLive))),
  Layer.provide(AppLive),
  Layer.provide(TracingLive(SERVICE_NAME)),
  Layer.launch,
  Effect.tapErrorCause(logStopReason("api")),
  Effect.provide(LoggingLive),
  NodeRuntime.runMain({ disablePrettyLogger: true, disableErrorReporting: true })
)
