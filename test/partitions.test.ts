// Retention by partition (issue 38): the daemon's partition job, on its clock, creates the events
// outbox's partitions ahead and drops the ones past EVENTS_RETENTION_DAYS (with their deliveries
// and attempts) once no delivery of theirs is pending; the feed's cursor and order are unaffected;
// two daemons at once neither fail nor drop twice; an insert no partition covers yet still
// succeeds. Partitions of a day here (EVENTS_PARTITION_DAYS=1), on days far from the migration's weeks.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as TestClock from "effect/testing/TestClock"

import { maintainPartitionsOnce, type PartitionPass } from "../jobs/Partitions.js"
import { DAY_MS, partitionName } from "../src/domain/partitions.js"
import { newEventId } from "../src/repos/OutboxRepo.js"
import { Clients } from "../src/services/Clients.js"
import { signedClient, TestServer, testServerLayer } from "./support/harness.js"
import { partitionsOf } from "./support/partitions.js"
import { rawRequest } from "./support/raw.js"

type Api = Effect.Success<ReturnType<typeof signedClient>>["client"]

const RETENTION_DAYS = 60
const TABLES = ["events", "webhook_deliveries", "webhook_attempts"] as const

/** UTC midnight of the day holding `ms`. */
const dayOf = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS

/** The day `n` days from today (UTC midnight). */
const day = (n: number) => dayOf(Date.now()) + n * DAY_MS

/** One pass of the partition job with the clock at `ms`; the clock back at the real time after it (requests are signed with it). */
const passAt = (ms: number) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(ms)
    const passes = yield* Effect.ensuring(maintainPartitionsOnce, TestClock.setTime(Date.now()))
    const pass = passes.find((p) => p.policy === "events")
    expect(pass).toBeDefined()
    return pass!
  })

/** An event recorded at `ms` in a transaction of its own (later statements sort after it in the feed). */
const eventAt = (ms: number, data: Record<string, unknown>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const eventId = newEventId()
    yield* sql`INSERT INTO events (event_id, type, permission, data, created_at)
      VALUES (${eventId}, 'guest.created', 'open:guest:read', ${JSON.stringify(data)}::jsonb, ${new Date(ms)})`
    return eventId
  })

/** The partition holding an event's row. */
const partitionOf = (eventId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ p: string }>`SELECT tableoid::regclass::text AS p FROM events WHERE event_id = ${eventId}`
    return rows.map((r) => r.p)
  })

/** Every event the client can read after `after`, page by page (`pageSize` each). */
const readAll = (client: Api, after: string | undefined, pageSize = 1000) =>
  Effect.gen(function*() {
    const out: Array<string> = []
    let cursor = after
    for (;;) {
      const page = yield* client.events.list({ query: { page_size: pageSize, ...(cursor === undefined ? {} : { after: cursor }) } })
      out.push(...page.list.map((e) => e.id))
      if (page.list.length === 0) return out
      cursor = page.next_after!
    }
  })

const dropped = (pass: PartitionPass) => [...pass.dropped].sort()

