// The pg pool behind the PgClient, made here so that it can be measured: @effect/sql-pg's PgClient
// keeps its pool to itself, so the pool is built as PgClient.make builds it (same options, the same
// start-up check and shutdown) and handed over with PgClient.layerFromPool; each live pool is
// listed for the /metrics scrape (connections in use, idle, waiting).
import * as SqlError from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import pg from "pg"

import { poolConnectionsIdle, poolConnectionsInUse, poolConnectionsMax, poolWaiting, update } from "./metrics.js"

/** The live pools of this process, by application name (what the metrics label them with). */
const livePools = new Map<pg.Pool, string>()

export interface PoolOptions {
  readonly url: Redacted.Redacted<string>
  readonly applicationName: string
  readonly maxConnections: number
}

/** A pool as PgClient.make makes it: checked with `SELECT 1` within 5 s, ended within 1 s on release. */
const acquirePool = (options: PoolOptions) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const pool = new pg.Pool({
        connectionString: Redacted.value(options.url),
        max: options.maxConnections,
        application_name: options.applicationName
      })
      // An idle connection that the server drops is replaced on the next checkout; the error itself
      // would otherwise crash the process.
      pool.on("error", () => {})
      yield* Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError.SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({
          duration: "5 seconds",
          onTimeout: () => new SqlError.SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
        }),
        Effect.tapError(() => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(1000)))
      )
      livePools.set(pool, options.applicationName)
      return pool
    }),
    (pool) =>
      Effect.suspend(() => {
        livePools.delete(pool)
        return Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
      })
  )

/** A PgClient (and SqlClient) over a measured pool. */
export const measuredPgClientLayer = (options: PoolOptions) =>
  PgClient.layerFromPool({ acquire: acquirePool(options), applicationName: options.applicationName })

/** Sets the pool gauges from every live pool of the process, summed per application name. */
export const refreshPoolGauges: Effect.Effect<void> = Effect.suspend(() => {
  const byName = new Map<string, { inUse: number; idle: number; waiting: number; max: number }>()
  for (const [pool, name] of livePools) {
    const sum = byName.get(name) ?? { inUse: 0, idle: 0, waiting: 0, max: 0 }
    sum.inUse += pool.totalCount - pool.idleCount
    sum.idle += pool.idleCount
    sum.waiting += pool.waitingCount
    sum.max += pool.options.max
    byName.set(name, sum)
  }
  return Effect.forEach(byName, ([name, sum]) =>
    Effect.all([
      update(poolConnectionsInUse, { pool: name }, sum.inUse),
      update(poolConnectionsIdle, { pool: name }, sum.idle),
      update(poolWaiting, { pool: name }, sum.waiting),
      update(poolConnectionsMax, { pool: name }, sum.max)
    ], { discard: true }), { discard: true })
})
