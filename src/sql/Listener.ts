// A LISTEN connection that knows when it can be trusted: it reports every (re)connection and every
// loss, checks itself with a ping, and reconnects on its own. It keeps a `pg` connection of its own
// on real timers: @effect/sql-pg's `listen` fails its queue on a loss but neither pings nor
// reconnects, and a loop over it would run on Effect's Clock, which a test clock stalls.
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import pg from "pg"

import { DatabaseUrl } from "./Sql.js"

export interface ListenerHandlers {
  /** A notification on the channel (payloads may be empty). */
  readonly onMessage: (payload: string) => void
  /** The connection listens now; nothing sent before this moment was seen. */
  readonly onLive: () => void
  /** The connection is lost or broken: notifications may be missed until the next onLive. */
  readonly onLost: () => void
}

export interface ListenerOptions {
  readonly channel: string
  readonly applicationName: string
  /** How often the connection proves itself with `SELECT 1` (a silent network loss). */
  readonly pingMs?: number
  /** Wait before reconnecting after a loss. */
  readonly retryMs?: number
}

/**
 * Listens on `channel` for as long as the scope is open, reconnecting after every loss. Runs on
 * real timers (not Effect's Clock), so a test clock cannot stall it.
 */
export const listen: (
  options: ListenerOptions,
  handlers: ListenerHandlers
) => Effect.Effect<void, never, DatabaseUrl | Scope.Scope> = Effect.fnUntraced(function*(
  options: ListenerOptions,
  handlers: ListenerHandlers
) {
  const url = yield* DatabaseUrl
  const pingMs = options.pingMs ?? 5_000
  const retryMs = options.retryMs ?? 250
  let stopped = false
  let client: pg.Client | undefined
  let timer: NodeJS.Timeout | undefined

  const lost = (which: pg.Client) => {
    if (client !== which) return
    client = undefined
    if (timer !== undefined) clearInterval(timer)
    timer = undefined
    handlers.onLost()
    which.removeAllListeners("notification")
    void which.end().catch(() => {})
    if (!stopped) setTimeout(connect, retryMs).unref()
  }

  const connect = () => {
    if (stopped) return
    const c = new pg.Client({
      connectionString: Redacted.value(url),
      application_name: options.applicationName,
      keepAlive: true,
      connectionTimeoutMillis: 5_000
    })
    client = c
    c.on("error", () => lost(c))
    c.on("end", () => lost(c))
    c.on("notification", (msg) => {
      if (msg.channel === options.channel) handlers.onMessage(msg.payload ?? "")
    })
    c.connect()
      .then(() => c.query(`LISTEN ${pg.escapeIdentifier(options.channel)}`))
      .then(() => {
        if (client !== c) return
        handlers.onLive()
        timer = setInterval(() => {
          const ping = c.query("SELECT 1")
          const deadline = setTimeout(() => lost(c), Math.max(1_000, pingMs / 2)).unref()
          ping.then(() => clearTimeout(deadline), () => lost(c))
        }, pingMs).unref()
      })
      .catch(() => lost(c))
  }

  yield* Effect.acquireRelease(
    Effect.sync(connect),
    () =>
      Effect.promise(async () => {
        stopped = true
        const c = client
        client = undefined
        if (timer !== undefined) clearInterval(timer)
        if (c !== undefined) await c.end().catch(() => {})
      }).pipe(Effect.timeoutOption(1_000))
  )
})

/**
 * A queue's wake-up line: every notification on `channel`, and every (re)connection of the
 * listener, offers to `wake` (a connection that comes back may have missed notifications, so the
 * worker looks once more). Returns once the first LISTEN is in place, so that a daemon that says it
 * is ready misses nothing committed after that; if that takes longer than `readyWithinMs` it says so
 * and goes on, its polling backstop covering the gap.
 */
export const wakeOn: (
  channel: string,
  wake: Queue.Enqueue<void>,
  readyWithinMs?: number
) => Effect.Effect<void, never, DatabaseUrl | Scope.Scope> = Effect.fnUntraced(function*(
  channel: string,
  wake: Queue.Enqueue<void>,
  readyWithinMs = 10_000
) {
  const live = yield* Deferred.make<void>()
  // The warning is logged from pg's callbacks, with this context (until the scope closes).
  const run = yield* FiberSet.makeRuntime()
  let warned = false
  yield* listen({ channel, applicationName: `matchmaking-open-api:${channel}` }, {
    onMessage: () => void Queue.offerUnsafe(wake, undefined),
    onLive: () => {
      warned = false
      Deferred.doneUnsafe(live, Exit.void)
      Queue.offerUnsafe(wake, undefined)
    },
    onLost: () => {
      if (warned) return
      warned = true
      run(Effect.logWarning(`LISTEN ${channel} lost; reconnecting (polling covers the gap)`))
    }
  })
  const ready = yield* Deferred.await(live).pipe(Effect.timeoutOption(readyWithinMs))
  if (ready._tag === "None") {
    yield* Effect.logWarning(`LISTEN ${channel} not in place after ${readyWithinMs} ms; relying on polling meanwhile`)
  }
})
