// Retention by partition keeps the two guarantees of the tables it cuts (migration 0025, issue 38):
// a signed request is admitted once (DECISIONS §2), whichever hour partitions its sightings fall
// in, and a POST under an Idempotency-Key runs once (§11), whichever day partitions its attempts'
// keys would fall in; concurrent attempts on both sides of a boundary included. Rows written before
// the migration keep both guarantees after it. Retention itself: test/keyRetention.test.ts.
import { randomBytes } from "node:crypto"

import { expect, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as TestClock from "effect/testing/TestClock"

import { NONCE_SLOT_MS } from "../src/domain/nonces.js"
import { IdempotencyRepo } from "../src/repos/IdempotencyRepo.js"
import { ReplayRepo } from "../src/repos/ReplayRepo.js"
import { Transaction } from "../src/repos/sqlHelpers.js"
import { migrateDatabase } from "../src/sql/migrateUrl.js"
import { pgClientLayer } from "../src/sql/Sql.js"
import { withDatabase } from "../src/sql/urls.js"
import { databaseAdminUrl } from "./support/cluster.js"
import { eventually } from "./support/eventually.js"
import { createCredentials, sharedTestDatabase, TestServer, testServerLayer } from "./support/harness.js"
import { sighting } from "./support/nonces.js"
import { rawRequest } from "./support/raw.js"

const PATH = "/api/open/v1/companies"
const RETENTION_MS = 900_000

/** The next hour boundary from now: the migration made partitions for the next 24 hours. */
const nextHour = () => (Math.floor(Date.now() / NONCE_SLOT_MS) + 1) * NONCE_SLOT_MS

const partitionsOfNonce = (appKey: string, nonce: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ part: string }>`SELECT tableoid::regclass::text AS part FROM request_nonces
        WHERE app_key = ${appKey} AND nonce = ${nonce} ORDER BY slot_ms`,
      (rows) => rows.map((r) => r.part)
    ))

const hourName = (ms: number) => {
  const iso = new Date(ms).toISOString()
  const day = iso.slice(0, 10).replaceAll("-", "")
  const time = iso.slice(11, 19).replaceAll(":", "")
  return `request_nonces_p${day}${time === "000000" ? "" : `_${time}`}`
}

let seq = 0
const nonceOf = (label: string) => `${label}-${process.pid}-${seq++}-${randomBytes(6).toString("hex")}`.slice(0, 64)

