// What an operator sees of a running API, in process: /healthz and /readyz (unsigned, in the
// envelope, outside /api/open/v1, not rate limited; 503 when a migration is missing or the database
// is gone), /metrics in the Prometheus text format with request counts, latency histograms,
// authentication failures, 429s, pool gauges and queue depths that move, and traces exported over
// OTLP to a local collector.
import { readFileSync } from "node:fs"

import { describe, expect, it, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"

import { CardTasksJob } from "../jobs/CardTasks.js"
import { periodicJob } from "../jobs/Job.js"
import { runAdmin } from "../src/admin/commands.js"
import { JobActivity, jobSnapshots, measuredRun } from "../src/observability/jobs.js"
import { otlpTracingLayer } from "../src/observability/tracing.js"
import { Clients } from "../src/services/Clients.js"
import { eventually } from "./support/eventually.js"
import { cardForm, formBytes } from "./support/forms.js"
import { createCredentials, signedClient, TestServer, testServerLayer } from "./support/harness.js"
import { hasSeries, scrape, valueOf } from "./support/prometheus.js"
import { rawRequest } from "./support/raw.js"
import { makeReceiver } from "./support/receiver.js"
import { databaseThroughProxy } from "./support/tcpProxy.js"

const BASE = "/api/open/v1"
const PNG = new Uint8Array(readFileSync(new URL("./fixtures/cards/card-clean.png", import.meta.url)))
let variant = 0
const uniquePng = () => new Uint8Array([...PNG, ...new TextEncoder().encode(`obs-${Date.now()}-${variant++}`)])

const get = (baseUrl: string, path: string) =>
  Effect.promise(async () => {
    const res = await fetch(`${baseUrl}${path}`)
    return { status: res.status, headers: res.headers, json: (await res.json()) as { code: number; message: string; data: any } } // eslint-disable-line @typescript-eslint/no-explicit-any
  })

layer(testServerLayer())("probes and metrics of the API", (it) => {
  it.effect("GET /healthz and /readyz answer unsigned, outside /api/open/v1, in the envelope, without rate-limit headers", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const health = yield* get(baseUrl, "/healthz")
      expect(health.status).toBe(200)
      expect(health.json).toMatchObject({ code: 200, message: "ok", data: { status: "alive" } })
      expect(health.headers.get("x-request-id")).toBeTruthy()
      expect(health.headers.get("ratelimit-limit")).toBeNull()
      const ready = yield* get(baseUrl, "/readyz")
      expect(ready.status).toBe(200)
      expect(ready.json).toMatchObject({ code: 200, message: "ok", data: { status: "ready" } })
      expect(ready.json.data.migrations).toBeGreaterThanOrEqual(11)
      // Not under the API prefix.
      expect((yield* get(baseUrl, `${BASE}/healthz`)).status).toBe(404)
    }))

  it.effect("probes are never rate limited: a client-less burst far past any limit gets 200 every time", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const statuses = yield* Effect.forEach(Array.from({ length: 150 }), () => Effect.map(get(baseUrl, "/healthz"), (r) => r.status), {
        concurrency: 10
      })
      expect(new Set(statuses)).toEqual(new Set([200]))
    }))

  it.effect("/readyz is 503 service_unavailable naming a migration the database lacks, and 200 once it is applied", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      const removed = yield* sql<{ migration_id: number; name: string; created_at: Date }>`
        DELETE FROM effect_sql_migrations WHERE migration_id = 11 RETURNING migration_id, name, created_at`
      const notReady = yield* get(baseUrl, "/readyz")
      expect(notReady.status).toBe(503)
      expect(notReady.headers.get("retry-after")).toBe("2")
      expect(notReady.json).toMatchObject({
        code: 503,
        message: expect.stringContaining("0011_daemon_heartbeats"),
        data: { error: "service_unavailable" }
      })
      yield* sql`INSERT INTO effect_sql_migrations ${sql.insert(removed[0]!)}`
      expect((yield* get(baseUrl, "/readyz")).status).toBe(200)
    }))

  it.effect("GET /metrics is Prometheus text; request counts and latency histograms move by route template, method and status", () =>
    Effect.gen(function*() {
      const { baseUrl, client } = yield* signedClient()
      const company = yield* client.companies.create({ payload: { name: "度量婚介" } })
      const before = yield* scrape(baseUrl)
      expect(before.status).toBe(200)
      expect(before.contentType).toMatch(/^text\/plain; version=0\.0\.4/)
      expect(before.text).toContain("# TYPE http_server_requests_total counter")
      expect(before.text).toContain("# TYPE http_server_request_duration_seconds histogram")
      // Every family has help text of its own (effect's fiber families once said "description missing").
      const families = [...before.text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!)
      const helps = new Map([...before.text.matchAll(/^# HELP (\S+) (.*)$/gm)].map((m) => [m[1]!, m[2]!]))
      expect(families.length).toBeGreaterThan(5)
      for (const family of families) {
        expect(helps.get(family), family).toMatch(/\w{3,}/)
        expect(helps.get(family), family).not.toMatch(/description missing/i)
      }

      for (let i = 0; i < 7; i++) yield* client.companies.list({ query: {} })
      for (let i = 0; i < 3; i++) yield* client.companies.get({ params: { id: company.id } })
      yield* Effect.flip(client.companies.get({ params: { id: 999_999 } }))
      const after = yield* scrape(baseUrl)

      const delta = (name: string, labels: Record<string, string>) =>
        valueOf(after.samples, name, labels) - valueOf(before.samples, name, labels)
      const list = { route: `${BASE}/companies`, method: "GET", status: "200" }
      const one = { route: `${BASE}/companies/:id`, method: "GET", status: "200" }
      const missing = { route: `${BASE}/companies/:id`, method: "GET", status: "404" }
      expect(delta("http_server_requests_total", list)).toBe(7)
      expect(delta("http_server_requests_total", one)).toBe(3)
      expect(delta("http_server_requests_total", missing)).toBe(1)
      expect(delta("http_server_request_duration_seconds_count", list)).toBe(7)
      expect(delta("http_server_request_duration_seconds_bucket", { ...list, le: "+Inf" })).toBe(7)
      expect(delta("http_server_request_duration_seconds_sum", list)).toBeGreaterThan(0)
      // Raw paths never become labels: the id is not in any series.
      expect(after.text).not.toContain(`/companies/${company.id}"`)
      // The scrape itself is counted under its own route.
      expect(valueOf(after.samples, "http_server_requests_total", { route: "/metrics", method: "GET", status: "200" }))
        .toBeGreaterThanOrEqual(1)
    }))

  it.effect("/favicon.ico is counted under its own route, not as an unmatched 404", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const before = yield* scrape(baseUrl)
      yield* Effect.promise(() => fetch(`${baseUrl}/favicon.ico`).then((res) => res.arrayBuffer()))
      const after = yield* scrape(baseUrl)
      const labels = { route: "/favicon.ico", method: "GET", status: "200" }
      expect(valueOf(after.samples, "http_server_requests_total", labels) - valueOf(before.samples, "http_server_requests_total", labels))
        .toBe(1)
    }))

  it.effect("an unknown path is counted under the one label `unmatched`, whatever the path", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const before = yield* scrape(baseUrl)
      yield* get(baseUrl, "/no/such/path/1")
      yield* get(baseUrl, "/no/such/path/2?x=1")
      const after = yield* scrape(baseUrl)
      const labels = { route: "unmatched", method: "GET", status: "404" }
      expect(valueOf(after.samples, "http_server_requests_total", labels) - valueOf(before.samples, "http_server_requests_total", labels))
        .toBe(2)
      expect(after.text).not.toContain("/no/such/path")
    }))

  it.effect("authentication failures are counted by data.error, and 429s by themselves", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const before = yield* scrape(baseUrl)
      const bad = yield* rawRequest(baseUrl, { path: `${BASE}/companies`, credentials: { ...credentials, appSecret: "0".repeat(64) } })
      expect(bad.json.data.error).toBe("invalid_signature")
      const unknown = yield* rawRequest(baseUrl, {
        path: `${BASE}/companies`,
        credentials: { ...credentials, appKey: "ak_ffffffffffffffff" }
      })
      expect(unknown.json.data.error).toBe("unknown_app_key")
      const missing = yield* rawRequest(baseUrl, { path: `${BASE}/companies` })
      expect(missing.json.data.error).toBe("missing_credentials")

      yield* Effect.flatMap(Clients, (c) => Effect.orDie(c.setRateLimit(credentials.appKey, 0.01, 1)))
      const statuses = yield* Effect.forEach(Array.from({ length: 4 }), () =>
        Effect.map(rawRequest(baseUrl, { path: `${BASE}/companies`, credentials }), (r) => r.status))
      const limited = statuses.filter((s) =>
        s === 429
      ).length
      expect(limited).toBeGreaterThanOrEqual(3)

      const after = yield* scrape(baseUrl)
      const delta = (name: string, labels: Record<string, string> = {}) =>
        valueOf(after.samples, name, labels) - valueOf(before.samples, name, labels)
      expect(delta("http_auth_failures_total", { error: "invalid_signature" })).toBe(1)
      expect(delta("http_auth_failures_total", { error: "unknown_app_key" })).toBe(1)
      expect(delta("http_auth_failures_total", { error: "missing_credentials" })).toBe(1)
      expect(delta("http_rate_limited_total")).toBe(limited)
      expect(delta("http_server_requests_total", { route: `${BASE}/companies`, status: "429" })).toBe(limited)
    }))

  it.effect("duplicate_* refusals answered to a masking client are counted per app_key (open_duplicate_refusals_total); a replay and a non-masking client's are not", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const owner = yield* createCredentials()
      const prober = yield* createCredentials(undefined, { masking: true })
      const tag = `${Date.now().toString(36)}${variant++}`
      const phone = `139${String(Date.now() % 1e8).padStart(8, "0")}`
      const post = (credentials: { appKey: string; appSecret: string }, path: string, body: object, key?: string) =>
        Effect.map(
          rawRequest(baseUrl, {
            method: "POST",
            path: `${BASE}${path}`,
            body: JSON.stringify(body),
            credentials,
            ...(key !== undefined ? { headers: { "idempotency-key": key } } : {})
          }),
          (r) => `${r.status} ${r.json.data.error ?? "ok"}${r.headers.get("idempotent-replayed") === "true" ? " replayed" : ""}`
        )
      expect(yield* post(owner, "/work-wechats", { wechat_number: `wx_${tag}`, phone, device_id: `dev_${tag}` })).toBe("200 ok")
      expect(yield* post(owner, "/work-groups", { name: "已有的群", group_no: `g_${tag}` })).toBe("200 ok")

      // The masking client tries values that exist: each refusal tells it so.
      const tries = [
        yield* post(prober, "/work-wechats", { wechat_number: `wx_${tag}`, phone: "13700000000" }),
        yield* post(prober, "/work-wechats", { wechat_number: `other_${tag}`, phone }),
        yield* post(prober, "/work-wechats", { wechat_number: `third_${tag}`, phone: "13600000000", device_id: `dev_${tag}` }),
        yield* post(prober, "/work-groups", { name: "试探", group_no: `g_${tag}` }, "probe-once"),
        yield* post(prober, "/work-groups", { name: "试探", group_no: `g_${tag}` }, "probe-once")
      ]
      expect(tries).toEqual([
        "400 duplicate_wechat_number",
        "400 duplicate_phone",
        "400 duplicate_device_id",
        "400 duplicate_group_no",
        "400 duplicate_group_no replayed"
      ])
      // The owner (not masking) is told the same, uncounted; another refusal is not counted either.
      expect(yield* post(owner, "/work-wechats", { wechat_number: `other2_${tag}`, phone })).toBe("400 duplicate_phone")
      expect(yield* post(prober, "/work-wechats", { wechat_number: "" })).toBe("400 invalid_parameter")

      const { samples } = yield* scrape(baseUrl)
      expect(valueOf(samples, "open_duplicate_refusals_total", { app_key: prober.appKey })).toBe(4)
      expect(hasSeries(samples, "open_duplicate_refusals_total", { app_key: owner.appKey })).toBe(false)
    }))

  it.effect("the database pool is measured: connections in use, idle, waiting and the limit", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const { samples } = yield* scrape(baseUrl)
      expect(valueOf(samples, "db_pool_connections_max", { pool: "test" })).toBeGreaterThanOrEqual(10)
      expect(hasSeries(samples, "db_pool_connections_in_use", { pool: "test" })).toBe(true)
      expect(hasSeries(samples, "db_pool_connections_idle", { pool: "test" })).toBe(true)
      expect(hasSeries(samples, "db_pool_waiting", { pool: "test" })).toBe(true)
    }))

  it.effect("queue depth moves: card tasks enqueued with no daemon show in depth and age; processed, they leave it and count as runs", () =>
    Effect.gen(function*() {
      const { baseUrl, client, credentials } = yield* signedClient()
      const company = yield* client.companies.create({ payload: { name: "队列婚介" } })
      const matchmaker = yield* client.matchmakers.create({ payload: { name: "队列红娘", company_id: company.id } })
      const queue = { queue: "card-tasks" }
      const base = yield* scrape(baseUrl)
      const upload = Effect.flatMap(
        Effect.promise(() => formBytes(cardForm(uniquePng(), { matchmaker_id: String(matchmaker.id) }))),
        ({ body, contentType }) =>
          rawRequest(baseUrl, { method: "POST", path: `${BASE}/guests/create-from-card`, body, contentType, credentials })
      )
      const taskIds: Array<string> = []
      const firstUpload = performance.now()
      for (let i = 0; i < 3; i++) {
        const r = yield* upload
        expect(r.status).toBe(200)
        taskIds.push(r.json.data.task_id)
      }
      const waiting = yield* scrape(baseUrl)
      expect(valueOf(waiting.samples, "queue_depth", queue)).toBe(valueOf(base.samples, "queue_depth", queue) + 3)
      // The oldest waits since its upload: more than nothing, at most the time since the first upload.
      const age = valueOf(waiting.samples, "queue_oldest_age_seconds", queue)
      expect(age).toBeGreaterThan(0)
      expect(age).toBeLessThanOrEqual((performance.now() - firstUpload) / 1000 + 1)

      // A daemon's card runner in this process takes them.
      const sql = yield* SqlClient.SqlClient
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(Layer.fresh(CardTasksJob))
        yield* eventually(
          "the card tasks to be done",
          sql<{ n: number }>`SELECT count(*)::int AS n FROM card_tasks WHERE task_id IN ${sql.in(taskIds)} AND status = 'done'`,
          (rows) => rows[0]!.n === 3
        )
      }))
      const done = yield* scrape(baseUrl)
      expect(valueOf(done.samples, "queue_depth", queue)).toBe(valueOf(base.samples, "queue_depth", queue))
      const job = { job: "card-tasks" }
      expect(valueOf(done.samples, "job_runs_total", job) - valueOf(waiting.samples, "job_runs_total", job)).toBe(3)
      expect(valueOf(done.samples, "job_run_duration_seconds_count", job) - valueOf(waiting.samples, "job_run_duration_seconds_count", job))
        .toBe(3)
      for (const name of ["webhook-deliveries", "follow-up-generate", "time-moves"]) {
        expect(hasSeries(done.samples, "queue_depth", { queue: name }), name).toBe(true)
      }
    }))

  it.effect("admin status: the clients, and a webhook backlog per client while no daemon delivers", () =>
    Effect.gen(function*() {
      const { client, credentials } = yield* signedClient()
      yield* runAdmin(["clients", "webhook", credentials.appKey, "--url", "http://127.0.0.1:9/hook", "--events", "guest.created"])
      const company = yield* client.companies.create({ payload: { name: "积压婚介" } })
      for (const name of ["积压一", "积压二"]) yield* client.guests.create({ payload: { name, gender: "female", company_id: company.id } })
      // One failed attempt (as a daemon records it when the receiver answers 500).
      const sql = yield* SqlClient.SqlClient
      const before = (yield* runAdmin(["status"])) as unknown as { queues: Array<{ queue: string; failures_last_hour: number }> }
      yield* sql`INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, duration_ms, status_code, worker, event_created_at)
        SELECT d.id, 1, now(), 12, 500, 'test', d.event_created_at FROM webhook_deliveries d JOIN clients c ON c.id = d.client_id
        WHERE c.app_key = ${credentials.appKey} ORDER BY d.id LIMIT 1`
      const status = (yield* runAdmin(["status"])) as unknown as {
        clients: { total: number; active: number; webhooks_on: number }
        queues: Array<{ queue: string; depth: number; due: number; failures_last_hour: number }>
        webhook_backlog: Array<{ app_key: string; pending: number; due: number; failed: number; webhook_enabled: boolean }>
        daemons: { alive: number }
      }
      expect(status.clients.total).toBeGreaterThanOrEqual(1)
      expect(status.clients.webhooks_on).toBeGreaterThanOrEqual(1)
      expect(status.webhook_backlog.find((b) => b.app_key === credentials.appKey)).toMatchObject({
        pending: 2,
        due: 2,
        failed: 0,
        webhook_enabled: true
      })
      const hooks = status.queues.find((q) => q.queue === "webhook-deliveries")!
      expect(hooks.depth).toBeGreaterThanOrEqual(2)
      expect(hooks.failures_last_hour - before.queues.find((q) => q.queue === "webhook-deliveries")!.failures_last_hour).toBe(1)
      expect(status.queues.map((q) => q.queue)).toEqual(["card-tasks", "webhook-deliveries", "follow-up-generate", "time-moves"])
    }))
})

