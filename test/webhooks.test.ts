// Webhook delivery end to end (DECISIONS §9), with the daemon's dispatcher running in-process
// under the real clock and a local receiver that checks every delivery with the reference
// library (standardwebhooks): signatures (also during a rotation), ids stable across retries, the
// shortened retry schedule, Retry-After, 410, permissions, masking, the timeout, redirects, the
// capped answer, operator recovery, and a slow receiver that holds back no one else.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"

import { WebhookJobsLive } from "../jobs/Webhooks.js"
import type { EventType } from "../schema/Events.js"
import { ALL_PERMISSIONS, type Permission } from "../schema/Permissions.js"
import { runAdmin } from "../src/admin/commands.js"
import type { AppConfigShape } from "../src/Config.js"
import { formatIso } from "../src/domain/time.js"
import { OutboxRepo } from "../src/repos/OutboxRepo.js"
import { Transaction } from "../src/repos/sqlHelpers.js"
import { Clients } from "../src/services/Clients.js"
import { eventually } from "./support/eventually.js"
import { liveAppLayer, serverLayer, signedClient } from "./support/harness.js"
import { backdateDelivery, makeReceiver, type Received, verify } from "./support/receiver.js"

/** The app, an API server and the webhook dispatcher over a private database, on the real clock. */
const liveWebhookLayer = (config: Partial<AppConfigShape>) =>
  Layer.mergeAll(serverLayer, WebhookJobsLive).pipe(
    Layer.provideMerge(liveAppLayer(config)),
    Layer.provideMerge(FetchHttpClient.layer),
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
  )

const run = (...argv: Array<string>) => Effect.orDie(runAdmin(argv))

/** A client whose webhook posts to `url`; its app credentials and the whsec_ signing secret. */
const subscriber = (
  url: string,
  options: { permissions?: ReadonlyArray<Permission>; events?: ReadonlyArray<EventType>; masking?: boolean } = {}
) =>
  Effect.gen(function*() {
    const clients = yield* Clients
    const created = yield* Effect.orDie(
      clients.create({ name: "hook", permissions: options.permissions ?? ALL_PERMISSIONS, masking: options.masking ?? false })
    )
    const hook = yield* Effect.orDie(clients.webhook(created.app_key, { _tag: "Set", url, events: options.events ?? ["guest.created"] }))
    return { appKey: created.app_key, secret: ("signing_secret" in hook ? hook.signing_secret : undefined) ?? "" }
  })

/** Records an event as a change would, in its own transaction; its event id. */
const emit = (data: Record<string, unknown>, type: EventType = "guest.created", permission: Permission = "open:guest:read") =>
  Effect.gen(function*() {
    const tx = yield* Transaction
    const outbox = yield* OutboxRepo
    return yield* Effect.orDie(tx.run(outbox.record(type, permission, data)))
  })

interface DeliveryState {
  readonly id: number
  readonly status: string
  readonly attempts: number
}

const deliveryOf = (appKey: string, eventId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<DeliveryState>`SELECT d.id::int AS id, d.status, d.attempt_count AS attempts FROM webhook_deliveries d
      JOIN clients c ON c.id = d.client_id JOIN events e ON e.id = d.event_id
      WHERE c.app_key = ${appKey} AND e.event_id = ${eventId}`
  ).pipe(Effect.map((rows) => rows[0]), Effect.orDie)

const waitForStatus = (appKey: string, eventId: string, status: string) =>
  eventually(`delivery of ${eventId} ${status}`, deliveryOf(appKey, eventId), (d) => d?.status === status)

interface AttemptRow {
  readonly attempt: number
  readonly status_code: number | null
  readonly error: string | null
  readonly response: string | null
  readonly waited_ms: number | null
}

/** Attempts of a delivery; waited_ms = from the attempt's start to the next attempt it scheduled. */
const attemptsOf = (deliveryId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<AttemptRow>`SELECT attempt, status_code, error, response,
        (extract(epoch FROM next_attempt_at - attempted_at) * 1000)::float8 AS waited_ms
      FROM webhook_attempts WHERE delivery_id = ${deliveryId} ORDER BY attempt`).pipe(Effect.orDie)

const at = (receiver: { received: Array<Received> }, path: string) => receiver.received.filter((r) => r.path === path)