// Four days ahead (not the default seven): every pass at a new clock makes each hourly nonce partition of
// its days, one transaction each, and the tests need only the next three days of events.
layer(
  testServerLayer({ rateLimitBurst: 1_000_000, eventsRetentionDays: RETENTION_DAYS, eventsPartitionDays: 1, partitionsAheadDays: 4 }),
  { timeout: 120_000 }
)(
  "retention by partition",
  (it) => {
    it.effect("retention drops a whole day of events with its deliveries and attempts, once none is pending; a cursor into a later day reads on exactly as before", () =>
      Effect.gen(function*() {
        const { client } = yield* signedClient(["open:guest:read"])
        const clients = yield* Clients
        const receiver = yield* Effect.orDie(clients.create({ name: "partitions", permissions: ["open:guest:read"], masking: false }))
        yield* Effect.orDie(clients.webhook(receiver.app_key, { _tag: "Set", url: "http://127.0.0.1:9/hook", events: ["guest.created"] }))
        const start = (yield* client.events.list({ query: { page_size: 1000 } })).next_after ?? undefined

        // The days before today get their partitions from a pass whose clock stands there.
        const created = yield* passAt(day(-20) + 3_600_000)
        for (const table of TABLES) {
          for (const n of [-20, -19, -18]) expect(created.created).toContain(partitionName(table, day(n)))
        }
        // Each partition was made by a transaction of its own (a pass making many never holds the
        // feed back for long): as many creating transactions (pg_class.xmin) as partitions made.
        const [{ made, transactions }] = yield* (yield* SqlClient.SqlClient)<{ made: number; transactions: number }>`
          SELECT count(*)::int AS made, count(DISTINCT xmin::text)::int AS transactions FROM pg_class
          WHERE relname = ANY (${created.created}::text[])`
        expect(made).toBe(created.created.length)
        expect(transactions).toBe(created.created.length)

        const a1 = yield* eventAt(day(-20) + 1_000, { n: "a1" })
        const a2 = yield* eventAt(day(-20) + 2_000, { n: "a2" })
        const b1 = yield* eventAt(day(-19) + 1_000, { n: "b1" })
        const b2 = yield* eventAt(day(-19) + 2_000, { n: "b2" })
        const c1 = yield* eventAt(Date.now(), { n: "c1" })
        expect(yield* partitionOf(a1)).toEqual([partitionName("events", day(-20))])
        expect(yield* partitionOf(b1)).toEqual([partitionName("events", day(-19))])

        const all = yield* readAll(client, start)
        expect(all.filter((id) => [a1, a2, b1, b2, c1].includes(id))).toEqual([a1, a2, b1, b2, c1])
        const afterB1 = yield* readAll(client, b1)
        const pageAfterB1 = yield* client.events.list({ query: { after: b1, page_size: 1 } })
        expect(afterB1.slice(0, 2)).toEqual([b2, c1])

        // Day −20 is past the retention at this clock, day −19 is not; a pending delivery keeps day −20.
        const expiredAt = day(-19) + RETENTION_DAYS * DAY_MS + 3_600_000
        const held = yield* passAt(expiredAt)
        expect(held.dropped).toEqual([])
        expect(held.held.map((h) => h.range.fromMs)).toEqual([day(-20)])
        expect(held.held[0]!.holding).toBe(2)
        expect(yield* readAll(client, start)).toEqual(all)

        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL
          WHERE event_created_at >= ${new Date(day(-20))} AND event_created_at < ${new Date(day(-19))}`
        yield* sql`INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, duration_ms, status_code, worker, event_created_at)
          SELECT id, 1, now(), 3, 200, 'test', event_created_at FROM webhook_deliveries
          WHERE event_created_at >= ${new Date(day(-20))} AND event_created_at < ${new Date(day(-19))}`
        const kept = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_created_at >= ${new Date(
          day(-19)
        )}`

        const pass = yield* passAt(expiredAt)
        // Attempts, then deliveries, then events: the day's partitions of each, nothing else.
        expect(pass.dropped).toEqual(TABLES.toReversed().map((t) => partitionName(t, day(-20))))
        expect(pass.held).toEqual([])
        for (const table of TABLES) {
          const left = yield* partitionsOf(table)
          expect(left).not.toContain(partitionName(table, day(-20)))
          expect(left).toContain(partitionName(table, day(-19)))
          expect(left).toContain(`${table}_default`)
        }
        const gone = yield* sql<{ n: number }>`SELECT (SELECT count(*) FROM events WHERE event_id IN (${a1}, ${a2}))::int
          + (SELECT count(*) FROM webhook_deliveries WHERE event_created_at < ${new Date(day(-19))})::int
          + (SELECT count(*) FROM webhook_attempts WHERE event_created_at < ${new Date(day(-19))})::int AS n`
        expect(gone[0]!.n).toBe(0)
        const still = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_created_at >= ${new Date(
          day(-19)
        )}`
        expect(still[0]!.n).toBe(kept[0]!.n)

        // The reader after b1 reads the same events in the same order, page by page too.
        expect(yield* readAll(client, b1)).toEqual(afterB1)
        expect(yield* client.events.list({ query: { after: b1, page_size: 1 } })).toEqual(pageAfterB1)
        // From the start: the dropped day is gone, the rest in the order it had.
        expect(yield* readAll(client, start)).toEqual(all.filter((id) => id !== a1 && id !== a2))
        // A cursor whose event was dropped is an unknown one, as a pruned event's always was.
        const { baseUrl } = yield* TestServer
        const { credentials } = yield* signedClient(["open:guest:read"])
        const res = yield* rawRequest(baseUrl, { path: "/api/open/v1/events", query: `after=${a2}`, credentials })
        expect(res.status).toBe(400)
        expect(res.json.data.error).toBe("invalid_parameter")
        expect(res.json.data.issues.map((i: { path: string }) => i.path)).toEqual(["after"])

        // A later pass at the same clock finds nothing more to do.
        const again = yield* passAt(expiredAt)
        expect(again.dropped).toEqual([])
        expect(again.created).toEqual([])
      }))

    it.effect("two daemons passing at once neither fail nor drop a partition twice; the expired ones are gone once", () =>
      Effect.gen(function*() {
        // Days −100 to −93 exist (a pass with its clock there), days −100 to −97 are expired at the later clock.
        yield* passAt(day(-100) + 1_000)
        const expired = TABLES.flatMap((t) => [-100, -99, -98, -97].map((n) => partitionName(t, day(n)))).sort()
        for (const table of TABLES) {
          const names = yield* partitionsOf(table)
          for (const name of expired.filter((n) => n.startsWith(`${table}_p`))) expect(names).toContain(name)
        }
        const at = day(-96) + RETENTION_DAYS * DAY_MS + 1_000
        yield* TestClock.setTime(at)
        const [one, two] = yield* Effect.ensuring(
          Effect.all([maintainPartitionsOnce, maintainPartitionsOnce], { concurrency: 2 }),
          TestClock.setTime(Date.now())
        )
        const byOne = one.find((p) => p.policy === "events")!
        const byTwo = two.find((p) => p.policy === "events")!
        const all = [...byOne.dropped, ...byTwo.dropped].sort()
        expect(all.filter((n) => expired.includes(n))).toEqual(expired)
        expect(new Set(all).size).toBe(all.length)
        for (const table of TABLES) {
          const names = yield* partitionsOf(table)
          for (const name of expired) expect(names).not.toContain(name)
        }
        expect(dropped(yield* passAt(at))).toEqual([])
      }))

    it.effect("an insert at a time no partition covers (no daemon ran) succeeds into the DEFAULT partition; the pass that creates its day moves it there", () =>
      Effect.gen(function*() {
        const { client } = yield* signedClient(["open:guest:read"])
        const sql = yield* SqlClient.SqlClient
        const at = day(30) + 12 * 3_600_000
        const far = yield* eventAt(at, { n: "far" })
        expect(yield* partitionOf(far)).toEqual(["events_default"])
        const deliveries = yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM webhook_deliveries_default WHERE event_created_at = ${new Date(at)}`
        // The feed finds its cursor wherever the row is.
        const page = yield* client.events.list({ query: { after: far } })
        expect(page.next_after).toBe(far)

        const pass = yield* passAt(at)
        expect(pass.created).toContain(partitionName("events", day(30)))
        expect(pass.moved).toBe(1 + deliveries[0]!.n)
        expect(yield* partitionOf(far)).toEqual([partitionName("events", day(30))])
        const left = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries_default`
        expect(left[0]!.n).toBe(0)
        expect((yield* client.events.list({ query: { after: far } })).next_after).toBe(far)
      }))
  }
)
