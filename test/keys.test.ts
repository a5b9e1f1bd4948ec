// Rotating the master key (DECISIONS §13, docs/operator.md "Rotating the master key") end to end:
// an installation under one key, restarted with a new key first in SECRET_KEYS, `keys rotate`
// while it serves, and restarted again without the old key: every client still signs, every
// webhook secret and kept answer still opens, and the database holds only values under the new key.
import { randomBytes } from "node:crypto"

import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"

import { runAdmin } from "../src/admin/commands.js"
import { placeOf, SecretBox } from "../src/auth/SecretBox.js"
import { type SecretKey, singleKey } from "../src/auth/secretKeys.js"
import { SealedValuesRepo } from "../src/repos/SealedValuesRepo.js"
import { pgClientLayer } from "../src/sql/Sql.js"
import { fakeCardParser, liveAppLayer, serverLayer, testDatabaseLayer, TestServer, testServerLayer } from "./support/harness.js"
import { signedHeaders } from "./support/processes.js"

const BASE = "/api/open/v1"
// The tests' default SECRET_KEY: the installation before the rotation runs under it alone.
const OLD = singleKey("ab".repeat(32))
const NEW: SecretKey = { kid: "k2", keyHex: randomBytes(32).toString("hex") }
// A secret sealed by the service before key ids existed (`v1:`, no binding), under OLD.
const V1_SECRET = "a secret sealed before key ids"
const V1_SEALED = "v1:XWyBCFzcc9Bc+Db6jdVxynHNEL2oB5yXoK+AZPOg1E8CLgVn/1TAjktqEP4y7gQsHU5D0dsPbb1cDA=="

let databaseUrl = ""
const database = testDatabaseLayer((url) =>
  Effect.sync(() => {
    databaseUrl = url
    return url
  })
)

/** The installation restarted with these keys: one more API instance (its own services, caches, pool). */
const restartedWith = (keys: ReadonlyArray<SecretKey>) =>
  Effect.map(
    Layer.build(Layer.fresh(serverLayer.pipe(Layer.provideMerge(
      liveAppLayer({ secretKeys: Redacted.make(keys) }, fakeCardParser, Layer.orDie(pgClientLayer(Redacted.make(databaseUrl), "restarted")))
    )))),
    (context) => ({
      baseUrl: Context.get(context, TestServer).baseUrl,
      admin: (...argv: Array<string>) => Effect.provideContext(runAdmin(argv), context) as Effect.Effect<unknown, unknown>,
      box: Context.get(context, SecretBox)
    })
  )

interface Credentials {
  readonly appKey: string
  readonly appSecret: string
}

/** A signed request (fresh nonce), answered as raw text. */
const send = (baseUrl: string, credentials: Credentials, o: { method?: string; path: string; body?: string; key?: string }) =>
  Effect.promise(async () => {
    const method = o.method ?? "GET"
    const body = new TextEncoder().encode(o.body ?? "")
    const res = await fetch(`${baseUrl}${BASE}${o.path}`, {
      method,
      headers: {
        ...(o.body === undefined ? {} : { "content-type": "application/json" }),
        ...signedHeaders(credentials, method, `${BASE}${o.path}`, body),
        ...(o.key === undefined ? {} : { "idempotency-key": o.key })
      },
      ...(o.body === undefined ? {} : { body })
    })
    return { status: res.status, deprecated: res.headers.get("x-secret-deprecated"), text: await res.text() }
  })

/** Whether the credentials sign a request, and whether it is marked as signed with a deprecated secret. */
const signs = (baseUrl: string, credentials: Credentials) =>
  Effect.map(send(baseUrl, credentials, { path: "/webhook" }), (r) => `${r.status}${r.deprecated === "true" ? " deprecated" : ""}`)

const created = (value: unknown) => value as { app_key: string; app_secret: string }

/** Every sealed value in the database with the key id it names. */
const storedKeyIds = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ column: string; value: string }>`
    SELECT 'secret_enc' AS column, secret_enc AS value FROM clients
    UNION ALL SELECT 'prev_secret_enc', prev_secret_enc FROM clients WHERE prev_secret_enc IS NOT NULL
    UNION ALL SELECT 'webhook_secret_enc', webhook_secret_enc FROM clients WHERE webhook_secret_enc IS NOT NULL
    UNION ALL SELECT 'webhook_prev_secret_enc', webhook_prev_secret_enc FROM clients WHERE webhook_prev_secret_enc IS NOT NULL
    UNION ALL SELECT 'response_sealed', response_sealed FROM idempotency_keys WHERE response_sealed IS NOT NULL
    UNION ALL SELECT 'response_body', 'plain' FROM idempotency_keys WHERE response_body IS NOT NULL`.pipe(
    Effect.map((rows) => [...new Set(rows.map((r) => r.value.split(":").slice(0, 2).join(":")))].sort())
  ))

