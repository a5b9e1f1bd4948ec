// Webhook destinations end to end (DECISIONS §13): the typed client against an API server, the
// daemon's dispatcher running in-process on the real clock, local receivers, and a fake resolver
// that a test points where it likes. Without WEBHOOK_ALLOWED_NETWORKS (the default) a receiver on
// loopback is refused when set and when attempted (DNS rebinding); with it, reached; an attempt
// connects to the address it checked, with TLS asking for the name; what a client sees of an attempt
// names no address (also in records kept from before, rewritten by migration 0021).
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createServer as createTlsServer } from "node:tls"

import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as SqlClient from "effect/sql/SqlClient"

import { WebhookJobsLive } from "../jobs/Webhooks.js"
import type { AppConfigShape } from "../src/Config.js"
import { parseAllowedNetworks } from "../src/domain/destinations.js"
import { findFreePort } from "../src/sql/embedded.js"
import { splitSqlStatements } from "../src/sql/splitSql.js"
import { FakeDns } from "./fakes/dns.js"
import { eventually } from "./support/eventually.js"
import { liveAppLayer, LOOPBACK_ADMITTED, serverLayer, signedClient } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"
import { makeReceiver, makeReceiverOn, verify } from "./support/receiver.js"

const liveLayer = (allowed: AppConfigShape["webhookAllowedNetworks"]) =>
  Layer.mergeAll(serverLayer, WebhookJobsLive).pipe(
    Layer.provideMerge(liveAppLayer({
      rateLimitBurst: 1_000_000,
      webhookRetrySchedule: [300, 300],
      webhookTimeoutMs: 5000,
      webhookPollSeconds: 1,
      webhookAllowedNetworks: allowed
    })),
    Layer.provideMerge(FetchHttpClient.layer),
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
  )

type Api = Effect.Success<ReturnType<typeof signedClient>>["client"]

/** A company created through the API: the event every test's client subscribes to. */
const companyCreated = (client: Api) => client.companies.create({ payload: { name: "目的地婚介" } })

/** The caller's one company.created delivery, once it is no longer pending (succeeded, or failed after its schedule). */
const settled = (client: Api) =>
  eventually(
    "the delivery settled",
    Effect.map(client.selfService.listDeliveries({ query: { page_size: 100 } }), (page) =>
      page.list.find((d) => d.type === "company.created")),
    (d) =>
      d !== undefined && d.status !== "pending"
  ).pipe(Effect.map((d) => d!))

/** Texts a client must never be shown: addresses, ports, system error codes. */
const LEAKS = /127\.0\.0\.\d|10\.0\.0\.\d|93\.184|::1|::ffff|ECONN|ENOTFOUND|EAI_/

