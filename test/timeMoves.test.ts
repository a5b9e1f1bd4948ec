// The daemon's time-driven moves as real processes (DECISIONS §5, §7): with two daemons running,
// activities move registering → ongoing → ended and memberships active → expired when their time
// comes, without any request touching them, and each expiry is recorded by exactly one event.

import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import * as Scopes from "../src/domain/scope.js"
import { formatTimestamp } from "../src/domain/time.js"
import { UsersRepo } from "../src/repos/UsersRepo.js"
import { Activities } from "../src/services/Activities.js"
import { Companies } from "../src/services/Companies.js"
import { Memberships } from "../src/services/Memberships.js"
import { withDatabase } from "../src/sql/urls.js"
import { databaseAdminUrl } from "./support/cluster.js"
import { eventually } from "./support/eventually.js"
import { testAppLayer } from "./support/harness.js"
import { startDaemon } from "./support/processes.js"

const at = (seconds: number) => formatTimestamp(new Date(Date.now() + seconds * 1000), "Asia/Shanghai")

layer(testAppLayer(), { timeout: 120_000 })("time-driven moves by daemon processes", (it) => {
  it.effect(
    "records whose time passes change within seconds with no request touching them; two daemons record each expiry once",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [{ db }] = yield* sql<{ db: string }>`SELECT current_database() AS db`
        const env = {
          DATABASE_URL: withDatabase(databaseAdminUrl(), db),
          SECRET_KEY: "ab".repeat(32),
          TIME_MOVES_INTERVAL_SECONDS: "0.5",
          // Beats often, so that the test sees the daemons' passes in their heartbeats.
          DAEMON_HEARTBEAT_SECONDS: "0.5"
        }
        const company = yield* Effect.orDie(Effect.flatMap(Companies, (c) => c.create({ name: "时间婚介" })))
        const activities = yield* Activities
        const opened = (start: number, end: number) =>
          Effect.orDie(Effect.gen(function*() {
            const a = yield* activities.create(Scopes.all, {
              title: "定时活动",
              address: "某地",
              start_time: at(start),
              end_time: at(end),
              company_id: company.id
            })
            yield* activities.operate(a.id, "approve")
            yield* activities.operate(a.id, "open")
            return a.id
          }))
        // One whose window passed before any daemon ran, one that starts and ends while they run.
        const past = yield* opened(-7200, -3600)
        const soon = yield* opened(3, 5)
        const user = yield* Effect.orDie(
          Effect.flatMap(UsersRepo, (u) => u.insert({ name: "到期用户", phone: null, work_wechat_id: null }))
        )
        const memberships = yield* Memberships
        const lapsed = yield* Effect.orDie(memberships.createOrRenew(Scopes.all, { user_id: user.id, plan_id: 1 }))
        const lapsing = yield* Effect.orDie(memberships.createOrRenew(Scopes.all, { user_id: user.id, plan_id: 2 }))
        yield* sql`UPDATE memberships SET expire_at = now() - interval '1 hour' WHERE id = ${lapsed.id}`
        yield* sql`UPDATE memberships SET expire_at = now() + interval '3 seconds' WHERE id = ${lapsing.id}`

        yield* startDaemon(env)
        yield* startDaemon(env)

        const state = Effect.map(
          sql<{ kind: string; id: number; status: string }>`
          SELECT 'activity' AS kind, id::int AS id, status FROM activities WHERE id IN (${past}, ${soon})
          UNION ALL SELECT 'membership', id::int, status FROM memberships WHERE id IN (${lapsed.id}, ${lapsing.id})`,
          (rows) => new Map(rows.map((r) => [`${r.kind} ${r.id}`, r.status]))
        )
        const now = yield* eventually(
          "every record moved",
          state,
          (now) => [...now.values()].every((s) => s === "ended" || s === "expired")
        )
        expect(Object.fromEntries(now)).toEqual({
          [`activity ${past}`]: "ended",
          [`activity ${soon}`]: "ended",
          [`membership ${lapsed.id}`]: "expired",
          [`membership ${lapsing.id}`]: "expired"
        })
        // Both daemons run two more passes each (as their heartbeats tell): still one event per
        // expired membership.
        const passes = Effect.map(
          sql<{ instance_id: string; runs: number }>`SELECT instance_id, coalesce((jobs->'time-moves'->>'runs')::int, 0) AS runs
          FROM daemon_heartbeats WHERE stopped_at IS NULL`,
          (rows) => new Map(rows.map((r) => [r.instance_id, r.runs]))
        )
        const seen = yield* eventually("both daemons' heartbeats", passes, (p) => p.size === 2)
        yield* eventually(
          "two more passes of each daemon",
          passes,
          (p) => [...seen].every(([id, runs]) => (p.get(id) ?? 0) >= runs + 2)
        )
        const events = yield* sql<{ id: number }>`
        SELECT (data->>'id')::int AS id FROM events WHERE type = 'membership.expired' ORDER BY id`
        expect(events.map((e) => e.id).sort((a, b) => a - b)).toEqual([lapsed.id, lapsing.id].sort((a, b) => a - b))
      }),
    { timeout: 90_000 }
  )
})
