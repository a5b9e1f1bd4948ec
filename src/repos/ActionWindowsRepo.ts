// The windows of the self-service limits (DECISIONS §13, migration 0019): one row per client and
// action, shared by every API instance. A hit is one statement, so two instances counting hits
// of one client at once take turns on the row.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import type { ActionWindow, LimitedAction } from "../domain/actionLimits.js"
import type { DatabaseUnavailable } from "../domain/errors.js"
import { sqlEdge } from "./sqlHelpers.js"

const HitRequest = Schema.Struct({
  clientId: Schema.Int,
  action: Schema.String,
  nowMs: Schema.Number,
  windowMs: Schema.Number
})

const WindowRow = Schema.Struct({ window_start_ms: Schema.Number, hits: Schema.Int })

export class ActionWindowsRepo extends Context.Service<ActionWindowsRepo>()("Limits/ActionWindowsRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // A window that has ended gives way to one starting now, with this hit; otherwise the hit is
    // counted in the current one. Inside a transaction the row stays locked until it ends, so a
    // hit that the caller refuses (or whose request fails) can be rolled back with it.
    const hit = SqlSchema.findOne({
      Request: HitRequest,
      Result: WindowRow,
      execute: (r) =>
        sql`INSERT INTO action_windows AS w (client_id, action, window_start_ms, hits)
          VALUES (${r.clientId}, ${r.action}, ${r.nowMs}, 1)
          ON CONFLICT (client_id, action) DO UPDATE SET
            window_start_ms = CASE WHEN w.window_start_ms <= ${r.nowMs} - ${r.windowMs} THEN ${r.nowMs} ELSE w.window_start_ms END,
            hits = CASE WHEN w.window_start_ms <= ${r.nowMs} - ${r.windowMs} THEN 1 ELSE w.hits + 1 END
          RETURNING window_start_ms::float8 AS window_start_ms, hits`
    })

    return {
      /** Counts a hit of the client's action at `nowMs`: the window it fell in, this hit included. */
      hit: (clientId: number, action: LimitedAction, nowMs: number, windowMs: number): Effect.Effect<ActionWindow, DatabaseUnavailable> =>
        sqlEdge(Effect.map(hit({ clientId, action, nowMs, windowMs }), (row) => ({ windowStartMs: row.window_start_ms, hits: row.hits })))
    } as const
  })
}) {
  static readonly layer = Layer.effect(ActionWindowsRepo, ActionWindowsRepo.make)
}