layer(testServerLayer({ nonceRetentionSeconds: RETENTION_MS / 1000 }))("nonces across hour partitions", (it) => {
  it.effect("a signed request replayed just past the hour (its sighting then falls in the next partition) is refused", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const boundary = nextHour()
      const nonce = nonceOf("boundary")
      yield* TestClock.setTime(boundary - 2_000)
      const signed = { path: PATH, credentials, nonce, timestamp: Math.floor((boundary - 2_000) / 1000) }
      expect((yield* rawRequest(baseUrl, signed)).status).toBe(200)
      // Seen 2 s before the hour: it stands in that hour's partition and in the next one.
      expect(yield* partitionsOfNonce(credentials.appKey, nonce)).toEqual([hourName(boundary - NONCE_SLOT_MS), hourName(boundary)])

      yield* TestClock.setTime(boundary + 2_000)
      const replay = yield* rawRequest(baseUrl, signed)
      expect(replay.status).toBe(401)
      expect(replay.json.data.error).toBe("nonce_replayed")
      // The refused replay wrote nothing.
      expect(yield* partitionsOfNonce(credentials.appKey, nonce)).toHaveLength(2)
    }))

  it.effect("a nonce used again with another timestamp within the retention is refused across the boundary; past the retention it passes (DECISIONS §2)", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const boundary = nextHour()
      const nonce = nonceOf("reuse")
      const seen = boundary - 60_000
      yield* TestClock.setTime(seen)
      expect((yield* rawRequest(baseUrl, { path: PATH, credentials, nonce })).status).toBe(200)
      // Re-signed at another time (not a replay: a client reusing its nonce) in the next hour.
      yield* TestClock.setTime(seen + RETENTION_MS)
      const again = yield* rawRequest(baseUrl, { path: PATH, credentials, nonce })
      expect(again.json.data.error).toBe("nonce_replayed")
      yield* TestClock.setTime(seen + RETENTION_MS + 1)
      expect((yield* rawRequest(baseUrl, { path: PATH, credentials, nonce })).status).toBe(200)
    }))

  it.effect("a later sighting seen first (a slower instance clock) is met by the earlier one on its partition", () =>
    Effect.gen(function*() {
      const replay = yield* ReplayRepo
      const boundary = nextHour()
      const appKey = `ak_skew_${randomBytes(4).toString("hex")}`
      const nonce = nonceOf("skew")
      const at = (nowMs: number) => sighting(appKey, nonce, nowMs, RETENTION_MS)
      expect((yield* replay.admit(at(boundary + 5_000))).fresh).toBe(true)
      expect((yield* replay.admit(at(boundary - 5_000))).fresh).toBe(false)
    }))

  it.effect("sightings of one nonce racing on both sides of the boundary: exactly one is admitted", () =>
    Effect.gen(function*() {
      const replay = yield* ReplayRepo
      const boundary = nextHour()
      const appKey = `ak_race_${randomBytes(4).toString("hex")}`
      for (let round = 0; round < 5; round++) {
        const nonce = nonceOf(`race${round}`)
        const answers = yield* Effect.forEach(
          Array.from({ length: 12 }, (_, i) => boundary + (i % 2 === 0 ? -1 - i : i) * 100),
          (nowMs) => replay.admit(sighting(appKey, nonce, nowMs, RETENTION_MS)),
          { concurrency: "unbounded" }
        )
        expect(answers.filter((a) => a.fresh)).toHaveLength(1)
      }
    }))
})

/**
 * Two API instances over one database whose Idempotency-Keys expire on either side of a day
 * boundary (UTC midnight, where the partitions of `idempotency_keys` are cut): the first
 * instance's keys land in the partition before it, the second's in the one after.
 */
const DAY_MS = 86_400_000
const dayAhead = (() => {
  // At least 20 minutes from now, so that the test runs well before it.
  let boundary = (Math.floor(Date.now() / DAY_MS) + 1) * DAY_MS
  if (boundary - Date.now() < 20 * 60_000) boundary += DAY_MS
  return boundary
})()
const BEFORE_TTL = Math.floor((dayAhead - 10 * 60_000 - Date.now()) / 1000)
const AFTER_TTL = BEFORE_TTL + 20 * 60
const keysDb = sharedTestDatabase({ idempotencyTtlSeconds: AFTER_TTL })

const dayName = (ms: number) => `idempotency_keys_p${new Date(ms).toISOString().slice(0, 10).replaceAll("-", "")}`

/** Advisory locks of other sessions of this database, waiting (or held). */
const advisoryLocks = (granted: boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks
        WHERE locktype = 'advisory' AND granted = ${granted} AND pid <> pg_backend_pid()
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      (rows) => rows[0]!.n
    ))

const keyRows = (appKey: string, key: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ part: string; status: number | null }>`SELECT tableoid::regclass::text AS part, response_status AS status
      FROM idempotency_keys WHERE app_key = ${appKey} AND key = ${key}`
  )

