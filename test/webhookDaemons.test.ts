// Webhook delivery by real daemon processes (`jobs/main.ts`), with the polling backstop turned
// off so that LISTEN/NOTIFY alone wakes them: two daemons never make the same attempt twice, a
// daemon stopped mid-attempt gives the delivery back, and guest.card_created reaches a receiver
// (verified by the reference library) when the card task finishes, survives the receiver's
// outage through redelivery, and can be read from the events feed instead.
import type { ChildProcess } from "node:child_process"
import { readFileSync } from "node:fs"

import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import type { EventType } from "../schema/Events.js"
import { ALL_PERMISSIONS } from "../schema/Permissions.js"
import { runAdmin } from "../src/admin/commands.js"
import { OutboxRepo } from "../src/repos/OutboxRepo.js"
import { Transaction } from "../src/repos/sqlHelpers.js"
import { WEBHOOK_CHANNEL } from "../src/repos/WebhooksRepo.js"
import { Clients } from "../src/services/Clients.js"
import { withDatabase } from "../src/sql/urls.js"
import { fakeAnthropic, messageWithText } from "./card/fakeAnthropic.js"
import { databaseAdminUrl } from "./support/cluster.js"
import { eventually } from "./support/eventually.js"
import { cardForm } from "./support/forms.js"
import { signedClient, testServerLayer } from "./support/harness.js"
import { startDaemon } from "./support/processes.js"
import { makeReceiver, sleep, verify } from "./support/receiver.js"

const PNG = new Uint8Array(readFileSync(new URL("./fixtures/cards/card-clean.png", import.meta.url)))
const ANSWER = JSON.stringify({
  name: "周芷若",
  gender: "female",
  age: 28,
  height: 165,
  education: "硕士",
  occupation: "医生",
  incomeAmount: 300000,
  reqIncomeAmount: null,
  selfIntro: null,
  requirement: null,
  requirementTags: null,
  weight: null,
  maritalStatus: "未婚",
  nativePlace: "长沙",
  phone: null,
  workplace: null,
  confidence: "high"
})

const stopped = (child: ChildProcess) =>
  Effect.callback<number | null>((resume) => {
    if (child.exitCode !== null) return resume(Effect.succeed(child.exitCode))
    child.on("exit", (code) => resume(Effect.succeed(code)))
  })

const emit = (data: Record<string, unknown>, type: EventType = "guest.created") =>
  Effect.gen(function*() {
    const tx = yield* Transaction
    const outbox = yield* OutboxRepo
    return yield* Effect.orDie(tx.run(outbox.record(type, "open:guest:read", data)))
  })

const subscribe = (appKey: string, url: string, events: ReadonlyArray<EventType>) =>
  Effect.gen(function*() {
    const clients = yield* Clients
    const hook = yield* Effect.orDie(clients.webhook(appKey, { _tag: "Set", url, events }))
    return ("signing_secret" in hook ? hook.signing_secret : undefined) ?? ""
  })

const newSubscriber = (url: string, events: ReadonlyArray<EventType> = ["guest.created"]) =>
  Effect.gen(function*() {
    const clients = yield* Clients
    const created = yield* Effect.orDie(clients.create({ name: "daemon-hook", permissions: ALL_PERMISSIONS, masking: false }))
    return { appKey: created.app_key, secret: yield* subscribe(created.app_key, url, events) }
  })