layer(testServerLayer({}, undefined, database))("keys rotate", (it) => {
  it.effect(
    "re-seals every value under the newest key; the service keeps authenticating through it, and once the old key is removed",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { baseUrl } = yield* TestServer
        const admin = (...argv: Array<string>) => runAdmin(argv)

        // Before: everything sealed under OLD alone, one value of the first scheme, one answer kept plain.
        const one = created(yield* admin("clients", "create", "--name", "one", "--permissions", "all"))
        const oneSecret = created(yield* admin("clients", "reset-secret", one.app_key)).app_secret
        const first = (yield* admin("clients", "webhook", one.app_key, "--url", "http://127.0.0.1:9/in", "--events", "guest.created")) as {
          signing_secret: string
        }
        const hook = (yield* admin("clients", "webhook", one.app_key, "--rotate-secret")) as { signing_secret: string }
        const two = created(yield* admin("clients", "create", "--name", "two", "--permissions", "all"))
        yield* sql`UPDATE clients SET secret_enc = ${V1_SEALED} WHERE app_key = ${two.app_key}`
        const twoCredentials = { appKey: two.app_key, appSecret: V1_SECRET }
        const company = { path: "/companies", method: "POST", body: JSON.stringify({ name: `轮换${Date.now()}` }), key: "legacy-1" }
        const companyAnswer = yield* send(baseUrl, { appKey: one.app_key, appSecret: oneSecret }, company)
        expect(companyAnswer.status).toBe(200)
        const rotation1 = { method: "POST", path: "/credentials/rotate", key: "rotate-1" }
        const rotated = yield* send(baseUrl, { appKey: one.app_key, appSecret: oneSecret }, rotation1)
        expect(rotated.status).toBe(200)
        const oneLatest = { appKey: one.app_key, appSecret: JSON.parse(rotated.text).data.app_secret as string }
        const oneDeprecated = { appKey: one.app_key, appSecret: oneSecret }
        // That answer as migration 0020 found answers kept before sealing: plain bytes.
        const oldBox = yield* SecretBox
        const [kept] = yield* sql<{ response_sealed: string }>`SELECT response_sealed FROM idempotency_keys WHERE key = 'legacy-1'`
        const plain = oldBox.openBytes(kept!.response_sealed, placeOf("idempotency_keys.response_sealed", one.app_key, "legacy-1"))
        yield* sql`UPDATE idempotency_keys SET response_sealed = NULL, response_body = ${plain} WHERE key = 'legacy-1'`
        expect(yield* storedKeyIds).toEqual([`v1:${V1_SEALED.split(":")[1]}`, "plain", `v2:${OLD.kid}`].sort())

        // Restarted with NEW first and OLD still listed: old values open, new ones are sealed under NEW.
        const both = yield* restartedWith([NEW, OLD])
        expect(yield* signs(both.baseUrl, oneLatest)).toBe("200")
        expect(yield* signs(both.baseUrl, oneDeprecated)).toBe("200 deprecated")
        expect(yield* signs(both.baseUrl, twoCredentials)).toBe("200")
        const three = created(yield* both.admin("clients", "create", "--name", "three", "--permissions", "all"))
        const before = (yield* both.admin("keys", "list")) as {
          keys: Array<{ kid: string; values: number; by_column: Record<string, number> }>
          without_key_id: { values: number }
          plain_answers: number
          removable: Array<string>
        }
        expect(before).toMatchObject({
          sealing_key: "k2",
          keys: [
            { kid: "k2", configured: true, seals: true, values: 1, by_column: { "clients.secret_enc": 1 } },
            {
              kid: OLD.kid,
              configured: true,
              seals: false,
              values: 5,
              by_column: {
                "clients.secret_enc": 1,
                "clients.prev_secret_enc": 1,
                "clients.webhook_secret_enc": 1,
                "clients.webhook_prev_secret_enc": 1,
                "idempotency_keys.response_sealed": 1
              }
            }
          ],
          without_key_id: { values: 1, by_column: { "clients.secret_enc": 1 } },
          plain_answers: 1,
          // The v1 value may be any configured key's.
          removable: []
        })
        expect(JSON.stringify(before)).not.toContain(NEW.keyHex)

        const rotation = yield* both.admin("keys", "rotate", "--batch-size", "1")
        expect(rotation).toEqual({
          sealing_key: "k2",
          resealed: {
            "clients.secret_enc": 2,
            "clients.prev_secret_enc": 1,
            "clients.webhook_secret_enc": 1,
            "clients.webhook_prev_secret_enc": 1,
            "idempotency_keys.response_sealed": 1
          },
          plain_answers_sealed: 1,
          changed_meanwhile: 0,
          unopenable_count: 0,
          unopenable: [],
          not_under_sealing_key: 0
        })
        expect(yield* both.admin("keys", "rotate")).toMatchObject({
          resealed: {
            "clients.secret_enc": 0,
            "clients.prev_secret_enc": 0,
            "clients.webhook_secret_enc": 0,
            "clients.webhook_prev_secret_enc": 0,
            "idempotency_keys.response_sealed": 0
          },
          plain_answers_sealed: 0
        })
        expect(yield* both.admin("keys", "list")).toMatchObject({
          keys: [{ kid: "k2", values: 8 }, { kid: OLD.kid, values: 0, by_column: {} }],
          without_key_id: { values: 0 },
          plain_answers: 0,
          removable: [OLD.kid]
        })
        expect(yield* storedKeyIds).toEqual(["v2:k2"])
        // Still serving while both keys are configured (the caches reloaded the re-sealed rows).
        expect(yield* signs(both.baseUrl, oneLatest)).toBe("200")

        // Restarted without the old key: everything opens under NEW alone.
        const after = yield* restartedWith([NEW])
        expect(yield* signs(after.baseUrl, oneLatest)).toBe("200")
        expect(yield* signs(after.baseUrl, oneDeprecated)).toBe("200 deprecated")
        expect(yield* signs(after.baseUrl, twoCredentials)).toBe("200")
        expect(yield* signs(after.baseUrl, { appKey: three.app_key, appSecret: three.app_secret })).toBe("200")
        const replayed = yield* send(after.baseUrl, oneLatest, rotation1)
        expect([replayed.status, replayed.text]).toEqual([200, rotated.text])
        const companyReplayed = yield* send(after.baseUrl, oneLatest, company)
        expect(companyReplayed.text).toBe(companyAnswer.text)
        // The webhook's current secret (shown again when its URL is set) and its previous one open.
        const shown = (yield* after.admin(
          "clients",
          "webhook",
          one.app_key,
          "--url",
          "http://127.0.0.1:9/in",
          "--events",
          "guest.created"
        )) as {
          signing_secret: string
        }
        expect(shown.signing_secret).toBe(hook.signing_secret)
        const [row] = yield* sql<
          { webhook_prev_secret_enc: string }
        >`SELECT webhook_prev_secret_enc FROM clients WHERE app_key = ${one.app_key}`
        expect(after.box.open(row!.webhook_prev_secret_enc, placeOf("clients.webhook_prev_secret_enc", one.app_key))).toBe(
          first.signing_secret
        )
      })
  )

  it.effect("a re-sealed value is written only where the stored value is still the one read (a rotation meanwhile wins)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const both = yield* restartedWith([NEW, OLD])
      const client = created(yield* runAdmin(["clients", "create", "--name", "cas", "--permissions", "all"]))
      const [read] = yield* sql<
        { id: number; secret_enc: string }
      >`SELECT id::int AS id, secret_enc FROM clients WHERE app_key = ${client.app_key}`
      const at = placeOf("clients.secret_enc", client.app_key)
      const resealed = both.box.reseal(read!.secret_enc, at)!
      // The client rotates between the read and the write.
      const rotated = created(yield* both.admin("clients", "reset-secret", client.app_key))
      const repo = yield* Effect.provide(Effect.service(SealedValuesRepo), SealedValuesRepo.layer)
      expect(yield* repo.replaceClients("secret_enc", [{ id: read!.id, old: read!.secret_enc, sealed: resealed }])).toBe(0)
      expect(yield* signs(both.baseUrl, { appKey: client.app_key, appSecret: rotated.app_secret })).toBe("200")
    }))

  it.effect("keys rotate while clients rotate their secrets: no rotation is lost, and a second run finishes the job", () =>
    Effect.gen(function*() {
      const both = yield* restartedWith([NEW, OLD])
      const clients = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, i) => i),
        (i) => Effect.map(runAdmin(["clients", "create", "--name", `busy-${i}`, "--permissions", "all"]), created)
      )
      const rotations = Effect.forEach(clients, (client) =>
        Effect.gen(function*() {
          let secret = client.app_secret
          const used: Array<string> = []
          // The operator's resets (a client's own rotation is limited to one a minute): the same
          // locked rotation, racing the re-sealing.
          for (let round = 0; round < 5; round++) {
            const reset = created(yield* both.admin("clients", "reset-secret", client.app_key))
            used.push(secret)
            secret = reset.app_secret
          }
          return { appKey: client.app_key, last: secret, previous: used[used.length - 1]! }
        }), { concurrency: "unbounded" })
      const [outcomes] = yield* Effect.all([rotations, both.admin("keys", "rotate", "--batch-size", "1")], { concurrency: 2 })
      for (const o of outcomes) {
        expect(yield* signs(both.baseUrl, { appKey: o.appKey, appSecret: o.last })).toBe("200")
        expect(yield* signs(both.baseUrl, { appKey: o.appKey, appSecret: o.previous })).toBe("200 deprecated")
      }
      yield* both.admin("keys", "rotate")
      expect(yield* both.admin("keys", "list")).toMatchObject({ removable: [OLD.kid] })
    }))
})
