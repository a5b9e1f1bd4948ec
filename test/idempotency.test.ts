// Safe retries with Idempotency-Key (DECISIONS §11) end to end: a repeat is answered from the
// kept response byte for byte on any instance, a different request under the key is 422,
// concurrent repeats wait for the first and replay it (409 only past the wait), a 5xx rolls back
// and leaves the key free, and a lost answer of a committed batch is retried through another
// instance without creating the guests twice. test/idempotencyCrash.test.ts kills instances.
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import * as net from "node:net"

import { expect, it as plainIt, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"

import { Signer } from "../src/auth/Signer.js"
import { makeOpenApiClient } from "../src/client/Client.js"
import { eventually } from "./support/eventually.js"
import { cardForm, formBytes } from "./support/forms.js"
import { createCredentials, serverLayer, testAppLayer, TestServer } from "./support/harness.js"
import { signedHeaders } from "./support/processes.js"

const BASE = "/api/open/v1"
const PNG = new Uint8Array(readFileSync(new URL("./fixtures/cards/card-clean.png", import.meta.url)))

interface Sent {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

/** A signed request with a fresh nonce every time (as a retry must be), answered as raw text. */
const send = (
  baseUrl: string,
  credentials: { readonly appKey: string; readonly appSecret: string },
  o: {
    readonly method?: string
    readonly path: string
    readonly body?: string | { readonly body: Uint8Array; readonly contentType: string }
    readonly key?: string
  }
) =>
  Effect.promise(async (): Promise<Sent> => {
    const method = o.method ?? "POST"
    const body = typeof o.body === "object" ? o.body.body : new TextEncoder().encode(o.body ?? "")
    const headers: Record<string, string> = {
      "content-type": typeof o.body === "object" ? o.body.contentType : "application/json",
      ...signedHeaders(credentials, method, o.path, body),
      ...(o.key !== undefined ? { "idempotency-key": o.key } : {})
    }
    const res = await fetch(`${baseUrl}${o.path}`, { method, headers, ...(method === "GET" ? {} : { body }) })
    return { status: res.status, headers: res.headers, text: await res.text() }
  })

const companyCount = (name: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM companies WHERE name = ${name}`, (rows) => rows[0]!.n)
  )

/** Locks other sessions hold on the kept keys: a first attempt that claimed its key holds one. */
const keyLocks = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
      WHERE c.relname = 'idempotency_keys' AND l.pid <> pg_backend_pid()`,
    (rows) => rows[0]!.n
  ))

/** Waits until one statement of another session that contains `statement` waits for a lock. */
const waitingOnLock = (what: string, statement: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    eventually(
      what,
      // pg_stat_activity is read once per transaction unless its snapshot is cleared.
      Effect.andThen(
        sql`SELECT pg_stat_clear_snapshot()`,
        sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE ${`%${statement}%`}`
      ),
      (rows) => rows[0]!.n === 1
    ))

const uniqueName = () => `幂等${Math.random().toString(36).slice(2, 10)}`

// A repeat waits this long for a first attempt that still runs (short, for the 409 test).
const WAIT_SECONDS = 3

const twoServers = testAppLayer({ idempotencyWaitSeconds: WAIT_SECONDS }).pipe(Layer.provideMerge(FetchHttpClient.layer))

layer(twoServers)("Idempotency-Key", (it) => {
  it.effect("a repeat is answered from the kept response byte for byte, marked Idempotent-Replayed, on another instance too", () =>
    Effect.gen(function*() {
      const a = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const b = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const credentials = yield* createCredentials()
      const name = uniqueName()
      const body = JSON.stringify({ name })
      const first = yield* send(a.baseUrl, credentials, { path: `${BASE}/companies`, body, key: "order-1" })
      expect(first.status).toBe(200)
      expect(first.headers.get("idempotent-replayed")).toBeNull()
      const again = yield* send(b.baseUrl, credentials, { path: `${BASE}/companies`, body, key: "order-1" })
      expect(again.status).toBe(200)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.text).toBe(first.text)
      expect(yield* companyCount(name)).toBe(1)
      // Without a key, or under another key, the same body runs again.
      expect((yield* send(a.baseUrl, credentials, { path: `${BASE}/companies`, body })).status).toBe(200)
      expect((yield* send(a.baseUrl, credentials, { path: `${BASE}/companies`, body, key: "order-2" })).status).toBe(200)
      expect(yield* companyCount(name)).toBe(3)
    }))

  it.effect("the same key with a different request is 422 idempotency_key_reused; keys are scoped to the client", () =>
    Effect.gen(function*() {
      const { baseUrl } = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const credentials = yield* createCredentials()
      const other = yield* createCredentials()
      const first = yield* send(baseUrl, credentials, {
        path: `${BASE}/companies`,
        body: JSON.stringify({ name: uniqueName() }),
        key: "k-1"
      })
      expect(first.status).toBe(200)
      const reused = yield* send(baseUrl, credentials, {
        path: `${BASE}/companies`,
        body: JSON.stringify({ name: uniqueName() }),
        key: "k-1"
      })
      expect(reused.status).toBe(422)
      expect(JSON.parse(reused.text)).toMatchObject({ code: 422, data: { error: "idempotency_key_reused" } })
      const otherPath = yield* send(baseUrl, credentials, { path: `${BASE}/matchmakers`, body: JSON.stringify({ name: "王" }), key: "k-1" })
      expect(otherPath.status).toBe(422)
      // Another client's identical key is its own.
      const theirs = yield* send(baseUrl, other, { path: `${BASE}/companies`, body: JSON.stringify({ name: uniqueName() }), key: "k-1" })
      expect(theirs.status).toBe(200)
      expect(theirs.headers.get("idempotent-replayed")).toBeNull()
    }))

  it.effect("concurrent repeats under one key run once: each waits for the first and replays its bytes, marked Idempotent-Replayed", () =>
    Effect.gen(function*() {
      const a = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const b = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const credentials = yield* createCredentials()
      const name = uniqueName()
      const body = JSON.stringify({ name })
      const answers = yield* Effect.all(
        Array.from(
          { length: 12 },
          (_, i) => send(i % 2 === 0 ? a.baseUrl : b.baseUrl, credentials, { path: `${BASE}/companies`, body, key: "burst" })
        ),
        { concurrency: "unbounded" }
      )
      expect(yield* companyCount(name)).toBe(1)
      expect(answers.map((r) => r.status)).toEqual(Array.from({ length: 12 }, () => 200))
      const ran = answers.filter((r) => r.headers.get("idempotent-replayed") === null)
      expect(ran).toHaveLength(1)
      const replays = answers.filter((r) => r.headers.get("idempotent-replayed") === "true")
      expect(replays).toHaveLength(11)
      for (const r of replays) expect(r.text).toBe(ran[0]!.text)
    }))

  it.effect("a repeat waits IDEMPOTENCY_WAIT_SECONDS for a first attempt that still runs, then answers 409 idempotency_key_in_progress with Retry-After; after the commit, the replay", () =>
    Effect.gen(function*() {
      const a = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const b = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const credentials = yield* createCredentials()
      const sql = yield* SqlClient.SqlClient
      const name = uniqueName()
      const body = JSON.stringify({ name })
      // Another session holds the companies table: the first attempt claims the key, then waits.
      const { first, repeat } = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`LOCK TABLE companies IN SHARE ROW EXCLUSIVE MODE`
        const first = yield* Effect.forkChild(send(a.baseUrl, credentials, { path: `${BASE}/companies`, body, key: "slow" }))
        yield* waitingOnLock("the first attempt to wait for the companies table", "INSERT INTO companies")
        // It holds its key, uncommitted, while it runs.
        expect(yield* keyLocks).toBeGreaterThanOrEqual(1)
        const started = Date.now()
        const repeat = yield* send(b.baseUrl, credentials, { path: `${BASE}/companies`, body, key: "slow" })
        expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_SECONDS * 1000 - 100)
        return { first, repeat }
      }))
      expect(repeat.status).toBe(409)
      expect(JSON.parse(repeat.text)).toMatchObject({ code: 409, data: { error: "idempotency_key_in_progress" } })
      expect(repeat.headers.get("retry-after")).toBe(String(WAIT_SECONDS))
      const answer = yield* Fiber.join(first)
      expect(answer.status).toBe(200)
      const replay = yield* send(b.baseUrl, credentials, { path: `${BASE}/companies`, body, key: "slow" })
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.text).toBe(answer.text)
      expect(yield* companyCount(name)).toBe(1)
    }))

  it.effect("a 5xx rolls back and is not kept: the key is free and the retry under it runs for real", () =>
    Effect.gen(function*() {
      const { baseUrl } = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const credentials = yield* createCredentials()
      const sql = yield* SqlClient.SqlClient
      const name = uniqueName()
      const body = JSON.stringify({ name })
      const keys = Effect.map(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM idempotency_keys WHERE app_key = ${credentials.appKey} AND key = 'flaky'`,
        (rows) => rows[0]!.n
      )
      yield* sql`ALTER TABLE companies RENAME TO companies_away`
      const failed = yield* send(baseUrl, credentials, { path: `${BASE}/companies`, body, key: "flaky" }).pipe(
        Effect.ensuring(Effect.orDie(sql`ALTER TABLE companies_away RENAME TO companies`))
      )
      expect(failed.status).toBe(500)
      expect(yield* keys).toBe(0)
      const retried = yield* send(baseUrl, credentials, { path: `${BASE}/companies`, body, key: "flaky" })
      expect(retried.status).toBe(200)
      expect(retried.headers.get("idempotent-replayed")).toBeNull()
      expect(yield* companyCount(name)).toBe(1)
      expect(yield* keys).toBe(1)
    }))

  it.effect("a POST that creates nothing (parse-card) is computed outside the key's transaction, then kept and replayed", () =>
    Effect.gen(function*() {
      const { baseUrl } = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const credentials = yield* createCredentials()
      const sql = yield* SqlClient.SqlClient
      const company = JSON.parse(
        (yield* send(baseUrl, credentials, { path: `${BASE}/companies`, body: JSON.stringify({ name: uniqueName() }) })).text
      ).data.id as number
      const matchmaker = JSON.parse(
        (yield* send(baseUrl, credentials, {
          path: `${BASE}/matchmakers`,
          body: JSON.stringify({ name: "幂等红娘", company_id: company })
        }))
          .text
      ).data.id as number
      const form = yield* Effect.promise(() => formBytes(cardForm(PNG, { matchmaker_id: String(matchmaker) })))
      const path = `${BASE}/guests/parse-card`
      const first = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`LOCK TABLE matchmakers IN ACCESS EXCLUSIVE MODE`
        const first = yield* Effect.forkChild(send(baseUrl, credentials, { path, body: form, key: "parse-1" }))
        yield* waitingOnLock("the parse to wait for the matchmakers table", "matchmakers")
        // While it computes, it holds no key.
        expect(yield* keyLocks).toBe(0)
        return first
      }))
      const answer = yield* Fiber.join(first)
      expect(answer.status).toBe(200)
      expect(answer.headers.get("idempotent-replayed")).toBeNull()
      const again = yield* send(baseUrl, credentials, { path, body: form, key: "parse-1" })
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.text).toBe(answer.text)
      const other = yield* Effect.promise(() => formBytes(cardForm(PNG)))
      expect((yield* send(baseUrl, credentials, { path, body: other, key: "parse-1" })).status).toBe(422)
    }))

  it.effect("a 4xx answer is kept like any other, one refused by a failed statement included", () =>
    Effect.gen(function*() {
      const { baseUrl } = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const credentials = yield* createCredentials()
      const bad = yield* send(baseUrl, credentials, { path: `${BASE}/companies`, body: JSON.stringify({ name: "x" }), key: "bad-one" })
      expect(bad.status).toBe(400)
      const again = yield* send(baseUrl, credentials, { path: `${BASE}/companies`, body: JSON.stringify({ name: "x" }), key: "bad-one" })
      expect(again.status).toBe(400)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.text).toBe(bad.text)
      // A refusal that comes from a failed statement (a unique violation) is kept too: the
      // statement's failure is rolled back to the attempt's savepoint, the key's row stays.
      const groupNo = `G${Math.random().toString(36).slice(2, 10)}`
      const group = JSON.stringify({ name: "幂等群", group_no: groupNo })
      expect((yield* send(baseUrl, credentials, { path: `${BASE}/work-groups`, body: group })).status).toBe(200)
      const taken = yield* send(baseUrl, credentials, { path: `${BASE}/work-groups`, body: group, key: "taken-no" })
      expect(taken.status).toBe(400)
      expect(JSON.parse(taken.text).data.error).toBe("duplicate_group_no")
      const takenAgain = yield* send(baseUrl, credentials, { path: `${BASE}/work-groups`, body: group, key: "taken-no" })
      expect(takenAgain.headers.get("idempotent-replayed")).toBe("true")
      expect(takenAgain.text).toBe(taken.text)
    }))

  it.effect("a key that is not 1 to 255 printable ASCII characters is 400 invalid_parameter", () =>
    Effect.gen(function*() {
      const { baseUrl } = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const credentials = yield* createCredentials()
      for (const key of ["x".repeat(256), "", "tab\there"]) {
        const res = yield* send(baseUrl, credentials, { path: `${BASE}/companies`, body: JSON.stringify({ name: uniqueName() }), key })
        expect(res.status, JSON.stringify(key)).toBe(400)
        expect(JSON.parse(res.text).data.issues[0].path).toBe("Idempotency-Key")
      }
      const longest = yield* send(baseUrl, credentials, {
        path: `${BASE}/companies`,
        body: JSON.stringify({ name: uniqueName() }),
        key: "~".repeat(255)
      })
      expect(longest.status).toBe(200)
    }))

  it.effect("the connection is cut after a batch committed; the retry through the other instance finds 50 guests, not 100", () =>
    Effect.gen(function*() {
      const a = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const b = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const credentials = yield* createCredentials()
      const company = JSON.parse(
        (yield* send(a.baseUrl, credentials, { path: `${BASE}/companies`, body: JSON.stringify({ name: uniqueName() }) })).text
      )
        .data.id as number
      const tag = Math.random().toString(36).slice(2, 8)
      const guests = Array.from(
        { length: 50 },
        (_, i) => ({ name: `断${tag}${i}`, gender: i % 2 === 0 ? "male" : "female", company_id: company })
      )
      const body = new TextEncoder().encode(JSON.stringify({ guests }))
      const path = `${BASE}/guests/batch`

      // The first attempt: the whole request is written; once the batch has committed, the client
      // hangs up without reading the answer (as when a network drops it).
      const sql = yield* SqlClient.SqlClient
      const committed = Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM guests WHERE name LIKE ${`断${tag}%`}`, (r) => r[0]!.n)
      const socket = yield* Effect.promise(() =>
        new Promise<net.Socket>((resolve) => {
          const { port } = new URL(a.baseUrl)
          const h = signedHeaders(credentials, "POST", path, body)
          const s = net.connect(Number(port), "127.0.0.1", () => {
            s.write(
              `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
                `X-App-Key: ${h["x-app-key"]}\r\nX-Timestamp: ${h["x-timestamp"]}\r\nX-Nonce: ${h["x-nonce"]}\r\n` +
                `X-Signature: ${h["x-signature"]}\r\nIdempotency-Key: batch-1\r\n\r\n`
            )
            s.write(body, () => resolve(s))
          })
          s.on("error", () => {})
        })
      )
      yield* eventually("the first request's 50 guests committed", committed, (n) => n >= 50)
      socket.destroy()
      expect(yield* committed).toBe(50)

      // The retry (fresh nonce, same key) on the other instance: 409 while the first still runs, then its answer.
      const retry = yield* eventually(
        "the retry to stop answering 409",
        send(b.baseUrl, credentials, { path, body: new TextDecoder().decode(body), key: "batch-1" }),
        (r) => r.status !== 409
      )
      expect(retry.status).toBe(200)
      expect(retry.headers.get("idempotent-replayed")).toBe("true")
      expect(JSON.parse(retry.text).data.success_count).toBe(50)
      expect(yield* committed).toBe(50)
      // Every later repeat carries the same bytes.
      const third = yield* send(a.baseUrl, credentials, { path, body: new TextDecoder().decode(body), key: "batch-1" })
      expect(third.text).toBe(retry.text)
    }))

  it.effect("an expired key is free for a new request, whose claim replaces the expired row (one row per key; whole days of expired keys go by partition, test/keyRetention.test.ts)", () =>
    Effect.gen(function*() {
      const { baseUrl } = Context.get(yield* Layer.build(Layer.fresh(serverLayer)), TestServer)
      const credentials = yield* createCredentials()
      const sql = yield* SqlClient.SqlClient
      const first = yield* send(baseUrl, credentials, {
        path: `${BASE}/companies`,
        body: JSON.stringify({ name: uniqueName() }),
        key: "old"
      })
      expect(first.status).toBe(200)
      yield* sql`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE app_key = ${credentials.appKey}`
      // Expired but not yet pruned: another request under the key runs.
      const name = uniqueName()
      const fresh = yield* send(baseUrl, credentials, { path: `${BASE}/companies`, body: JSON.stringify({ name }), key: "old" })
      expect(fresh.status).toBe(200)
      expect(fresh.headers.get("idempotent-replayed")).toBeNull()
      expect(yield* companyCount(name)).toBe(1)

      const rows = sql<
        { fingerprint: string }
      >`SELECT fingerprint FROM idempotency_keys WHERE app_key = ${credentials.appKey} AND key = 'old'`
      expect(yield* rows).toHaveLength(1)
      yield* sql`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE app_key = ${credentials.appKey}`
      const third = yield* send(baseUrl, credentials, {
        path: `${BASE}/companies`,
        body: JSON.stringify({ name: uniqueName() }),
        key: "old"
      })
      expect(third.status).toBe(200)
      expect(third.headers.get("idempotent-replayed")).toBeNull()
      expect(yield* rows).toHaveLength(1)
    }))
})