layer(testServerLayer({ rateLimitBurst: 1_000_000 }), { timeout: 180_000 })("webhook daemons as processes", (it) => {
  const daemonEnv = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [{ db }] = yield* sql<{ db: string }>`SELECT current_database() AS db`
    return {
      DATABASE_URL: withDatabase(databaseAdminUrl(), db),
      SECRET_KEY: "ab".repeat(32),
      // Only LISTEN/NOTIFY (and the next due retry) wakes the runners.
      WEBHOOK_POLL_SECONDS: "3600",
      CARD_TASK_POLL_SECONDS: "3600",
      WEBHOOK_RETRY_SCHEDULE: "200ms,200ms",
      CARD_OCR_POOL_SIZE: "1",
      // The receivers listen on loopback.
      WEBHOOK_ALLOWED_NETWORKS: "127.0.0.0/8"
    }
  })

  it.effect(
    "two daemons on one queue deliver every event to every subscriber exactly once, each in one attempt",
    () =>
      Effect.gen(function*() {
        const env = yield* daemonEnv
        const receiver = yield* makeReceiver
        receiver.reply(() => ({ status: 200, hold: sleep(Math.floor(Math.random() * 20)).pipe(Effect.runPromise) }))
        const subscribers = [
          yield* newSubscriber(`${receiver.url}/a`),
          yield* newSubscriber(`${receiver.url}/b`),
          yield* newSubscriber(`${receiver.url}/c`)
        ]
        // Each daemon's own bound is the limit here, so both take part.
        const both = { ...env, WEBHOOK_CONCURRENCY: "4", WEBHOOK_CLIENT_CONCURRENCY: "50" }
        yield* startDaemon(both)
        yield* startDaemon(both)
        const ids = (yield* Effect.all(
          Array.from({ length: 4 }, (_, w) => Effect.forEach(Array.from({ length: 50 }, (_, i) => i), (i) => emit({ w, i }))),
          { concurrency: "unbounded" }
        )).flat()
        const sql = yield* SqlClient.SqlClient
        const count = sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'succeeded'`.pipe(
          Effect.map((r) => r[0]!.n),
          Effect.orDie
        )
        yield* eventually("every delivery", count, (n) => n >= ids.length * 3, 90_000)
        for (const [i, s] of subscribers.entries()) {
          const got = receiver.received.filter((r) => r.path === `/${"abc"[i]}`)
          expect(got.map((r) => r.headers["webhook-id"]).sort()).toEqual([...ids].sort())
          for (const r of got) verify(s.secret, r)
        }
        const attempts = yield* sql<{ attempts: number; n: number }>`SELECT attempt_count AS attempts, count(*)::int AS n
        FROM webhook_deliveries GROUP BY attempt_count`
        expect(attempts).toEqual([{ attempts: 1, n: ids.length * 3 }])
        // Both daemons took part.
        const workers = yield* sql<{ daemon: string }>`SELECT DISTINCT split_part(worker, ':', 2) AS daemon FROM webhook_attempts`
        expect(workers).toHaveLength(2)
      }),
    { timeout: 150_000 }
  )

  it.effect(
    "a daemon stopped mid-attempt gives the delivery back, and another daemon delivers it with the same webhook-id",
    () =>
      Effect.gen(function*() {
        const env = yield* daemonEnv
        const receiver = yield* makeReceiver
        let release: () => void = () => {}
        const held = new Promise<void>((resolve) => {
          release = resolve
        })
        receiver.reply((_, n) => (n === 1 ? { status: 200, hold: held } : { status: 200 }))
        const hook = yield* newSubscriber(`${receiver.url}/held`)
        const first = yield* startDaemon(env)
        const eventId = yield* emit({ held: true })
        yield* eventually("the first attempt", Effect.sync(() => receiver.received.length), (n) => n === 1)
        first.kill("SIGTERM")
        expect(yield* stopped(first)).toBe(0)
        const sql = yield* SqlClient.SqlClient
        const state = sql<{ status: string; locked_by: string | null; attempt_count: number }>`
        SELECT d.status, d.locked_by, d.attempt_count FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        JOIN clients c ON c.id = d.client_id WHERE e.event_id = ${eventId} AND c.app_key = ${hook.appKey}`.pipe(
          Effect.map((r) => r[0]!),
          Effect.orDie
        )
        expect(yield* state).toEqual({ status: "pending", locked_by: null, attempt_count: 1 })
        release()
        yield* startDaemon(env)
        yield* eventually("the redelivery", state, (s) => s.status === "succeeded")
        const got = receiver.received.filter((r) => r.path === "/held")
        expect(got.map((r) => r.headers["webhook-id"])).toEqual([eventId, eventId])
        verify(hook.secret, got[1]!)
      }),
    { timeout: 120_000 }
  )

  it.effect(
    "a daemon whose LISTEN connection is cut looks again when it reconnects: an event committed meanwhile is delivered without polling",
    () =>
      Effect.gen(function*() {
        const env = yield* daemonEnv
        const receiver = yield* makeReceiver
        receiver.reply(() => ({ status: 200 }))
        yield* newSubscriber(`${receiver.url}/cut`)
        yield* startDaemon(env)
        const sql = yield* SqlClient.SqlClient
        const listenerName = `matchmaking-open-api:${WEBHOOK_CHANNEL}`
        const listeners = sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE application_name = ${listenerName} AND datname = current_database()`.pipe(
          Effect.map((r) => r[0]!.n),
          Effect.orDie
        )
        // Daemons of earlier tests were killed; their connections may linger a moment.
        yield* eventually("one listener", listeners, (n) => n === 1)
        // The event commits right after the cut, before the reconnection: its notification is lost.
        yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE application_name = ${listenerName} AND datname = current_database()`
        const eventId = yield* emit({ cut: true })
        yield* eventually("the delivery after the reconnection", Effect.sync(() => receiver.received.length), (n) => n === 1)
        expect(receiver.received[0]!.headers["webhook-id"]).toBe(eventId)
        yield* eventually("the listener back", listeners, (n) => n === 1)
      }),
    { timeout: 120_000 }
  )

  it.effect(
    "guest.card_created reaches the receiver when the card task finishes, survives an outage, and is in the events feed",
    () =>
      Effect.gen(function*() {
        const base = yield* daemonEnv
        const fake = yield* fakeAnthropic
        fake.reply(() => ({ status: 200, body: messageWithText(ANSWER) }))
        const env = { ...base, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.baseURL, CARD_AI_TIMEOUT_MS: "60000" }
        const receiver = yield* makeReceiver
        let down = false
        receiver.reply(() => ({ status: down ? 503 : 200 }))
        const { client, credentials } = yield* signedClient()
        const secret = yield* subscribe(credentials.appKey, `${receiver.url}/cards`, ["guest.card_created"])
        const company = yield* client.companies.create({ payload: { name: "卡片推送婚介" } })
        const matchmaker = yield* client.matchmakers.create({ payload: { name: "卡片红娘", company_id: company.id } })
        yield* startDaemon(env)
        const sql = yield* SqlClient.SqlClient

        const upload = (tag: string) =>
          Effect.gen(function*() {
            const image = new Uint8Array([...PNG, ...new TextEncoder().encode(`webhook-card-${tag}-${Date.now()}`)])
            const accepted = yield* client.guests.createFromCard({ payload: cardForm(image, { matchmaker_id: String(matchmaker.id) }) })
            const taskId = (accepted as { task_id: string }).task_id
            const done = yield* eventually(
              `card task ${taskId}`,
              client.guests.cardTask({ params: { task_id: taskId } }).pipe(Effect.orDie),
              (t) => t.status === "done" || t.status === "failed",
              60_000
            )
            expect(done.status).toBe("done")
            return { taskId, guestId: done.result!.guest_id! }
          })

        // Up: delivered as the task finishes.
        const one = yield* upload("up")
        const [r] = yield* eventually("guest.card_created", Effect.sync(() => receiver.received), (l) => l.length === 1)
        const payload = verify(secret, r!) as { id: string; type: string; data: Record<string, unknown> }
        expect(payload).toMatchObject({ type: "guest.card_created", data: { task_id: one.taskId, guest_id: one.guestId, name: "周芷若" } })
        // How long after the task's commit the receiver had it (reported, not asserted: see npm run bench).
        const [{ done_ms }] = yield* sql<{ done_ms: number }>`
        SELECT (extract(epoch FROM completed_at) * 1000)::float8 AS done_ms FROM card_tasks WHERE task_id = ${one.taskId}`
        console.log(`guest.card_created reached the receiver ${Math.round(r!.at - done_ms)} ms after the card task committed`)

        // Down: the retries are used up; the event waits in the feed and for the operator.
        down = true
        const two = yield* upload("down")
        const failed = yield* eventually(
          "the failed delivery",
          sql<{ id: number; status: string }>`SELECT d.id::int AS id, d.status FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
          WHERE e.type = 'guest.card_created' AND (e.data->>'task_id') = ${two.taskId}`.pipe(Effect.orDie),
          (rows) => rows[0]?.status === "failed",
          90_000
        )
        const feed = yield* client.events.list({ query: { types: ["guest.card_created"] } })
        const fromFeed = feed.list.find((e) => e.data.task_id === two.taskId)!
        expect(fromFeed).toMatchObject({ type: "guest.card_created", data: { guest_id: two.guestId } })

        // Back up: the operator redelivers; the receiver gets the same event, same id, as the feed shows it.
        down = false
        const before = receiver.received.length
        yield* Effect.orDie(runAdmin(["webhooks", "redeliver", String(failed[0]!.id)]))
        const after = yield* eventually("the redelivery", Effect.sync(() => receiver.received.slice(before)), (l) => l.length === 1)
        const redelivered = verify(secret, after[0]!)
        expect(after[0]!.headers["webhook-id"]).toBe(fromFeed.id)
        expect(redelivered).toEqual(fromFeed)
      }),
    { timeout: 300_000 }
  )
})