layer(liveLayer([]), { excludeTestServices: true, timeout: 60_000 })("webhook destinations, WEBHOOK_ALLOWED_NETWORKS unset", (it) => {
  it.effect("PUT /webhook refuses loopback in every notation, metadata and private addresses, and names that resolve to them or do not resolve: 400 invalid_parameter on url, destination_not_allowed, no address", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      const port = new URL(receiver.url).port
      const dns = yield* FakeDns
      dns.set("evil.test", ["127.0.0.1"])
      dns.set("mixed.test", ["8.8.8.8", "10.0.0.1"])
      dns.set("metadata.test", ["::ffff:169.254.169.254"])
      const { baseUrl, client, credentials } = yield* signedClient()
      const urls = [
        `${receiver.url}/hook`,
        `http://127.1:${port}/hook`,
        `http://2130706433:${port}/hook`,
        `http://0x7f.1:${port}/hook`,
        `http://[::ffff:127.0.0.1]:${port}/hook`,
        `http://[::1]:${port}/hook`,
        "http://169.254.169.254/latest/meta-data/",
        "http://100.100.100.200/latest/meta-data/",
        "http://10.0.0.5:8080/admin",
        "http://[64:ff9b::7f00:1]/",
        `http://evil.test:${port}/hook`,
        "https://mixed.test/hook",
        "https://metadata.test/",
        "https://nowhere.test/hook"
      ]
      for (const url of urls) {
        const res = yield* rawRequest(baseUrl, {
          method: "PUT",
          path: "/api/open/v1/webhook",
          body: JSON.stringify({ url, events: ["company.created"] }),
          credentials
        })
        expect([url, res.status, res.json.data.error, res.json.data.issues.map((i: { path: string }) => i.path)])
          .toEqual([url, 400, "invalid_parameter", ["url"]])
        const message: string = res.json.data.issues[0].message
        expect(message).toMatch(/^destination_not_allowed: /)
        expect(res.json.message).toBe(message)
        expect(message).not.toMatch(LEAKS)
      }
      // The typed client sees the same refusal; nothing was set, and nothing was sent.
      const refused = yield* Effect.flip(client.selfService.updateWebhook({ payload: { url: `http://evil.test:${port}/hook` } }))
      expect(refused).toMatchObject({
        _tag: "InvalidInput",
        issues: [{ path: "url", message: expect.stringMatching(/^destination_not_allowed: /) }]
      })
      expect(yield* client.selfService.getWebhook()).toMatchObject({ url: null, enabled: false })
      expect(receiver.received).toEqual([])
    }))

  it.effect("a name public when set and loopback when attempted (DNS rebinding): every attempt fails `destination not allowed` on the normal schedule, the receiver gets nothing, the client sees no address", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver
      const dns = yield* FakeDns
      const { client } = yield* signedClient()
      // Public when set (never connected to: it is rebound before any attempt).
      dns.set("rebind.test", ["93.184.215.14"])
      const url = `http://rebind.test:${new URL(receiver.url).port}/hook`
      expect(yield* client.selfService.updateWebhook({ payload: { url, events: ["company.created"] } })).toMatchObject({
        url,
        enabled: true
      })
      dns.set("rebind.test", ["127.0.0.1"])
      yield* companyCreated(client)
      const failed = yield* settled(client)
      expect(failed.status).toBe("failed")
      expect(failed.attempts.map((a) => [a.attempt, a.status_code, a.error, a.response]))
        .toEqual([[1, null, "destination not allowed", null], [2, null, "destination not allowed", null], [
          3,
          null,
          "destination not allowed",
          null
        ]])
      expect(receiver.received).toEqual([])
      expect(JSON.stringify(yield* client.selfService.listDeliveries({ query: {} }))).not.toMatch(LEAKS)
    }))

  it.effect("a name that stops resolving after it was set fails its attempts with `DNS lookup failed`", () =>
    Effect.gen(function*() {
      const dns = yield* FakeDns
      const { client } = yield* signedClient()
      dns.set("gone.test", ["93.184.215.14"])
      yield* client.selfService.updateWebhook({ payload: { url: "https://gone.test/hook", events: ["company.created"] } })
      dns.set("gone.test", [])
      yield* companyCreated(client)
      const failed = yield* settled(client)
      expect(failed.status).toBe("failed")
      expect(failed.attempts.map((a) => a.error)).toEqual(["DNS lookup failed", "DNS lookup failed", "DNS lookup failed"])
    }))

  it.effect("attempt records kept from before (the system's messages, with addresses; 500 characters) are rewritten by migration 0021 to the phrases and 500 bytes", () =>
    Effect.gen(function*() {
      const dns = yield* FakeDns
      const sql = yield* SqlClient.SqlClient
      const { client } = yield* signedClient()
      dns.set("legacy.test", ["93.184.215.14"])
      yield* client.selfService.updateWebhook({ payload: { url: "https://legacy.test/hook", events: ["company.created"] } })
      dns.set("legacy.test", [])
      yield* companyCreated(client)
      const delivery = yield* settled(client)
      const kept: ReadonlyArray<readonly [string, string]> = [
        ["ECONNREFUSED: connect ECONNREFUSED 10.0.0.5:8080", "connection refused"],
        ["no answer within 15000 ms", "timed out"],
        ["ENOTFOUND: getaddrinfo ENOTFOUND db.internal.corp", "DNS lookup failed"],
        ["UND_ERR_SOCKET: other side closed", "connection reset"],
        ["EHOSTUNREACH: connect EHOSTUNREACH 10.0.0.7:443", "host unreachable"],
        ["CERT_HAS_EXPIRED: certificate has expired", "TLS error"],
        ["fetch failed", "connection failed"],
        ["not sent: the client's webhook is off", "not sent: the client's webhook is off"],
        ["410 Gone: the client's webhook was turned off", "410 Gone: the client's webhook was turned off"]
      ]
      for (const [i, [error]] of kept.entries()) {
        yield* sql`INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, duration_ms, error, worker, event_created_at)
          SELECT id, ${100 + i}, now(), 1, ${error}, 'legacy', event_created_at FROM webhook_deliveries WHERE id = ${delivery.id}`
      }
      yield* sql`INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, duration_ms, status_code, response, worker, event_created_at)
        SELECT id, 200, now(), 1, 500, ${"中".repeat(500)}, 'legacy', event_created_at FROM webhook_deliveries WHERE id = ${delivery.id}`
      const migration = readFileSync(new URL("../migrations/0021_attempt_records_without_addresses.sql", import.meta.url), "utf8")
      for (const statement of splitSqlStatements(migration)) yield* sql.unsafe(statement)
      const attempts = (yield* settled(client)).attempts.filter((a) => a.attempt >= 100)
      expect(attempts.map((a) => a.error)).toEqual([...kept.map(([, phrase]) => phrase), null])
      expect(attempts.at(-1)!.response).toBe("中".repeat(166))
      expect(JSON.stringify(attempts)).not.toMatch(LEAKS)
    }))
})

