// The API process: serves the Open API over HTTP, with /healthz, /readyz and /metrics beside it.
// Reads its configuration from the environment only (`npm start` prepares it: scripts/start.ts).
// Applies pending migrations at start. On SIGTERM it stops accepting, finishes the requests in
// flight (at most SHUTDOWN_GRACE_SECONDS), then closes the database pool.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"

import { cardParserConfig } from "./card/CardParser.js"
import { AppConfig, appConfig } from "./Config.js"
import { nextStepsLine } from "./http/docs.js"
import { HttpAppLive } from "./http/Server.js"
import { makeApiServer } from "./http/Transport.js"
import { ApiAppLive } from "./Layers.js"
import { drainableServerLayer, DrainOnShutdown } from "./observability/shutdown.js"
import { tracingConfig, TracingLive } from "./observability/tracing.js"
import { runProcess } from "./runProcess.js"

const SERVICE_NAME = "matchmaking-open-api"

const ServerLive = Layer.unwrap(Effect.map(AppConfig, (c) => drainableServerLayer({ port: c.port, host: c.host }, makeApiServer)))
// Built after the app, so released before it: the drain runs while the handler still answers.
const DrainLive = Layer.unwrap(Effect.map(AppConfig, (c) => DrainOnShutdown(Duration.seconds(c.shutdownGraceSeconds))))

// Once it serves (as HttpServer.withLogAddress): the address, then where a person goes next (the
// docs page, a client to sign with).
const ServingLive = Layer.effectDiscard(
  HttpServer.addressFormattedWith((url) => Effect.andThen(Effect.log(`Listening on ${url}`), Effect.log(nextStepsLine(url))))
).pipe(Layer.provideMerge(HttpAppLive))

const ApiProcess = DrainLive.pipe(
  Layer.provide(ServingLive.pipe(Layer.provideMerge(ServerLive))),
  Layer.provide(ApiAppLive),
  Layer.provide(TracingLive(SERVICE_NAME))
)

// Every setting is checked before anything starts, so a bad or missing value is one clear line.
runProcess("api", [appConfig, cardParserConfig, tracingConfig(SERVICE_NAME)], ApiProcess)
