// No secret in plaintext at rest (DECISIONS §13): after a run that creates clients, rotates their
// app and webhook secrets (self-service, operator, idempotent retries replayed), sets webhooks and
// rotates the master key, every column of every table of the database is read (text as text, bytea
// as hex and as UTF-8, jsonb and arrays as text) and holds none of the secrets handed out, nor a
// master key.
import { randomBytes } from "node:crypto"

import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"

import { runAdmin } from "../src/admin/commands.js"
import type { SecretKey } from "../src/auth/secretKeys.js"
import { makeOpenApiClient } from "../src/client/Client.js"
import { pgClientLayer } from "../src/sql/Sql.js"
import { FakeDns } from "./fakes/dns.js"
import { fakeCardParser, liveAppLayer, serverLayer, testDatabaseLayer, TestServer, testServerLayer } from "./support/harness.js"
import { signedHeaders } from "./support/processes.js"

const BASE = "/api/open/v1"
const FIRST: SecretKey = { kid: "first", keyHex: randomBytes(32).toString("hex") }
const SECOND: SecretKey = { kid: "second", keyHex: randomBytes(32).toString("hex") }

let databaseUrl = ""
const database = testDatabaseLayer((url) =>
  Effect.sync(() => {
    databaseUrl = url
    return url
  })
)

/** The installation restarted with these keys: another API instance with its own services. */
const restartedWith = (keys: ReadonlyArray<SecretKey>) =>
  Effect.map(
    Layer.build(Layer.fresh(serverLayer.pipe(Layer.provideMerge(
      liveAppLayer({ secretKeys: Redacted.make(keys) }, fakeCardParser, Layer.orDie(pgClientLayer(Redacted.make(databaseUrl), "restarted")))
    )))),
    (context) => ({
      baseUrl: Context.get(context, TestServer).baseUrl,
      admin: (...argv: Array<string>) => Effect.provideContext(runAdmin(argv), context) as Effect.Effect<unknown, unknown>
    })
  )

interface Credentials {
  readonly appKey: string
  readonly appSecret: string
}

/** A signed POST under an Idempotency-Key, its answer's data. */
const keyedPost = (baseUrl: string, credentials: Credentials, path: string, key: string) =>
  Effect.promise(async () => {
    const res = await fetch(`${baseUrl}${BASE}${path}`, {
      method: "POST",
      headers: { ...signedHeaders(credentials, "POST", `${BASE}${path}`, new Uint8Array(0)), "idempotency-key": key }
    })
    const text = await res.text()
    expect(res.status, text).toBe(200)
    return { text, data: JSON.parse(text).data as Record<string, string> }
  })

const quoted = (name: string) => `"${name.replace(/"/g, "\"\"")}"`

/**
 * Where each needle (lower case) occurs in the database, as `schema.table.column (how it was read)`:
 * every column of every table read, compared in lower case (a secret kept in other case is found too).
 */
const sweep = (needles: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = yield* sql<{ schema: string; table: string; column: string; type: string }>`
      SELECT c.table_schema AS schema, c.table_name AS table, c.column_name AS column, c.data_type AS type
      FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema')
        -- A partition's rows are read through its partitioned table.
        AND NOT (SELECT relispartition FROM pg_class WHERE oid = format('%I.%I', c.table_schema, c.table_name)::regclass)
      ORDER BY 1, 2, 3`
    const found: Array<string> = []
    const look = (where: string, text: string) => {
      for (const needle of needles) if (text.includes(needle)) found.push(`${needle.slice(0, 8)}… in ${where}`)
    }
    for (const c of columns) {
      const from = `${quoted(c.schema)}.${quoted(c.table)}`
      const where = `${c.schema}.${c.table}.${c.column}`
      if (c.type === "bytea") {
        const rows = yield* sql.unsafe<{ v: Uint8Array | null }>(`SELECT ${quoted(c.column)} AS v FROM ${from}`)
        for (const { v } of rows) {
          if (v === null) continue
          look(`${where} (hex)`, Buffer.from(v).toString("hex"))
          look(`${where} (UTF-8)`, new TextDecoder().decode(v).toLowerCase())
        }
      } else {
        const rows = yield* sql.unsafe<{ v: string | null }>(`SELECT ${quoted(c.column)}::text AS v FROM ${from}`)
        for (const { v } of rows) if (v !== null) look(`${where} (${c.type})`, v.toLowerCase())
      }
    }
    return { columns: columns.length, found }
  })

