// The last event of a record shows what committed (DECISIONS §12, docs/events.md), with two
// transactions changing one record's derived count in the order that used to leave the feed's last
// event stale: the transaction that took its xid first (the feed sorts by it) commits its change
// last. Each interleaving is forced with latches, not hoped for.
import { expect, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as SqlClient from "effect/sql/SqlClient"

import type { EventType } from "../schema/Events.js"
import { Transaction } from "../src/repos/sqlHelpers.js"
import { Guests } from "../src/services/Guests.js"
import { Users } from "../src/services/Users.js"
import { eventually } from "./support/eventually.js"
import { signedClient, testServerLayer } from "./support/harness.js"

type Api = Effect.Success<ReturnType<typeof signedClient>>["client"]

/** The `data` of every event of these types about record `id`, in feed order. */
const eventsOf = (client: Api, types: ReadonlyArray<EventType>, id: number) =>
  Effect.gen(function*() {
    const out: Array<Record<string, unknown>> = []
    let after: string | undefined
    for (;;) {
      const page = yield* client.events.list({ query: { page_size: 1000, types: [...types], ...(after === undefined ? {} : { after }) } })
      out.push(...page.list.filter((e) => e.data.id === id).map((e) => e.data))
      if (page.list.length === 0) return out
      after = page.next_after!
    }
  })

/**
 * A transaction that takes its xid at once (as an Idempotency-Key claim does, before the change),
 * waits for `go`, then runs `change` in it; `started` is done once the xid is taken.
 */
const olderTransaction = <A, E, R>(started: Deferred.Deferred<void>, go: Deferred.Deferred<void>, change: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tx = yield* Transaction
    return yield* Effect.forkChild(Effect.orDie(tx.run(Effect.gen(function*() {
      // As text: the driver does not answer a bare xid8 column.
      yield* sql`SELECT pg_current_xact_id()::text AS xid`
      yield* Deferred.succeed(started, undefined)
      yield* Deferred.await(go)
      return yield* change
    }))))
  })

layer(testServerLayer({ rateLimitBurst: 1_000_000 }), { timeout: 60_000 })("event order", (it) => {
  it.effect("a record's last event carries the count that committed when the older transaction commits its change last", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const guests = yield* Guests
      const company = yield* client.companies.create({ payload: { name: "次序婚介" } })
      const matchmaker = yield* client.matchmakers.create({ payload: { name: "次序红娘", company_id: company.id } })
      const guest = { name: "次序嘉宾", gender: "female" as const, company_id: company.id, matchmaker_id: matchmaker.id }

      const started = yield* Deferred.make<void>()
      const go = yield* Deferred.make<void>()
      const older = yield* olderTransaction(started, go, guests.insertNew(guest))
      yield* Deferred.await(started)
      // The younger transaction adds a guest to the matchmaker and commits (guest_count 1) ...
      yield* client.guests.create({ payload: guest })
      // ... then the older one adds another (guest_count 2) and commits last.
      yield* Deferred.succeed(go, undefined)
      yield* Fiber.join(older)

      const committed = yield* client.matchmakers.get({ params: { id: matchmaker.id } })
      expect(committed.guest_count).toBe(2)
      const events = yield* eventsOf(client, ["matchmaker.updated"], matchmaker.id)
      expect(events.map((e) => e.guest_count)).toEqual([1, 2])
      expect(events.at(-1)).toMatchObject({ guest_count: 2, updated_at: committed.updated_at })
    }))

  it.effect(
    "two users bound to one work account at once: the second waits for the first's commit and its event, last in the feed, counts both",
    () =>
      Effect.gen(function*() {
        const { client } = yield* signedClient()
        const users = yield* Users
        const sql = yield* SqlClient.SqlClient
        const tx = yield* Transaction
        const account = yield* client.workWechats.create({ payload: { wechat_number: "order_wx_1", phone: "13800000001" } })

        // The older transaction takes its xid, then waits while the younger one binds a user and
        // holds its transaction open.
        const olderStarted = yield* Deferred.make<void>()
        const go = yield* Deferred.make<void>()
        const older = yield* olderTransaction(
          olderStarted,
          go,
          users.create({ name: "先开始", phone: null, work_wechat_id: account.id })
        )
        yield* Deferred.await(olderStarted)
        const bound = yield* Deferred.make<void>()
        const commit = yield* Deferred.make<void>()
        const younger = yield* Effect.forkChild(Effect.orDie(tx.run(Effect.gen(function*() {
          yield* users.create({ name: "后开始", phone: null, work_wechat_id: account.id })
          yield* Deferred.succeed(bound, undefined)
          yield* Deferred.await(commit)
        }))))
        yield* Deferred.await(bound)
        // The older transaction binds its user: it waits on the account's row lock.
        yield* Deferred.succeed(go, undefined)
        yield* eventually(
          "the older transaction waiting on the account's lock",
          Effect.orDie(sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM work_wechats%FOR NO KEY UPDATE%'`),
          (rows) => rows[0]!.n === 1
        )
        yield* Deferred.succeed(commit, undefined)
        yield* Fiber.join(younger)
        yield* Fiber.join(older)

        const committed = yield* client.workWechats.get({ params: { id: account.id } })
        expect(committed.user_count).toBe(2)
        const events = yield* eventsOf(client, ["work_wechat.updated"], account.id)
        expect(events.map((e) => e.user_count)).toEqual([1, 2])
      })
  )
})