layer(liveLayer(LOOPBACK_ADMITTED), { excludeTestServices: true, timeout: 60_000 })(
  "webhook destinations, WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8,::1/128",
  (it) => {
    it.effect("a receiver on loopback, by address or by a name resolving to it, is accepted and reached; the attempt shows its status and at most 500 bytes of the answer", () =>
      Effect.gen(function*() {
        const receiver = yield* makeReceiver
        receiver.reply(() => ({ status: 200, body: "中".repeat(400) }))
        const dns = yield* FakeDns
        dns.set("local.test", ["127.0.0.1", "::1"])
        for (const url of [`${receiver.url}/by-address`, `http://local.test:${new URL(receiver.url).port}/by-name`]) {
          const { client } = yield* signedClient()
          const set = yield* client.selfService.updateWebhook({ payload: { url, events: ["company.created"] } })
          const company = yield* companyCreated(client)
          const done = yield* settled(client)
          expect(done.status).toBe("succeeded")
          const path = new URL(url).pathname
          const [received] = receiver.received.filter((r) => r.path === path)
          expect(verify(set.signing_secret!, received!)).toMatchObject({ type: "company.created", data: { id: company.id } })
          expect(done.attempts).toHaveLength(1)
          expect(done.attempts[0]).toMatchObject({ status_code: 200, error: null, response: "中".repeat(166) })
          expect(Buffer.byteLength(done.attempts[0]!.response!, "utf8")).toBeLessThanOrEqual(500)
        }
      }))

    it.effect("https to a name: TLS asks for the name (SNI) while connecting to the checked address, and a certificate nobody trusts reads `TLS error`", () =>
      Effect.gen(function*() {
        // The names the client asks for in its hello (SNI); the client then refuses the certificate.
        const asked: Array<string> = []
        const server = createTlsServer({
          ...(yield* selfSignedCertificate("tls.test")),
          SNICallback: (name, use) => {
            asked.push(name)
            use(null, undefined)
          }
        }, (socket) => socket.destroy())
        server.on("tlsClientError", () => {})
        const port = yield* Effect.acquireRelease(
          Effect.promise(() =>
            new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))
          ),
          () => Effect.sync(() => server.close())
        )
        const dns = yield* FakeDns
        dns.set("tls.test", ["127.0.0.1"])
        const { client } = yield* signedClient()
        yield* client.selfService.updateWebhook({ payload: { url: `https://tls.test:${port}/hook`, events: ["company.created"] } })
        yield* companyCreated(client)
        const failed = yield* settled(client)
        expect(failed.attempts.map((a) => a.error)).toEqual(["TLS error", "TLS error", "TLS error"])
        expect(asked).toEqual(["tls.test", "tls.test", "tls.test"])
      }))

    it.effect("a receiver that refuses the connection: the attempt reads `connection refused`, with no address or port", () =>
      Effect.gen(function*() {
        const port = yield* Effect.promise(findFreePort)
        const { client } = yield* signedClient()
        yield* client.selfService.updateWebhook({ payload: { url: `http://127.0.0.1:${port}/closed`, events: ["company.created"] } })
        yield* companyCreated(client)
        const failed = yield* settled(client)
        expect(failed.status).toBe("failed")
        expect(failed.attempts.map((a) => [a.status_code, a.error, a.response])).toEqual([
          [null, "connection refused", null],
          [null, "connection refused", null],
          [null, "connection refused", null]
        ])
        expect(JSON.stringify(failed.attempts)).not.toMatch(LEAKS)
        expect(JSON.stringify(failed.attempts)).not.toContain(String(port))
      }))
  }
)

