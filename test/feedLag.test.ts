// The events feed never stalls silently (docs/operator.md "The events feed's lag"): a transaction
// left open that has written holds back every event committed after it began, and /metrics says
// so: the oldest open transaction's age and the events waiting behind it; once it ends, the events
// are listed and nothing waits.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import { OutboxRepo } from "../src/repos/OutboxRepo.js"
import { Transaction } from "../src/repos/sqlHelpers.js"
import { eventually } from "./support/eventually.js"
import { TestServer, testServerLayer } from "./support/harness.js"
import { scrape, valueOf } from "./support/prometheus.js"

const emit = (data: Record<string, unknown>) =>
  Effect.gen(function*() {
    const tx = yield* Transaction
    const outbox = yield* OutboxRepo
    return yield* Effect.orDie(tx.run(outbox.record("guest.created", "open:guest:read", data)))
  })

const lag = (baseUrl: string) =>
  Effect.map(scrape(baseUrl), ({ samples }) => ({
    age: valueOf(samples, "events_feed_oldest_transaction_seconds"),
    waiting: valueOf(samples, "events_feed_waiting_events")
  }))

layer(testServerLayer())("the events feed's lag", (it) => {
  it.effect(
    "a transaction left open that has written shows in /metrics: its age grows and the events committed after it wait; once it ends none waits",
    () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        yield* Effect.scoped(Effect.gen(function*() {
          // Another session opens a transaction and writes (it takes a transaction id), then stays open.
          const holder = yield* sql.reserve
          yield* holder.executeRaw("BEGIN", [])
          yield* holder.executeRaw("SELECT pg_current_xact_id()::text", [])
          const opened = performance.now()
          // Three events commit after it began: the feed may not list them while it is open.
          for (let i = 0; i < 3; i++) yield* emit({ i })
          const held = yield* eventually("the holder's age to pass 1 s", lag(baseUrl), (l) => l.age >= 1)
          // Older transactions elsewhere in the cluster can only make the oldest older.
          expect(held.age).toBeGreaterThanOrEqual(1)
          expect(held.waiting).toBe(3)
          // Not a made-up age: the holder's own began less than the time since we opened it.
          const [{ own }] = yield* sql<{ own: number }>`SELECT extract(epoch FROM clock_timestamp() - xact_start)::float8 AS own
            FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()
            ORDER BY xact_start LIMIT 1`
          expect(own).toBeGreaterThanOrEqual(1)
          expect(held.age).toBeGreaterThanOrEqual(Math.min(own, (performance.now() - opened) / 1000) - 1)
          yield* holder.executeRaw("ROLLBACK", [])
        }))
        // The holder is gone: as soon as no transaction older than the three events is open, none waits.
        const settled = yield* eventually("no event to wait", lag(baseUrl), (l) => l.waiting === 0)
        expect(settled.waiting).toBe(0)
        const listed = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM events
          WHERE tx_id < pg_snapshot_xmin(pg_current_snapshot()) AND type = 'guest.created' AND data ? 'i'`
        expect(listed[0]!.n).toBe(3)
      })
  )
})