layer(
  liveWebhookLayer({ rateLimitBurst: 1_000_000, webhookRetrySchedule: [300, 300], webhookTimeoutMs: 5000, webhookPollSeconds: 1 }),
  { excludeTestServices: true, timeout: 60_000 }
)("webhook delivery", (it) => {
  it.effect("a guest created through the API reaches the receiver signed as Standard Webhooks, webhook-id being the event id", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      const hook = yield* subscriber(`${receiver.url}/created`)
      const { client } = yield* signedClient()
      const company = yield* client.companies.create({ payload: { name: "推送婚介" } })
      const guest = yield* client.guests.create({ payload: { name: "韩梅梅", gender: "female", company_id: company.id } })
      const [r] = yield* eventually("the delivery", Effect.sync(() => at(receiver, "/created")), (l) => l.length === 1)
      const payload = verify(hook.secret, r!) as { id: string; type: string; created_at: string; data: Record<string, unknown> }
      expect(payload).toMatchObject({ type: "guest.created", data: { id: guest.id, name: "韩梅梅", company_id: company.id } })
      expect(payload.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)
      expect(r!.headers["webhook-id"]).toBe(payload.id)
      expect(r!.headers["content-type"]).toBe("application/json")
      const sql = yield* SqlClient.SqlClient
      const events = yield* sql<
        { event_id: string }
      >`SELECT event_id FROM events WHERE type = 'guest.created' AND (data->>'id')::int = ${guest.id}`
      expect(events.map((e) => e.event_id)).toEqual([payload.id])
      const delivery = yield* waitForStatus(hook.appKey, payload.id, "succeeded")
      expect(delivery!.attempts).toBe(1)
      expect((yield* attemptsOf(delivery!.id)).map((a) => [a.attempt, a.status_code, a.error, a.waited_ms])).toEqual([[1, 200, null, null]])
    }))

  it.effect("a receiver that fails twice then succeeds gets the event after the backoff, with the same webhook-id each time", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      receiver.reply((_, n) => ({ status: n <= 2 ? 500 : 204 }))
      const hook = yield* subscriber(`${receiver.url}/flaky`)
      const eventId = yield* emit({ guest_id: 7 })
      const delivery = yield* waitForStatus(hook.appKey, eventId, "succeeded")
      const got = at(receiver, "/flaky")
      expect(got).toHaveLength(3)
      for (const r of got) {
        expect(r.headers["webhook-id"]).toBe(eventId)
        expect(verify(hook.secret, r)).toMatchObject({ id: eventId, data: { guest_id: 7 } })
      }
      const attempts = yield* attemptsOf(delivery!.id)
      expect(attempts.map((a) => [a.attempt, a.status_code])).toEqual([[1, 500], [2, 500], [3, 204]])
      // Each failure scheduled the next attempt 300 ms ± 20% later (plus the attempt's own time).
      for (const a of attempts.slice(0, 2)) expect(a.waited_ms).toBeGreaterThanOrEqual(240)
      // …and the receiver saw no retry before then.
      expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(200)
      expect(got[2]!.at - got[1]!.at).toBeGreaterThanOrEqual(200)
    }))

  it.effect("Retry-After on a 429 sets the wait before the next attempt", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      receiver.reply((_, n) => (n === 1 ? { status: 429, headers: { "retry-after": "1" } } : { status: 200 }))
      const hook = yield* subscriber(`${receiver.url}/busy`)
      const eventId = yield* emit({ guest_id: 8 })
      const delivery = yield* waitForStatus(hook.appKey, eventId, "succeeded")
      const [first] = yield* attemptsOf(delivery!.id)
      expect(first).toMatchObject({ attempt: 1, status_code: 429 })
      expect(first!.waited_ms).toBeGreaterThanOrEqual(1000)
      const got = at(receiver, "/busy")
      expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(950)
    }))

  it.effect("410 Gone fails the delivery and turns the client's webhook off; later events are not delivered to it", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      receiver.reply(() => ({ status: 410 }))
      const hook = yield* subscriber(`${receiver.url}/gone`)
      const first = yield* emit({ guest_id: 9 })
      const delivery = yield* waitForStatus(hook.appKey, first, "failed")
      expect(delivery!.attempts).toBe(1)
      expect((yield* attemptsOf(delivery!.id))[0]).toMatchObject({ status_code: 410, error: expect.stringMatching(/turned off/) })
      const listed = (yield* run("clients", "list")) as unknown as Array<{ app_key: string; webhook: { enabled: boolean } }>
      expect(listed.find((c) => c.app_key === hook.appKey)!.webhook.enabled).toBe(false)
      const second = yield* emit({ guest_id: 10 })
      expect(yield* deliveryOf(hook.appKey, second)).toBeUndefined()
      expect(at(receiver, "/gone")).toHaveLength(1)
    }))

  it.effect("only subscribed, active clients holding the event's read permission receive it", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      const reader = yield* subscriber(`${receiver.url}/reader`, { permissions: ["open:guest:read"] })
      const writerOnly = yield* subscriber(`${receiver.url}/writer`, { permissions: ["open:guest:write", "open:company:read"] })
      const otherType = yield* subscriber(`${receiver.url}/other`, { permissions: ["open:guest:read"], events: ["guest.updated"] })
      const disabled = yield* subscriber(`${receiver.url}/disabled`, { permissions: ["open:guest:read"] })
      yield* run("clients", "disable", disabled.appKey)
      const eventId = yield* emit({ guest_id: 11 })
      yield* waitForStatus(reader.appKey, eventId, "succeeded")
      // Fan-out happened in the event's transaction: the others never had a delivery.
      for (const c of [writerOnly, otherType, disabled]) expect(yield* deliveryOf(c.appKey, eventId)).toBeUndefined()
      expect(receiver.received.map((r) => r.path)).toEqual(["/reader"])
    }))

  it.effect("a masking client receives masked payloads; others receive them as recorded", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      const masked = yield* subscriber(`${receiver.url}/masked`, { masking: true })
      const plain = yield* subscriber(`${receiver.url}/plain`)
      const eventId = yield* emit({ guest_id: 12, phone: "13812345678", wechat: "wx_li", name: "李雷" })
      yield* waitForStatus(masked.appKey, eventId, "succeeded")
      yield* waitForStatus(plain.appKey, eventId, "succeeded")
      expect((verify(masked.secret, at(receiver, "/masked")[0]!) as { data: unknown }).data)
        .toEqual({ guest_id: 12, phone: "138****5678", wechat: "***", name: "李雷" })
      expect((verify(plain.secret, at(receiver, "/plain")[0]!) as { data: unknown }).data)
        .toEqual({ guest_id: 12, phone: "13812345678", wechat: "wx_li", name: "李雷" })
    }))

  it.effect("during a webhook-secret rotation deliveries carry both signatures and either secret verifies; after it only the new one", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      const hook = yield* subscriber(`${receiver.url}/rotating`)
      const rotated = (yield* run("clients", "webhook", hook.appKey, "--rotate-secret")) as unknown as {
        signing_secret: string
        previous_secret_expires_at: string
      }
      expect(rotated.signing_secret).toMatch(/^whsec_/)
      expect(rotated.signing_secret).not.toBe(hook.secret)
      expect(rotated.previous_secret_expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T/)
      const during = yield* emit({ guest_id: 13 })
      yield* waitForStatus(hook.appKey, during, "succeeded")
      const [r] = at(receiver, "/rotating")
      expect(r!.headers["webhook-signature"]!.split(" ")).toHaveLength(2)
      expect(verify(hook.secret, r!)).toMatchObject({ id: during })
      expect(verify(rotated.signing_secret, r!)).toMatchObject({ id: during })

      // The overlap ends: only the new secret signs.
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE clients SET webhook_prev_expires_at = now() - interval '1 second' WHERE app_key = ${hook.appKey}`
      const after = yield* emit({ guest_id: 14 })
      yield* waitForStatus(hook.appKey, after, "succeeded")
      const r2 = at(receiver, "/rotating")[1]!
      expect(r2.headers["webhook-signature"]!.split(" ")).toHaveLength(1)
      expect(verify(rotated.signing_secret, r2)).toMatchObject({ id: after })
      expect(() => verify(hook.secret, r2)).toThrow()
    }))

  it.effect("a used-up schedule leaves the delivery failed; webhooks deliveries lists its attempts; redeliver ID sends it again, same id", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      receiver.reply(() => ({ status: 500, body: "down for maintenance" }))
      const hook = yield* subscriber(`${receiver.url}/failing`)
      const eventId = yield* emit({ guest_id: 15 })
      const delivery = yield* waitForStatus(hook.appKey, eventId, "failed")
      expect(delivery!.attempts).toBe(3)
      const listed = (yield* run("webhooks", "deliveries", "--client", hook.appKey, "--status", "failed")) as unknown as Array<{
        id: number
        event_id: string
        status: string
        next_attempt_at: string | null
        attempt_history: Array<{ attempt: number; status_code: number; response: string; next_attempt_at: string | null }>
      }>
      expect(listed).toHaveLength(1)
      expect(listed[0]).toMatchObject({ id: delivery!.id, event_id: eventId, status: "failed", next_attempt_at: null })
      expect(listed[0]!.attempt_history.map((a) => [a.attempt, a.status_code, a.response, a.next_attempt_at === null]))
        .toEqual([[1, 500, "down for maintenance", false], [2, 500, "down for maintenance", false], [
          3,
          500,
          "down for maintenance",
          true
        ]])
      expect(yield* run("webhooks", "deliveries", "--client", hook.appKey, "--status", "pending")).toEqual([])

      receiver.reply(() => ({ status: 200 }))
      expect(yield* run("webhooks", "redeliver", String(delivery!.id))).toEqual({ redelivered: [delivery!.id] })
      const done = yield* waitForStatus(hook.appKey, eventId, "succeeded")
      expect(done!.attempts).toBe(4)
      const got = at(receiver, "/failing")
      expect(got).toHaveLength(4)
      expect(new Set(got.map((r) => r.headers["webhook-id"]))).toEqual(new Set([eventId]))
      expect(verify(hook.secret, got[3]!)).toMatchObject({ id: eventId })
    }))

  it.effect("after an outage, redeliver --client --since resends that client's failed deliveries from then on, not earlier ones", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      let down = true
      receiver.reply(() => ({ status: down ? 503 : 200 }))
      const hook = yield* subscriber(`${receiver.url}/outage`)
      const before = yield* emit({ guest_id: 16 })
      const earlier = yield* waitForStatus(hook.appKey, before, "failed")
      // That failure happened an hour ago; the outage began a minute ago ("since"), so no wait for
      // the clock to pass a boundary.
      yield* backdateDelivery(earlier!.id)
      const since = formatIso(new Date(Date.now() - 60_000), "Asia/Shanghai")
      const during = [yield* emit({ guest_id: 17 }), yield* emit({ guest_id: 18 }), yield* emit({ guest_id: 19 })]
      for (const id of during) yield* waitForStatus(hook.appKey, id, "failed")
      const failedRequests = at(receiver, "/outage").length

      down = false
      const result = (yield* run("webhooks", "redeliver", "--client", hook.appKey, "--since", since)) as unknown as {
        redelivered: Array<number>
      }
      expect(result.redelivered).toHaveLength(3)
      for (const id of during) yield* waitForStatus(hook.appKey, id, "succeeded")
      expect((yield* deliveryOf(hook.appKey, before))!.status).toBe("failed")
      const resent = at(receiver, "/outage").slice(failedRequests)
      expect(resent.map((r) => r.headers["webhook-id"]).sort()).toEqual([...during].sort())
      for (const r of resent) expect(verify(hook.secret, r)).toMatchObject({ type: "guest.created" })
    }))

  it.effect("a receiver that does not answer in time fails the attempt; a redirect is not followed; a huge answer is read only up to the cap", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      receiver.reply((r) =>
        r.path === "/silent"
          ? { status: 200, hold: new Promise(() => {}) }
          : r.path === "/redirect"
          ? { status: 302, headers: { location: `${receiver.url}/elsewhere` } }
          : { status: 200, body: "x".repeat(5 * 1024 * 1024) }
      )
      const silent = yield* subscriber(`${receiver.url}/silent`)
      const redirect = yield* subscriber(`${receiver.url}/redirect`)
      const chatty = yield* subscriber(`${receiver.url}/chatty`)
      const eventId = yield* emit({ guest_id: 20 })
      const timedOut = yield* eventually("the silent attempt", deliveryOf(silent.appKey, eventId), (d) => (d?.attempts ?? 0) >= 2)
      expect((yield* attemptsOf(timedOut!.id))[0]).toMatchObject({ status_code: null, error: "timed out" })
      const redirected = yield* waitForStatus(redirect.appKey, eventId, "failed")
      expect((yield* attemptsOf(redirected!.id)).map((a) => a.status_code)).toEqual([302, 302, 302])
      expect(at(receiver, "/elsewhere")).toEqual([])
      const read = yield* waitForStatus(chatty.appKey, eventId, "succeeded")
      const [attempt] = yield* attemptsOf(read!.id)
      expect(attempt!.status_code).toBe(200)
      expect(attempt!.response!.length).toBeLessThanOrEqual(500)
    }))

  it.effect("the events feed lists, in order, the same payloads the receiver got", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      const { client, credentials } = yield* signedClient(["open:guest:read"])
      const clients = yield* Clients
      const hook = yield* Effect.orDie(
        clients.webhook(credentials.appKey, { _tag: "Set", url: `${receiver.url}/feed`, events: ["guest.created"] })
      )
      const secret = ("signing_secret" in hook ? hook.signing_secret : undefined) ?? ""
      const start = (yield* client.events.list({ query: { page_size: 1000 } })).next_after
      const ids = [yield* emit({ n: 1 }), yield* emit({ n: 2 }), yield* emit({ n: 3, phone: "13912345678" })]
      for (const id of ids) yield* waitForStatus(credentials.appKey, id, "succeeded")
      const page = yield* client.events.list({ query: { ...(start === null ? {} : { after: start }), types: ["guest.created"] } })
      expect(page.list.map((e) => e.id)).toEqual(ids)
      const delivered = new Map(at(receiver, "/feed").map((r) => [r.headers["webhook-id"], verify(secret, r)]))
      expect(page.list).toEqual(ids.map((id) => delivered.get(id)))
    }))

  it.effect("webhooks test APP_KEY sends a webhook.test event that the reference library verifies", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      const hook = yield* subscriber(`${receiver.url}/test`)
      const result = (yield* run("webhooks", "test", hook.appKey)) as unknown as { delivered: boolean; status: number; webhook_id: string }
      expect(result).toMatchObject({ delivered: true, status: 200 })
      const [r] = at(receiver, "/test")
      expect(verify(hook.secret, r!)).toMatchObject({ id: result.webhook_id, type: "webhook.test", data: { app_key: hook.appKey } })
      const failure = yield* Effect.flip(runAdmin(["webhooks", "redeliver", "--client", hook.appKey]))
      expect((failure as { message: string }).message).toMatch(/--since/)
      const unknown = yield* Effect.flip(runAdmin(["webhooks", "redeliver", "999999"]))
      expect((unknown as { message: string }).message).toBe("webhook_delivery 999999 not found")
    }))
})

layer(
  liveWebhookLayer({ rateLimitBurst: 1_000_000, webhookClientConcurrency: 2, webhookConcurrency: 8 }),
  { excludeTestServices: true, timeout: 60_000 }
)("a slow receiver", (it) => {
  it.effect("holds at most WEBHOOK_CLIENT_CONCURRENCY attempts and delays no other receiver", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      let release: () => void = () => {}
      const held = new Promise<void>((resolve) => {
        release = resolve
      })
      receiver.reply((r) => (r.path === "/slow" ? { status: 200, hold: held } : { status: 200 }))
      const slow = yield* subscriber(`${receiver.url}/slow`)
      const fast = yield* subscriber(`${receiver.url}/fast`)
      const ids: Array<string> = []
      for (let i = 0; i < 10; i++) ids.push(yield* emit({ guest_id: 100 + i }))
      // Every event reaches the fast receiver while the slow one has answered nothing.
      for (const id of ids) yield* waitForStatus(fast.appKey, id, "succeeded")
      expect(at(receiver, "/fast")).toHaveLength(10)
      yield* eventually("the slow receiver's first two", Effect.sync(() => at(receiver, "/slow").length), (n) => n >= 2)
      expect(at(receiver, "/slow")).toHaveLength(2)
      expect(receiver.open.get("/slow")).toBe(2)
      release()
      for (const id of ids) yield* waitForStatus(slow.appKey, id, "succeeded")
      expect(receiver.maxOpen.get("/slow")).toBe(2)
      for (const r of at(receiver, "/slow")) verify(slow.secret, r)
    }))
})
