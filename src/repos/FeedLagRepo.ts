// How far the events feed lags behind what has committed (docs/events.md): the feed lists only the
// events of transactions older than every transaction still running (EventsRepo's settled rule), so
// one long open transaction anywhere in the cluster holds back every event committed after it
// began. Read at each /metrics scrape.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { sqlEdge } from "./sqlHelpers.js"

export const FeedLag = Schema.Struct({
  /**
   * Seconds since the oldest transaction that holds the feed back began: the oldest one still open
   * that has written (an xid of its own: a read-only transaction holds nothing back), or a prepared
   * transaction; 0 when there is none. Sessions of other roles are seen with pg_read_all_stats.
   */
  oldest_transaction_seconds: Schema.Number,
  /** Committed events the feed does not list yet: at or after the oldest running transaction's id. */
  events_waiting: Schema.Number
})
export type FeedLag = typeof FeedLag.Type

export class FeedLagRepo extends Context.Service<FeedLagRepo>()("Events/FeedLagRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const read = SqlSchema.findOne({
      Request: Schema.Void,
      Result: FeedLag,
      execute: () =>
        sql`SELECT COALESCE(extract(epoch FROM clock_timestamp() - (
                 SELECT min(began) FROM (
                   SELECT xact_start AS began FROM pg_stat_activity
                    WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()
                   UNION ALL
                   SELECT prepared FROM pg_prepared_xacts) open)), 0)::float8 AS oldest_transaction_seconds,
               (SELECT count(*) FROM events WHERE tx_id >= pg_snapshot_xmin(pg_current_snapshot()))::float8 AS events_waiting`
    })
    return { read: sqlEdge(read(undefined)) }
  })
}) {
  static readonly layer = Layer.effect(FeedLagRepo, FeedLagRepo.make)
}