plainIt.live(
  "the typed client sends one Idempotency-Key per POST and keeps it, re-signed with a fresh nonce, across its retries",
  () =>
    Effect.gen(function*() {
      const seen: Array<{ key: string | undefined; nonce: string | undefined }> = []
      const company = {
        id: 7,
        name: "重试公司",
        contact_name: null,
        contact_phone: null,
        province: null,
        city: null,
        district: null,
        address: null,
        credit_code: null,
        logo_url: null,
        company_type: "normal",
        cert_level: "none",
        status: "active",
        created_at: "2026-11-23 12:00:00",
        updated_at: "2026-11-23 12:00:00"
      }
      const server = createServer((req, res) => {
        req.resume()
        req.on("end", () => {
          seen.push({ key: req.headers["idempotency-key"] as string | undefined, nonce: req.headers["x-nonce"] as string | undefined })
          if (seen.length < 3) {
            res.writeHead(503, { "content-type": "application/json", "retry-after": "0" })
            res.end(JSON.stringify({ code: 503, message: "down", data: { error: "service_unavailable", retry_after: 0 } }))
          } else {
            res.writeHead(200, { "content-type": "application/json" })
            res.end(JSON.stringify({ code: 200, message: "ok", data: company }))
          }
        })
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))),
        () => Effect.promise(() => new Promise<void>((r) => server.close(() => r())))
      )
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const client = yield* makeOpenApiClient(`http://127.0.0.1:${port}`, { appKey: "ak_x", appSecret: "s" }, { retries: 3 }).pipe(
        Effect.provide(Signer.layer)
      )
      const created = yield* client.companies.create({ payload: { name: "重试公司" } })
      expect(created.id).toBe(7)
      expect(seen).toHaveLength(3)
      expect(new Set(seen.map((s) => s.key)).size).toBe(1)
      expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/)
      expect(new Set(seen.map((s) => s.nonce)).size).toBe(3)
      // A second call is another request: another key.
      yield* client.companies.create({ payload: { name: "重试公司" } })
      expect(seen[3]!.key).not.toBe(seen[0]!.key)
    }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
)

