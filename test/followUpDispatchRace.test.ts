// The dispatch lock under contention (SPEC §3.1, DECISIONS §5): two API instances, each with its own
// connection pool to one database (as two processes would be), and 32 clients racing to dispatch
// the same tasks at the same moment. Every task ends with exactly one holder, every loser gets 409
// task_locked naming that holder, nothing answers 5xx, and no dispatch ever waits on a lock held by
// a transaction between statements (only on another running statement: no row-lock queues).
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"

import * as Scopes from "../src/domain/scope.js"
import { formatDate } from "../src/domain/time.js"
import { FollowUps } from "../src/services/FollowUps.js"
import { createCredentials, fakeCardParser, sharedTestDatabase, TestServer, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

/** Tasks raced over (the bench runs the same race; see bench/follow-up-dispatch.ts). */
const TASKS = 1000
const CLIENTS = 32
/**
 * Clients per task: the 32 clients form groups of this size, two of each group on each instance; a
 * group asks for each task of its share at the same moment, all groups at once. Every client asking
 * for every task (32,000 requests) takes minutes on two shared cores, so the test races 4 clients
 * per task (4,000 requests); the bench races 8 (npm run bench, bench/follow-up-dispatch.ts).
 */
const RACERS = 4
const NO_LIMIT = { rateLimitRps: 1_000_000, rateLimitBurst: 1_000_000 }

/** This suite's database, and a second API instance over it. */
const shared = sharedTestDatabase(NO_LIMIT)
const secondInstance = shared.anotherInstance

layer(testServerLayer(NO_LIMIT, fakeCardParser, shared.database))("dispatch under contention", (it) => {
  it.effect(
    `${CLIENTS} clients on two API instances race over ${TASKS} tasks: one holder each, every loser 409, no 5xx`,
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const first = yield* TestServer
        const second = Context.get(yield* Layer.build(Layer.fresh(secondInstance)), TestServer)
        const today = formatDate(new Date(yield* Clock.currentTimeMillis), "Asia/Shanghai")

        // 10 plans of 100 days that all lie in the past: the generator creates the 1,000 tasks.
        const [{ company }] = yield* sql<{ company: number }>`INSERT INTO companies (name) VALUES ('竞争婚介') RETURNING id::int AS company`
        const [{ guest }] = yield* sql<{ guest: number }>`INSERT INTO guests (name, gender, company_id)
          VALUES ('竞争嘉宾', 'female', ${company}) RETURNING id::int AS guest`
        const followUps = yield* FollowUps
        for (let i = 0; i < TASKS / 100; i++) {
          yield* followUps.createPlan(Scopes.all, {
            guestId: guest,
            taskType: "recommend",
            days: Array.from({ length: 100 }, (_, d) => d + 1),
            startDate: formatDate(new Date(Date.parse(`${today}T00:00:00Z`) - 99 * 86400_000), "UTC")
          })
        }
        const taskIds = (yield* sql<{ id: number }>`SELECT id::int AS id FROM follow_up_tasks ORDER BY id`).map((r) => r.id)
        expect(taskIds).toHaveLength(TASKS)

        const clients = yield* Effect.all(
          Array.from({ length: CLIENTS }, (_, i) => createCredentials(["open:follow-up:write"], { name: `matcher-${i}` }))
        )

        // Watches the database while the race runs: every lock wait on a task row, and what holds it.
        let racing = true
        const blockers: Array<{ state: string; query: string }> = []
        const watcher = yield* Effect.forkChild(Effect.gen(function*() {
          while (racing) {
            const rows = yield* sql<{ state: string; query: string }>`SELECT b.state, b.query
              FROM pg_stat_activity w
              CROSS JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS bp(pid)
              JOIN pg_stat_activity b ON b.pid = bp.pid
              WHERE w.datname = current_database() AND w.wait_event_type = 'Lock' AND w.query ILIKE '%follow_up_tasks%'`
            blockers.push(...rows)
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
          }
        }))

        // Client c is in group floor(c / RACERS) and takes the tasks of its group's share in order,
        // with the other clients of its group: they ask for the same task at the same moment.
        const groups = CLIENTS / RACERS
        const outcomes = yield* Effect.all(
          clients.map((credentials, c) =>
            Effect.gen(function*() {
              const baseUrl = c % 2 === 0 ? first.baseUrl : second.baseUrl
              const group = Math.floor(c / RACERS)
              const mine: Array<{ task: number; status: number; error?: string; holder?: string }> = []
              for (let t = group; t < taskIds.length; t += groups) {
                const res = yield* rawRequest(baseUrl, {
                  method: "POST",
                  path: `/api/open/v1/follow-up/tasks/${taskIds[t]}/dispatch`,
                  credentials
                })
                mine.push({
                  task: taskIds[t]!,
                  status: res.status,
                  error: res.json?.data?.error,
                  holder: res.json?.data?.dispatched_to
                })
              }
              return { appKey: credentials.appKey, outcomes: mine }
            })
          ),
          { concurrency: "unbounded" }
        )
        racing = false
        yield* Fiber.join(watcher)

        const all = outcomes.flatMap((o) => o.outcomes.map((r) => ({ ...r, caller: o.appKey })))
        expect(all).toHaveLength(TASKS * RACERS)
        expect(all.filter((r) => r.status >= 500)).toEqual([])
        expect(new Set(all.map((r) => r.status))).toEqual(new Set([200, 409]))

        const winners = new Map<number, string>()
        for (const r of all.filter((r) => r.status === 200)) {
          expect(winners.has(r.task), `task ${r.task} dispatched twice`).toBe(false)
          winners.set(r.task, r.caller)
        }
        expect(winners.size).toBe(TASKS)
        // Every loser learns the winner.
        const losers = all.filter((r) => r.status === 409)
        expect(losers).toHaveLength(TASKS * (RACERS - 1))
        for (const r of losers) {
          expect(r.error).toBe("task_locked")
          expect(r.holder).toBe(winners.get(r.task))
        }
        // What the database holds is what the winners were told.
        const held = yield* sql<{ id: number; status: string; dispatched_to: string }>`SELECT id::int AS id, status, dispatched_to
          FROM follow_up_tasks`
        for (const row of held) expect([row.status, row.dispatched_to]).toEqual(["dispatched", winners.get(row.id)])
        // Both instances served winners.
        expect(
          new Set(
            outcomes.filter((o) => o.outcomes.some((r) => r.status === 200)).map((o) => clients.findIndex((c) => c.appKey === o.appKey) % 2)
          )
        )
          .toEqual(new Set([0, 1]))
        // A dispatch waited, if ever, on another dispatch's own short transaction: the lock is taken
        // by the dispatch statement and held only while that transaction writes its event (the
        // record read and the event insert, DECISIONS §12: an event exists iff its change committed),
        // never across a request's other work. So a blocker idle between statements has just run
        // one of those three statements. (A blocker seen "idle" had just finished its statement
        // between the two reads of the sample.)
        const ownStatements = [/^WITH due AS \(/, /^SELECT t\.id::int AS id, t\.plan_id::int AS follow_up_id/, /^INSERT INTO events /]
        expect(
          blockers.filter((b) => b.state.startsWith("idle in transaction") && !ownStatements.some((own) => own.test(b.query.trimStart())))
        ).toEqual([])
      }),
    180_000
  )

  it.effect("a loser does not wait for the holder's later work: while the holder's transaction holds the row, 409 comes at once", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { baseUrl } = yield* TestServer
      const [{ company }] = yield* sql<{ company: number }>`INSERT INTO companies (name) VALUES ('等待婚介') RETURNING id::int AS company`
      const [{ guest }] = yield* sql<{ guest: number }>`INSERT INTO guests (name, gender, company_id)
        VALUES ('等待嘉宾', 'male', ${company}) RETURNING id::int AS guest`
      const { id: planId } = yield* Effect.flatMap(
        FollowUps,
        (f) => f.createPlan(Scopes.all, { guestId: guest, taskType: "revisit", days: [1], startDate: undefined })
      )
      const [{ task }] = yield* sql<{ task: number }>`SELECT id::int AS task FROM follow_up_tasks WHERE plan_id = ${planId}`
      const a = yield* createCredentials(["open:follow-up:write"])
      const b = yield* createCredentials(["open:follow-up:write"])
      const dispatch = (credentials: typeof a) =>
        rawRequest(baseUrl, { method: "POST", path: `/api/open/v1/follow-up/tasks/${task}/dispatch`, credentials })
      expect((yield* dispatch(a)).status).toBe(200)

      // The holder is now in a transaction on the row (as its completion is), not yet committed.
      const holder = yield* sql.reserve
      yield* holder.executeRaw("BEGIN", [])
      yield* holder.executeRaw("UPDATE follow_up_tasks SET updated_at = now() WHERE id = $1", [task])
      // Another client's dispatch answers while that lock is held: it never queued behind it.
      const lost = yield* dispatch(b)
      expect(lost.status).toBe(409)
      expect(lost.json.data).toMatchObject({ error: "task_locked", dispatched_to: a.appKey })
      yield* holder.executeRaw("COMMIT", [])
    }))
})