// ---------------------------------------------------------------------------------------------

const proxied = databaseThroughProxy()

layer(testServerLayer({}, undefined, proxied.layer))("readiness without a database", (it) => {
  it.effect("/readyz is 503 service_unavailable while the database is gone, /healthz stays 200, and both recover", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      expect((yield* get(baseUrl, "/readyz")).status).toBe(200)
      yield* Effect.promise(() => proxied.proxy().down())
      const gone = yield* get(baseUrl, "/readyz")
      expect(gone.status).toBe(503)
      expect(gone.json).toMatchObject({ code: 503, data: { error: "service_unavailable" } })
      expect((yield* get(baseUrl, "/healthz")).status).toBe(200)
      // /metrics still answers (the queue gauges keep their last values).
      expect((yield* scrape(baseUrl)).status).toBe(200)
      yield* Effect.promise(() => proxied.proxy().up())
      yield* eventually("readiness to come back", Effect.map(get(baseUrl, "/readyz"), (r) => r.status), (s) => s === 200)
    }))
})

// ---------------------------------------------------------------------------------------------

/** The real clock, for what runs on effect's own timers inside a test (the OTLP exporter's batches). */
const liveClock = Layer.succeed(Clock.Clock)(Clock.Clock.defaultValue())

describe("traces", () => {
  it.effect(
    "with an OTLP endpoint, a request's span carries its request id and route, its service method and a job run have their spans",
    () =>
      Effect.gen(function*() {
        const collector = yield* makeReceiver
        const requestId = `trace-${Date.now()}`
        yield* Effect.scoped(
          Effect.gen(function*() {
            const { baseUrl } = yield* TestServer
            const credentials = yield* createCredentials()
            const r = yield* rawRequest(baseUrl, { path: `${BASE}/companies`, credentials, headers: { "x-request-id": requestId } })
            expect(r.status).toBe(200)
            // One pass of a periodic job (the layer runs it at once).
            yield* Layer.build(periodicJob({ name: "trace-probe", every: "1 hour", run: Effect.void }))
            yield* eventually("the probe's pass to end", jobSnapshots, (jobs) => (jobs["trace-probe"]?.runs ?? 0) >= 1)
          }).pipe(
            // The tracer below the server (its request fibers inherit it) and in this test's own
            // context (the job built here). Released at the end of the scope, which flushes the
            // batch to the collector.
            Effect.provide(
              testServerLayer().pipe(
                Layer.provideMerge(otlpTracingLayer({ endpoint: collector.url, serviceName: "obs-test" }).pipe(Layer.provide(liveClock)))
              )
            )
          )
        )
        const posts = collector.received.filter((r) => r.path === "/v1/traces")
        expect(posts.length).toBeGreaterThan(0)
        interface Span {
          readonly name: string
          readonly attributes: ReadonlyArray<{ key: string; value: { stringValue?: string } }>
        }
        const spans: Array<Span> = posts.flatMap((p) => {
          const body = JSON.parse(p.body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Span> }> }> }
          return body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans))
        })
        const attr = (s: Span, key: string) => s.attributes.find((a) => a.key === key)?.value.stringValue
        const request = spans.find((s) => attr(s, "http.request_id") === requestId)
        expect(request?.name).toBe("http.server GET")
        expect(attr(request!, "http.route")).toBe(`${BASE}/companies`)
        expect(spans.some((s) => s.name === "Job.trace-probe")).toBe(true)
        // The service method the handler called has its span (src/services/common.ts method).
        expect(spans.some((s) => s.name === "Companies.list")).toBe(true)
        // The SQL the request ran is in the same export.
        // (Named as OpenTelemetry names database spans: by the database, with db.system.name.)
        expect(spans.some((s) => attr(s, "db.system.name") === "postgresql" && attr(s, "db.query.text") !== undefined)).toBe(true)
        expect(posts[0]!.headers["content-type"]).toMatch(/json/)
      }),
    { timeout: 60_000 }
  )
})

describe("job runs", () => {
  it.effect("each run is recorded: a failure counts with its error, an interrupted run (shutdown) counts as neither", () =>
    Effect.gen(function*() {
      const job = "measured-probe"
      yield* Effect.void.pipe(measuredRun(job, "periodic"))
      yield* Effect.ignore(Effect.fail(new Error("receiver down")).pipe(measuredRun(job, "periodic")))
      const started = yield* Deferred.make<void>()
      const fiber = yield* Effect.forkChild(
        Effect.andThen(Deferred.succeed(started, undefined), Effect.never).pipe(measuredRun(job, "periodic"))
      )
      yield* Deferred.await(started)
      expect((yield* jobSnapshots)[job]?.running).toBe(1)
      yield* Fiber.interrupt(fiber)
      expect((yield* jobSnapshots)[job]).toMatchObject({
        kind: "periodic",
        runs: 2,
        failures: 1,
        failures_last_hour: 1,
        running: 0,
        last_outcome: "failed",
        last_error: expect.stringContaining("receiver down")
      })
    }).pipe(Effect.provideService(JobActivity, new Map())))
})