/** A self-signed certificate for `name` (trusted by nobody), made with openssl. */
const selfSignedCertificate = (name: string) =>
  Effect.promise(async () => {
    const dir = await mkdtemp(join(tmpdir(), "mm-tls-"))
    try {
      await new Promise<void>((resolve, reject) =>
        execFile("openssl", [
          ..."req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1".split(" "),
          ...["-subj", `/CN=${name}`, "-addext", `subjectAltName=DNS:${name}`],
          ...["-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")]
        ], (error) => (error === null ? resolve() : reject(error)))
      )
      return { key: await readFile(join(dir, "key.pem")), cert: await readFile(join(dir, "cert.pem")) }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

const ONLY_127_0_0_2 = Result.getOrThrow(parseAllowedNetworks("127.0.0.2/32"))

layer(liveLayer(ONLY_127_0_0_2), { excludeTestServices: true, timeout: 60_000 })("webhook destinations: the checked address", (it) => {
  it.effect("an attempt connects to the address it resolved and checked, with one lookup: a resolver answering otherwise a moment later is not asked again", () =>
    Effect.gen(function*() {
      // The admitted receiver on 127.0.0.2, and one on 127.0.0.1 (not admitted) at the same port.
      const checked = yield* makeReceiverOn("127.0.0.2")
      const port = Number(new URL(checked.url).port)
      const other = yield* makeReceiverOn("127.0.0.1", port)
      const dns = yield* FakeDns
      const { client } = yield* signedClient()
      dns.set("pinned.test", ["127.0.0.2"])
      yield* client.selfService.updateWebhook({ payload: { url: `http://pinned.test:${port}/hook`, events: ["company.created"] } })
      // The attempt's lookup gets 127.0.0.2; any later one would get 127.0.0.1.
      dns.set("pinned.test", ["127.0.0.2"], ["127.0.0.1"])
      const before = dns.lookups("pinned.test")
      yield* companyCreated(client)
      const done = yield* settled(client)
      expect(done.status).toBe("succeeded")
      expect(done.attempts.map((a) => a.status_code)).toEqual([200])
      expect(checked.received.map((r) => r.path)).toEqual(["/hook"])
      expect(other.received).toEqual([])
      expect(dns.lookups("pinned.test") - before).toBe(1)
    }))
})
