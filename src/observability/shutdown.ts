// Graceful shutdown of an HTTP listener: on SIGTERM (the scope closing) it stops accepting
// connections, lets the requests in flight finish — each answered with `Connection: close`, so
// clients move to another instance — for at most the grace period, and only then lets the layers
// below it (the request handler, the database pool) close. A request still running when the grace
// period ends is cut off, and the log says how many were.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"

import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/** The listener's requests in flight and how to drain them. */
export class ServerDrain extends Context.Service<ServerDrain, {
  readonly server: Server
  /** Responses not yet finished. */
  readonly inFlight: () => number
  /** Stops accepting and waits for the requests in flight, at most `grace`; how many were cut off. */
  readonly drain: (grace: Duration.Input) => Effect.Effect<number>
}>()("Observability/ServerDrain") {}

const makeDrain = (server: Server) => {
  const open = new Set<ServerResponse>()
  let draining = false
  let onIdle: (() => void) | undefined
  const track = (_request: IncomingMessage, response: ServerResponse) => {
    open.add(response)
    if (draining) response.shouldKeepAlive = false
    response.on("close", () => {
      open.delete(response)
      if (open.size === 0) onIdle?.()
    })
  }
  // Registered before the server listens, so that no request escapes the count (a request that
  // expects 100 Continue comes as checkContinue instead of request).
  server.on("request", track)
  server.on("checkContinue", track)

  const idle = Effect.callback<void>((resume) => {
    if (open.size === 0) return resume(Effect.void)
    onIdle = () => resume(Effect.void)
    return Effect.sync(() => {
      onIdle = undefined
    })
  })

  const drain = (grace: Duration.Input) =>
    // eslint-disable-next-line local/generators-once -- runs once per server, when it stops
    Effect.gen(function*() {
      draining = true
      // The answers still to come close their connection rather than keep it for the next request.
      for (const response of open) if (!response.headersSent) response.shouldKeepAlive = false
      const started = Date.now()
      const waiting = open.size
      // Stops listening; idle keep-alive connections are closed at once (Node 19 and later).
      server.close()
      yield* Effect.logInfo("draining: stopped accepting, finishing the requests in flight").pipe(
        Effect.annotateLogs({ in_flight: waiting, grace_seconds: Duration.toSeconds(Duration.fromInputUnsafe(grace)) })
      )
      // Finalizers run uninterruptibly; the wait must be interruptible for the timeout to end it.
      const finished = yield* Effect.timeoutOption(Effect.interruptible(idle), grace)
      const cut = open.size
      if (Option.isNone(finished)) {
        yield* Effect.logWarning("grace period over: cutting off the requests still in flight").pipe(
          Effect.annotateLogs({ cut_off: cut })
        )
      } else {
        yield* Effect.logInfo("drained").pipe(Effect.annotateLogs({ ms: Date.now() - started, finished: waiting }))
      }
      server.closeAllConnections()
      return Option.isNone(finished) ? cut : 0
    })

  return { server, inFlight: () => open.size, drain }
}

/**
 * A Node HTTP server on `port`/`host` (HttpServer for the app; `make` builds it) and its ServerDrain. The drain is
 * not run here: `DrainOnShutdown` runs it, built above the app so that it runs before the app's
 * request handler is removed.
 */
export const drainableServerLayer = <R = never>(
  listen: { readonly port: number; readonly host: string },
  make: Effect.Effect<Server, never, R> = Effect.sync(() => createServer())
) =>
  Layer.unwrap(Effect.map(make, (server) => {
    const drain = makeDrain(server)
    return Layer.merge(NodeHttpServer.layer(() => server, listen), Layer.succeed(ServerDrain, drain))
  }))

/** On release (shutdown), drains the server for at most `grace`. */
export const DrainOnShutdown = (grace: Duration.Input) =>
  Layer.effectDiscard(
    Effect.flatMap(ServerDrain, (server) => Effect.addFinalizer(() => Effect.asVoid(server.drain(grace))))
  )
