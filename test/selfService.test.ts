// Self-service (DECISIONS §12) end to end over HTTP with the typed client: two API instances over
// one database and the webhook daemon running in-process on the real clock, with a local receiver
// that checks every delivery with the reference library (standardwebhooks). Each client manages
// only itself, under its own signature, with no permission string.
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"

import { WebhookJobsLive } from "../jobs/Webhooks.js"
import { makeOpenApiClient } from "../src/client/Client.js"
import type { AppConfigShape } from "../src/Config.js"
import { formatTimestamp } from "../src/domain/time.js"
import { FakeDns } from "./fakes/dns.js"
import { eventually } from "./support/eventually.js"
import { liveAppLayer, serverLayer, sharedTestDatabase, signedClient, TestServer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"
import { backdateDelivery, makeReceiver, type Received, verify } from "./support/receiver.js"

const CONFIG: Partial<AppConfigShape> = {
  rateLimitBurst: 1_000_000,
  webhookRetrySchedule: [300, 300],
  webhookTimeoutMs: 5000,
  webhookPollSeconds: 1
}
const TZ = "Asia/Shanghai"
const WEEK_MS = 7 * 24 * 3600 * 1000
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const shared = sharedTestDatabase(CONFIG, "live")

/** Instance A (with the daemon) over the shared database, on the real clock. */
const liveLayer = Layer.mergeAll(serverLayer, WebhookJobsLive).pipe(
  Layer.provideMerge(liveAppLayer(CONFIG, undefined, shared.database)),
  Layer.provideMerge(FetchHttpClient.layer),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
)

/** The base URL of a second API instance (its own services, caches and pool). */
const secondInstance = Effect.map(Layer.build(Layer.fresh(shared.anotherInstance)), (ctx) => Context.get(ctx, TestServer).baseUrl)

const at = (receiver: { received: Array<Received> }, path: string) => receiver.received.filter((r) => r.path === path)

/**
 * As if a minute had passed for the client's self-service limits (DECISIONS §13): its windows end
 * now. (This test runs on the real clock; test/selfServiceLimits.test.ts holds the limits.)
 */
const aMinuteLater = (appKey: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`UPDATE action_windows SET window_start_ms = window_start_ms - 60000
        WHERE client_id = (SELECT id FROM clients WHERE app_key = ${appKey})`
  )

/** A client with no permission at all: self-service needs none. */
const bareClient = signedClient([])

const errorOf = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(
    Effect.flip(effect),
    (e) => e as unknown as { _tag: string; error: string; issues?: Array<{ path: string }>; resource?: string }
  )

/** A request sent raw (bodies the typed client would refuse): its status, data.error and issue paths. */
const refusal = (baseUrl: string, credentials: { appKey: string; appSecret: string }, method: string, path: string, body: unknown) =>
  Effect.map(
    rawRequest(baseUrl, { method, path: `/api/open/v1${path}`, body: JSON.stringify(body), credentials }),
    (r) => [r.status, r.json.data?.error, r.json.data?.issues?.map((i: { path: string }) => i.path)]
  )

const deliveryStatus = (
  client: Effect.Success<typeof bareClient>["client"],
  id: number
) => Effect.map(client.selfService.listDeliveries({ query: { page_size: 100 } }), (p) => p.list.find((d) => d.id === id))

layer(liveLayer, { excludeTestServices: true, timeout: 60_000 })("self-service", (it) => {
  it.effect("GET /webhook of a new client: no URL, no events, off; the first PUT with a URL turns it on and shows the signing secret once", () =>
    Effect.gen(function*() {
      const { client } = yield* bareClient
      // A name must resolve, and only to allowed addresses (loopback is admitted in tests).
      const dns = yield* FakeDns
      dns.set("hooks.example.test", ["127.0.0.1"])
      expect(yield* client.selfService.getWebhook()).toEqual({ url: null, events: [], enabled: false, secret_rotating_until: null })
      const first = yield* client.selfService.updateWebhook({
        payload: { url: "https://hooks.example.test/in", events: ["guest.created", "company.created", "guest.created"] }
      })
      expect(first).toMatchObject({
        url: "https://hooks.example.test/in",
        events: ["guest.created", "company.created"],
        enabled: true,
        secret_rotating_until: null
      })
      expect(first.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      const second = yield* client.selfService.updateWebhook({ payload: { url: "https://hooks.example.test/other" } })
      expect(second).toEqual({
        url: "https://hooks.example.test/other",
        events: ["guest.created", "company.created"],
        enabled: true,
        secret_rotating_until: null
      })
      const off = yield* client.selfService.updateWebhook({ payload: { enabled: false } })
      expect(off.enabled).toBe(false)
      const read = yield* client.selfService.getWebhook()
      expect(read).toEqual(off)
      expect(JSON.stringify(read)).not.toContain("whsec_")
    }))

  it.effect("PUT /webhook refuses a relative or non-http URL, an event type outside the catalogue, and enabled without a URL", () =>
    Effect.gen(function*() {
      const { client } = yield* bareClient
      // Sent raw: the typed client would refuse these bodies before sending them.
      const { baseUrl, credentials } = yield* bareClient
      const put = (body: unknown) => refusal(baseUrl, credentials, "PUT", "/webhook", body)
      for (const url of ["/relative", "ftp://example.test/x", "not a url", 42]) {
        expect(yield* put({ url })).toEqual([400, "invalid_parameter", ["url"]])
      }
      expect(yield* put({ events: ["guest.created", "guest.deleted"] })).toEqual([400, "invalid_parameter", ["events[1]"]])
      expect(yield* put({ events: ["webhook.test"] })).toEqual([400, "invalid_parameter", ["events[0]"]])
      expect(yield* put({ enabled: "yes" })).toEqual([400, "invalid_parameter", ["enabled"]])
      const noUrl = yield* errorOf(client.selfService.updateWebhook({ payload: { enabled: true } }))
      expect(noUrl).toMatchObject({ _tag: "InvalidInput", issues: [{ path: "enabled" }] })
      // Nothing was changed by the refusals.
      expect(yield* client.selfService.getWebhook()).toEqual({ url: null, events: [], enabled: false, secret_rotating_until: null })
    }))

  it.effect("after PUT /webhook (on the other instance) the daemon delivers to the new URL, signed with the same secret", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      const { client, credentials } = yield* signedClient()
      const other = yield* makeOpenApiClient(yield* secondInstance, credentials, { retries: 0 })
      const set = yield* client.selfService.updateWebhook({ payload: { url: `${receiver.url}/first`, events: ["guest.created"] } })
      const secret = set.signing_secret!
      const company = yield* client.companies.create({ payload: { name: "自助婚介" } })
      const one = yield* client.guests.create({ payload: { name: "自助甲", gender: "female", company_id: company.id } })
      const [r1] = yield* eventually("the delivery to the first URL", Effect.sync(() => at(receiver, "/first")), (l) => l.length === 1)
      expect(verify(secret, r1!)).toMatchObject({ type: "guest.created", data: { id: one.id } })

      const moved = yield* other.selfService.updateWebhook({ payload: { url: `${receiver.url}/second` } })
      expect(moved).toEqual({ url: `${receiver.url}/second`, events: ["guest.created"], enabled: true, secret_rotating_until: null })
      const two = yield* client.guests.create({ payload: { name: "自助乙", gender: "male", company_id: company.id } })
      const [r2] = yield* eventually("the delivery to the new URL", Effect.sync(() => at(receiver, "/second")), (l) => l.length === 1)
      expect(verify(secret, r2!)).toMatchObject({ type: "guest.created", data: { id: two.id } })
      expect(at(receiver, "/first")).toHaveLength(1)
    }))

  it.effect("POST /webhook/test queues a webhook.test event for the caller alone (even while off), delivered and listed with its attempt", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      const { client } = yield* bareClient
      const none = yield* errorOf(client.selfService.testWebhook())
      expect(none._tag).toBe("WebhookOff")
      const secret = (yield* client.selfService.updateWebhook({ payload: { url: `${receiver.url}/test`, enabled: false } })).signing_secret!
      const sent = yield* client.selfService.testWebhook()
      expect(sent.event_id).toMatch(/^evt_[0-9a-f]{24}$/)
      const [r] = yield* eventually("the test event", Effect.sync(() => at(receiver, "/test")), (l) => l.length === 1)
      expect(r!.headers["webhook-id"]).toBe(sent.event_id)
      expect(verify(secret, r!)).toMatchObject({ id: sent.event_id, type: "webhook.test" })
      const done = yield* eventually("the delivery recorded", deliveryStatus(client, sent.delivery_id), (d) => d?.status === "succeeded")
      expect(done).toMatchObject({ event_id: sent.event_id, type: "webhook.test", next_attempt_at: null })
      expect(done!.attempts).toEqual([
        {
          attempt: 1,
          attempted_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
          status_code: 200,
          error: null,
          duration_ms: expect.any(Number),
          response: "ok"
        }
      ])
      // Only for this client: nobody else has a delivery of it, and no events feed lists it.
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE e.event_id = ${sent.event_id}`
      expect(rows[0]!.n).toBe(1)
      const { client: reader } = yield* signedClient()
      const feed = yield* reader.events.list({ query: { page_size: 1000 } })
      expect(feed.list.map((e) => e.id)).not.toContain(sent.event_id)
    }))

  it.effect("POST /webhook/rotate-secret: deliveries carry both signatures during the overlap, 7 days, and either secret verifies", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      const { client } = yield* bareClient
      const first = (yield* client.selfService.updateWebhook({ payload: { url: `${receiver.url}/rotating` } })).signing_secret!
      const before = Date.now()
      const { signing_secret } = yield* client.selfService.rotateWebhookSecret()
      expect(signing_secret).toMatch(/^whsec_/)
      expect(signing_secret).not.toBe(first)
      const settings = yield* client.selfService.getWebhook()
      const until = settings.secret_rotating_until!
      expect([
        formatTimestamp(new Date(before + WEEK_MS - 1000), TZ),
        formatTimestamp(new Date(before + WEEK_MS), TZ),
        formatTimestamp(new Date(before + WEEK_MS + 1000), TZ)
      ])
        .toContain(until)
      const sent = yield* client.selfService.testWebhook()
      const [r] = yield* eventually("the delivery", Effect.sync(() => at(receiver, "/rotating")), (l) => l.length === 1)
      expect(r!.headers["webhook-signature"]!.split(" ")).toHaveLength(2)
      expect(verify(first, r!)).toMatchObject({ id: sent.event_id })
      expect(verify(signing_secret, r!)).toMatchObject({ id: sent.event_id })
    }))

  it.effect("GET /webhook/deliveries lists a failing receiver's attempt (status, duration, response excerpt; a test event is attempted once, never retried), filtered by status and since, paged", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      // Each answer takes at least 60 ms, so that the recorded duration is a measurement.
      receiver.reply(() => ({ status: 500, body: `down for maintenance ${"x".repeat(2000)}`, hold: pause(60) }))
      const { client } = yield* bareClient
      yield* client.selfService.updateWebhook({ payload: { url: `${receiver.url}/failing` } })
      const a = yield* client.selfService.testWebhook()
      // The schedule (two retries 300 ms apart) is not used: the first failure is final.
      const failed = yield* eventually("the failed attempt", deliveryStatus(client, a.delivery_id), (d) => d?.status === "failed")
      expect(failed!.attempts.map((x) => [x.attempt, x.status_code, x.error])).toEqual([[1, 500, null]])
      expect(failed!.next_attempt_at).toBeNull()
      for (const x of failed!.attempts) {
        expect(x.response!.startsWith("down for maintenance")).toBe(true)
        expect(x.response!.length).toBeLessThanOrEqual(500)
        expect(x.duration_ms).toBeGreaterThanOrEqual(50)
      }
      receiver.reply(() => ({ status: 200 }))
      // The failed one is from an hour ago; "since" is a minute ago (no wait for a clock boundary).
      yield* backdateDelivery(a.delivery_id)
      const since = formatTimestamp(new Date(Date.now() - 60_000), TZ)
      const b = yield* client.selfService.testWebhook()
      yield* eventually("the second test", deliveryStatus(client, b.delivery_id), (d) => d?.status === "succeeded")

      const all = yield* client.selfService.listDeliveries({ query: {} })
      expect([all.total, all.list.map((d) => d.id)]).toEqual([2, [b.delivery_id, a.delivery_id]])
      const onlyFailed = yield* client.selfService.listDeliveries({ query: { status: "failed" } })
      expect(onlyFailed.list.map((d) => d.id)).toEqual([a.delivery_id])
      const sinceThen = yield* client.selfService.listDeliveries({ query: { since } })
      expect([sinceThen.total, sinceThen.list.map((d) => d.id)]).toEqual([1, [b.delivery_id]])
      const secondPage = yield* client.selfService.listDeliveries({ query: { page: 2, page_size: 1 } })
      expect([secondPage.total, secondPage.list.map((d) => d.id)]).toEqual([2, [a.delivery_id]])
      // page_size over 100 is clamped; bad parameters are 400s.
      expect((yield* client.selfService.listDeliveries({ query: { page_size: 1000 } })).total).toBe(2)
      const { baseUrl, credentials } = yield* bareClient
      for (const query of ["status=gone", "since=yesterday", "since=2024-02-30%2010:00:00", "page_size=0"]) {
        const res = yield* rawRequest(baseUrl, { path: "/api/open/v1/webhook/deliveries", query, credentials })
        expect([query, res.status, res.json.data.error]).toEqual([query, 400, "invalid_parameter"])
      }
    }))

  it.effect("a client cannot see or redeliver another client's deliveries (404); its own comes back pending and is sent again, same webhook-id", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      let down = true
      receiver.reply(() => ({ status: down ? 503 : 200 }))
      const { client: owner } = yield* bareClient
      const { client: stranger } = yield* bareClient
      const secret = (yield* owner.selfService.updateWebhook({ payload: { url: `${receiver.url}/own` } })).signing_secret!
      yield* stranger.selfService.updateWebhook({ payload: { url: `${receiver.url}/stranger` } })
      const sent = yield* owner.selfService.testWebhook()
      yield* eventually("the failure", deliveryStatus(owner, sent.delivery_id), (d) => d?.status === "failed")

      expect((yield* stranger.selfService.listDeliveries({ query: {} })).list).toEqual([])
      const foreign = yield* errorOf(stranger.selfService.redeliver({ params: { id: sent.delivery_id } }))
      expect(foreign).toMatchObject({ _tag: "NotFound", resource: "webhook_delivery" })
      const unknown = yield* errorOf(owner.selfService.redeliver({ params: { id: 2_000_000_000 } }))
      expect([unknown._tag, unknown.resource]).toEqual(["NotFound", "webhook_delivery"])
      expect((yield* deliveryStatus(owner, sent.delivery_id))!.status).toBe("failed")

      down = false
      const again = yield* owner.selfService.redeliver({ params: { id: sent.delivery_id } })
      expect(again).toMatchObject({ id: sent.delivery_id, status: "pending", event_id: sent.event_id })
      expect(again.attempts).toHaveLength(1)
      const done = yield* eventually("the redelivery", deliveryStatus(owner, sent.delivery_id), (d) => d?.status === "succeeded")
      expect(done!.attempts.map((x) => x.status_code)).toEqual([503, 200])
      const got = at(receiver, "/own")
      expect(new Set(got.map((r) => r.headers["webhook-id"]))).toEqual(new Set([sent.event_id]))
      expect(verify(secret, got.at(-1)!)).toMatchObject({ id: sent.event_id })
      expect(at(receiver, "/stranger")).toEqual([])

      yield* owner.selfService.updateWebhook({ payload: { enabled: false } })
      const off = yield* errorOf(owner.selfService.redeliver({ params: { id: sent.delivery_id } }))
      expect(off._tag).toBe("WebhookOff")
    }))

  it.effect("POST /webhook/redeliver resends the caller's failed deliveries since a time (or another status), and answers how many", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      let down = true
      receiver.reply(() => ({ status: down ? 500 : 200 }))
      const { client, credentials } = yield* bareClient
      yield* client.selfService.updateWebhook({ payload: { url: `${receiver.url}/outage` } })
      const early = yield* client.selfService.testWebhook()
      yield* eventually("the early failure", deliveryStatus(client, early.delivery_id), (d) => d?.status === "failed")
      yield* backdateDelivery(early.delivery_id)
      const since = formatTimestamp(new Date(Date.now() - 60_000), TZ)
      const during = [yield* client.selfService.testWebhook(), yield* client.selfService.testWebhook()]
      for (const d of during) yield* eventually("a failure", deliveryStatus(client, d.delivery_id), (x) => x?.status === "failed")
      // Another client's failures are not touched.
      const { client: other } = yield* bareClient
      yield* other.selfService.updateWebhook({ payload: { url: `${receiver.url}/other` } })
      const theirs = yield* other.selfService.testWebhook()
      yield* eventually("their failure", deliveryStatus(other, theirs.delivery_id), (x) => x?.status === "failed")

      down = false
      expect(yield* client.selfService.redeliverSince({ payload: { since } })).toEqual({ count: 2 })
      for (const d of during) yield* eventually("a redelivery", deliveryStatus(client, d.delivery_id), (x) => x?.status === "succeeded")
      expect((yield* deliveryStatus(client, early.delivery_id))!.status).toBe("failed")
      expect((yield* deliveryStatus(other, theirs.delivery_id))!.status).toBe("failed")
      // Nothing failed is left since then; the succeeded ones can be sent again on request (a
      // bulk redelivery a minute: test/selfServiceLimits.test.ts holds the limit).
      yield* aMinuteLater(credentials.appKey)
      expect(yield* client.selfService.redeliverSince({ payload: { since } })).toEqual({ count: 0 })
      yield* aMinuteLater(credentials.appKey)
      expect(yield* client.selfService.redeliverSince({ payload: { since, status: "succeeded" } })).toEqual({ count: 2 })

      const fresh = yield* bareClient
      for (const body of [{ since: "yesterday" }, { since: "2024-02-30 10:00:00" }, {}]) {
        expect(yield* refusal(fresh.baseUrl, fresh.credentials, "POST", "/webhook/redeliver", body)).toEqual([400, "invalid_parameter", [
          "since"
        ]])
      }
      expect(yield* refusal(fresh.baseUrl, fresh.credentials, "POST", "/webhook/redeliver", { since, status: "lost" }))
        .toEqual([400, "invalid_parameter", ["status"]])
      yield* aMinuteLater(credentials.appKey)
      yield* client.selfService.updateWebhook({ payload: { enabled: false } })
      const off = yield* errorOf(client.selfService.redeliverSince({ payload: { since } }))
      expect(off._tag).toBe("WebhookOff")
    }))

  it.effect("POST /credentials/rotate: on both instances the old secret works with X-Secret-Deprecated: true and the new one without; a second rotation (a minute later, with the current secret) stops the first at once; the overlap is 7 days", () =>
    Effect.gen(function*() {
      const first = (yield* TestServer).baseUrl
      const second = yield* secondInstance
      const { client, credentials: original } = yield* bareClient
      const call = (baseUrl: string, credentials: { appKey: string; appSecret: string }) =>
        Effect.map(
          rawRequest(baseUrl, { path: "/api/open/v1/webhook", credentials }),
          (r) => `${r.status === 200 ? "ok" : r.json.data.error}${r.headers.get("x-secret-deprecated") === "true" ? "+deprecated" : ""}`
        )
      const both = (credentials: { appKey: string; appSecret: string }) => Effect.all([call(first, credentials), call(second, credentials)])
      expect(yield* both(original)).toEqual(["ok", "ok"])

      const before = Date.now()
      const { app_secret } = yield* client.selfService.rotateCredentials()
      expect(app_secret).toMatch(/^[0-9a-f]{64}$/)
      const rotated = { appKey: original.appKey, appSecret: app_secret }
      // Each instance hears of the change by NOTIFY (within a moment, never a stale secret for long).
      yield* eventually(
        "both instances",
        Effect.all([both(original), both(rotated)]),
        ([o, n]) => o.join() === "ok+deprecated,ok+deprecated" && n.join() === "ok,ok"
      )
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ ms: number }>`SELECT (extract(epoch FROM prev_secret_expires_at) * 1000)::float8 AS ms
        FROM clients WHERE app_key = ${original.appKey}`
      expect(row!.ms).toBeGreaterThanOrEqual(before + WEEK_MS - 1000)
      expect(row!.ms).toBeLessThanOrEqual(Date.now() + WEEK_MS + 1000)

      // A second rotation (signed with the current secret: the deprecated one may not rotate, see
      // test/selfServiceLimits.test.ts): the oldest stops at once.
      yield* aMinuteLater(original.appKey)
      const current = yield* makeOpenApiClient(first, rotated, { retries: 0 })
      const third = { appKey: original.appKey, appSecret: (yield* current.selfService.rotateCredentials()).app_secret }
      yield* eventually(
        "the second rotation",
        Effect.all([both(original), both(rotated), both(third)]),
        ([o, r, t]) =>
          o.join() === "invalid_signature,invalid_signature" && r.join() === "ok+deprecated,ok+deprecated" && t.join() === "ok,ok"
      )

      // The overlap ends: only the newest secret signs.
      yield* sql`UPDATE clients SET prev_secret_expires_at = now() - interval '1 second' WHERE app_key = ${original.appKey}`
      yield* eventually(
        "the end of the overlap",
        Effect.all([both(rotated), both(third)]),
        ([r, t]) => r.join() === "invalid_signature,invalid_signature" && t.join() === "ok,ok"
      )
    }))

  it.effect("self-service needs no permission and answers 401 unsigned; a rotation repeated with its Idempotency-Key gives the same secret once", () =>
    Effect.gen(function*() {
      const { baseUrl, credentials } = yield* bareClient
      const unsigned = yield* rawRequest(baseUrl, { path: "/api/open/v1/webhook" })
      expect([unsigned.status, unsigned.json.data.error]).toEqual([401, "missing_credentials"])
      const post = () =>
        rawRequest(baseUrl, {
          method: "POST",
          path: "/api/open/v1/credentials/rotate",
          credentials,
          headers: { "idempotency-key": "rotate-1" }
        })
      const a = yield* post()
      const b = yield* post()
      expect([a.status, b.status, b.headers.get("idempotent-replayed")]).toEqual([200, 200, "true"])
      expect(b.json.data.app_secret).toBe(a.json.data.app_secret)
      const fresh = { appKey: credentials.appKey, appSecret: a.json.data.app_secret as string }
      const check = yield* rawRequest(baseUrl, { path: "/api/open/v1/webhook", credentials: fresh })
      expect([check.status, check.headers.get("x-secret-deprecated")]).toEqual([200, null])
    }))
})