layer(testServerLayer({ secretKeys: Redacted.make([FIRST]) }, undefined, database))("secrets at rest", (it) => {
  it.effect("after a full run no table holds a secret that was handed out, nor a master key", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const handedOut: Array<string> = []
      const keep = (secret: string) => {
        handedOut.push(secret)
        return secret
      }

      // Clients made by the operator; their secrets reset by the operator and rotated by themselves.
      const clients: Array<Credentials> = []
      for (const name of ["alpha", "beta", "gamma", "delta"]) {
        const made = (yield* runAdmin(["clients", "create", "--name", name, "--permissions", "all"])) as {
          app_key: string
          app_secret: string
        }
        clients.push({ appKey: made.app_key, appSecret: keep(made.app_secret) })
      }
      const [alpha, beta, gamma, delta] = clients as [Credentials, Credentials, Credentials, Credentials]
      const reset = (yield* runAdmin(["clients", "reset-secret", alpha.appKey])) as { app_secret: string }
      let alphaNow: Credentials = { appKey: alpha.appKey, appSecret: keep(reset.app_secret) }

      // Self-service rotations under an Idempotency-Key, each retried (the kept answer replayed); one
      // client each, as a client may rotate once a minute (DECISIONS §13).
      for (const [who, key] of [[alphaNow, "rotate-a"], [delta, "rotate-b"]] as const) {
        const first = yield* keyedPost(baseUrl, who, "/credentials/rotate", key)
        const again = yield* keyedPost(baseUrl, who, "/credentials/rotate", key)
        expect(again.text).toBe(first.text)
        keep(first.data["app_secret"]!)
        if (who === alphaNow) alphaNow = { appKey: alpha.appKey, appSecret: first.data["app_secret"]! }
      }
      // The typed client keys every POST itself.
      const typed = yield* makeOpenApiClient(baseUrl, beta, { retries: 0 })
      const betaNow: Credentials = { appKey: beta.appKey, appSecret: keep((yield* typed.selfService.rotateCredentials()).app_secret) }

      // Webhooks: the first URL brings a secret (self-service and operator); both rotate it.
      const dns = yield* FakeDns
      dns.set("hooks.example.test", ["127.0.0.1"])
      const betaClient = yield* makeOpenApiClient(baseUrl, betaNow, { retries: 0 })
      const firstUrl = yield* betaClient.selfService.updateWebhook({
        payload: { url: "https://hooks.example.test/in", events: ["guest.created"] }
      })
      keep(firstUrl.signing_secret!)
      keep((yield* keyedPost(baseUrl, betaNow, "/webhook/rotate-secret", "hook-1")).data["signing_secret"]!)
      keep((yield* keyedPost(baseUrl, betaNow, "/webhook/rotate-secret", "hook-1")).data["signing_secret"]!)
      const set =
        (yield* runAdmin(["clients", "webhook", gamma.appKey, "--url", "https://hooks.example.test/g", "--events", "guest.created"])) as {
          signing_secret: string
        }
      keep(set.signing_secret)
      keep((yield* (yield* makeOpenApiClient(baseUrl, gamma, { retries: 0 })).selfService.rotateWebhookSecret()).signing_secret)
      keep(((yield* runAdmin(["clients", "webhook", gamma.appKey, "--rotate-secret"])) as { signing_secret: string }).signing_secret)
      // Data written under a kept key too (an answer that carries no secret is sealed all the same).
      yield* Effect.promise(() =>
        fetch(`${baseUrl}${BASE}/companies`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "idempotency-key": "company-1",
            ...signedHeaders(gamma, "POST", `${BASE}/companies`, new TextEncoder().encode(`{"name":"静止的秘密"}`))
          },
          body: `{"name":"静止的秘密"}`
        })
      )

      // The master key rotated: a new key first, everything re-sealed, one more rotation under it.
      const restarted = yield* restartedWith([SECOND, FIRST])
      expect(yield* restarted.admin("keys", "rotate")).toMatchObject({ not_under_sealing_key: 0, unopenable_count: 0 })
      keep((yield* keyedPost(restarted.baseUrl, gamma, "/credentials/rotate", "rotate-c")).data["app_secret"]!)
      keep(((yield* restarted.admin("clients", "reset-secret", gamma.appKey)) as { app_secret: string }).app_secret)

      // 15 distinct secrets (the replayed webhook rotation handed out its secret twice).
      expect(new Set(handedOut).size).toBe(15)
      // Each secret whole, and the part after a prefix (a webhook secret's base64), in any case for hex.
      const needles = [...new Set(handedOut.flatMap((s) => [s.toLowerCase(), s.replace(/^whsec_/, "").toLowerCase()]))]
      const keys = [FIRST, SECOND].flatMap((k) => [k.keyHex, Buffer.from(k.keyHex, "hex").toString("base64").toLowerCase()])
      const { columns, found } = yield* sweep([...needles, ...keys])
      expect(columns).toBeGreaterThan(100)
      expect(found).toEqual([])

      // The sweep finds what is there: the app_keys in text, and a secret or a key planted in bytea.
      expect((yield* sweep([alpha.appKey])).found).toContain(`${alpha.appKey.slice(0, 8)}… in public.clients.app_key (text)`)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE idempotency_keys SET response_sealed = NULL, response_body = ${new TextEncoder().encode(alphaNow.appSecret)}
        WHERE key = 'company-1'`
      yield* sql`UPDATE idempotency_keys SET response_sealed = NULL, response_body = ${Buffer.from(SECOND.keyHex, "hex")}
        WHERE key = 'rotate-a'`
      expect((yield* sweep([alphaNow.appSecret, SECOND.keyHex])).found).toEqual([
        `${alphaNow.appSecret.slice(0, 8)}… in public.idempotency_keys.response_body (UTF-8)`,
        `${SECOND.keyHex.slice(0, 8)}… in public.idempotency_keys.response_body (hex)`
      ])
    }))
})