layer(IdempotencyRepo.layer.pipe(Layer.provideMerge(testServerLayer({ idempotencyTtlSeconds: BEFORE_TTL }, undefined, keysDb.database))))(
  "Idempotency-Keys across day partitions",
  (it) => {
    it.effect("a POST retried through an instance whose keys fall in the next partition replays the kept answer and runs once", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const other = Context.get(yield* Layer.build(Layer.fresh(keysDb.anotherInstance)), TestServer)
        expect(other.baseUrl).not.toBe(baseUrl)
        const credentials = yield* createCredentials()
        const body = JSON.stringify({ name: `partition-retry-${randomBytes(4).toString("hex")}` })
        const headers = { "idempotency-key": "across-the-day" }
        const first = yield* rawRequest(baseUrl, { method: "POST", path: PATH, body, credentials, headers })
        expect(first.status).toBe(200)
        expect(yield* keyRows(credentials.appKey, "across-the-day")).toEqual([{ part: dayName(dayAhead - DAY_MS), status: 200 }])

        // A claim of another key through the second instance lands past the boundary.
        const probe = yield* rawRequest(other.baseUrl, {
          method: "POST",
          path: PATH,
          body: JSON.stringify({ name: "probe" }),
          credentials,
          headers: { "idempotency-key": "probe" }
        })
        expect(probe.status).toBe(200)
        expect((yield* keyRows(credentials.appKey, "probe"))[0]?.part).toBe(dayName(dayAhead))

        const retry = yield* rawRequest(other.baseUrl, { method: "POST", path: PATH, body, credentials, headers })
        expect(retry.status).toBe(200)
        expect(retry.headers.get("idempotent-replayed")).toBe("true")
        expect(retry.text).toBe(first.text)
        expect(yield* keyRows(credentials.appKey, "across-the-day")).toHaveLength(1)
        const sql = yield* SqlClient.SqlClient
        const [{ n }] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM companies WHERE name = ${JSON.parse(body).name}`
        expect(n).toBe(1)
      }))

    it.effect("concurrent claims of one key from both sides of the boundary: one runs, the others wait for it and find its answer", () =>
      Effect.gen(function*() {
        const repo = yield* IdempotencyRepo
        const tx = yield* Transaction
        const appKey = `ak_claims_${randomBytes(4).toString("hex")}`
        const key = "raced"
        const release = yield* Deferred.make<void>()
        const claimants = 6
        const attempt = (i: number) =>
          tx.run(Effect.gen(function*() {
            const ttl = i % 2 === 0 ? BEFORE_TTL : AFTER_TTL
            const claimed = yield* repo.claim({ app_key: appKey, key, fingerprint: "f", ttl_seconds: ttl }, 60)
            if (!claimed) return "waited" as const
            // The winner holds its claim (uncommitted) until every other claimant waits on it.
            yield* Deferred.await(release)
            yield* repo.complete({ app_key: appKey, key, status: 200, sealed: `answer-${i}`, content_type: "application/json" })
            return "ran" as const
          }))
        const fibers = yield* Effect.forEach(Array.from({ length: claimants }, (_, i) => i), (i) => Effect.forkChild(attempt(i)))
        yield* eventually("every other claimant waiting on the key's lock", advisoryLocks(false), (n) => n === claimants - 1)
        yield* Deferred.succeed(release, undefined)
        const outcomes = yield* Fiber.joinAll(fibers)
        expect(outcomes.filter((o) => o === "ran")).toHaveLength(1)
        expect(outcomes.filter((o) => o === "waited")).toHaveLength(claimants - 1)
        const kept = yield* repo.find(appKey, key)
        expect(kept._tag).toBe("Some")
        expect(yield* keyRows(appKey, key)).toHaveLength(1)
      }))

    it.effect("a claim rolled back frees the key for the claimant waiting on it, on the other side of the boundary", () =>
      Effect.gen(function*() {
        const repo = yield* IdempotencyRepo
        const tx = yield* Transaction
        const appKey = `ak_rollback_${randomBytes(4).toString("hex")}`
        const release = yield* Deferred.make<void>()
        const first = yield* Effect.forkChild(Effect.exit(tx.run(Effect.gen(function*() {
          expect(yield* repo.claim({ app_key: appKey, key: "k", fingerprint: "f", ttl_seconds: BEFORE_TTL }, 60)).toBe(true)
          yield* Deferred.await(release)
          return yield* Effect.fail("rolled back" as const)
        }))))
        yield* eventually("the first claim holding the key", advisoryLocks(true), (n) => n === 1)
        const second = yield* Effect.forkChild(
          tx.run(repo.claim({ app_key: appKey, key: "k", fingerprint: "f", ttl_seconds: AFTER_TTL }, 60))
        )
        yield* eventually("the second claim waiting", advisoryLocks(false), (n) => n === 1)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(first)
        expect(yield* Fiber.join(second)).toBe(true)
        expect((yield* keyRows(appKey, "k")).map((r) => r.part)).toEqual([dayName(dayAhead)])
      }))
  }
)

it.live(
  "rows written before migration 0025 keep their guarantees: a seen nonce is still a replay, a kept answer still replayed",
  () =>
    Effect.gen(function*() {
      const adminUrl = databaseAdminUrl()
      const name = `mm_keys_${randomBytes(4).toString("hex")}`
      const admin = Context.get(yield* Layer.build(pgClientLayer(Redacted.make(adminUrl), "test-admin")), SqlClient.SqlClient)
      yield* Effect.acquireRelease(
        admin.unsafe(`CREATE DATABASE "${name}" ENCODING 'UTF8' TEMPLATE template0`),
        () => Effect.ignore(admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))
      )
      const url = withDatabase(adminUrl, name)
      yield* Effect.promise(() => migrateDatabase(url, 24))
      const db = Context.get(yield* Layer.build(pgClientLayer(Redacted.make(url), "test")), SqlClient.SqlClient)
      const now = Date.now()
      yield* db`INSERT INTO request_nonces (app_key, nonce, seen_ms) VALUES ('ak_old', 'nonce-before-0025-0001', ${now - 60_000})`
      yield* db`INSERT INTO idempotency_keys (app_key, key, fingerprint, response_status, response_sealed, response_type, expires_at)
      VALUES ('ak_old', 'kept-before', 'fp', 201, 'v2:sealed', 'application/json', now() + interval '1 hour'),
             ('ak_old', 'expired-before', 'fp', 200, 'v2:sealed', 'application/json', now() - interval '1 hour')`
      expect(yield* Effect.promise(() => migrateDatabase(url))).toContain("0025_keys_partitions")

      yield* Effect.gen(function*() {
        const replay = yield* ReplayRepo
        const repo = yield* IdempotencyRepo
        const tx = yield* Transaction
        const admit = (nowMs: number) => replay.admit(sighting("ak_old", "nonce-before-0025-0001", nowMs, RETENTION_MS))
        // Within the retention of its sighting (in the next hour's partition, when the hour turns meanwhile).
        expect((yield* admit(now)).fresh).toBe(false)
        expect((yield* admit(now - 60_000 + RETENTION_MS)).fresh).toBe(false)
        expect((yield* admit(now - 60_000 + RETENTION_MS + 1)).fresh).toBe(true)
        expect(yield* tx.run(repo.claim({ app_key: "ak_old", key: "kept-before", fingerprint: "fp", ttl_seconds: 60 }, 5))).toBe(false)
        const kept = yield* repo.find("ak_old", "kept-before")
        expect(kept._tag === "Some" && kept.value.status).toBe(201)
        expect(yield* tx.run(repo.claim({ app_key: "ak_old", key: "expired-before", fingerprint: "fp", ttl_seconds: 60 }, 5))).toBe(true)
        // The expired row gave way to the new claim: one row per key.
        expect(yield* keyRows("ak_old", "expired-before")).toHaveLength(1)
      }).pipe(
        Effect.provide(
          Layer.mergeAll(ReplayRepo.layer, IdempotencyRepo.layer, Transaction.layer).pipe(
            Layer.provideMerge(Layer.succeed(SqlClient.SqlClient, db))
          )
        )
      )
    }),
  { timeout: 60_000 }
)