plainIt.live(
  "the typed client's retry schedule stops after `retries` more attempts and answers the last answer (a typed 503)",
  () =>
    Effect.gen(function*() {
      let attempts = 0
      const server = createServer((req, res) => {
        req.resume()
        req.on("end", () => {
          attempts++
          res.writeHead(503, { "content-type": "application/json", "retry-after": "0" })
          res.end(JSON.stringify({ code: 503, message: "down", data: { error: "service_unavailable", retry_after: 0 } }))
        })
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))),
        () => Effect.promise(() => new Promise<void>((r) => server.close(() => r())))
      )
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const client = yield* makeOpenApiClient(`http://127.0.0.1:${port}`, { appKey: "ak_x", appSecret: "s" }, { retries: 2 }).pipe(
        Effect.provide(Signer.layer)
      )
      const failure = yield* Effect.flip(client.companies.list({ query: {} }))
      expect(attempts).toBe(3)
      expect(failure._tag).toBe("DatabaseUnavailable")
      // No retries: one attempt.
      const once = yield* makeOpenApiClient(`http://127.0.0.1:${port}`, { appKey: "ak_x", appSecret: "s" }, { retries: 0 }).pipe(
        Effect.provide(Signer.layer)
      )
      yield* Effect.flip(once.companies.list({ query: {} }))
      expect(attempts).toBe(4)
    }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
)
