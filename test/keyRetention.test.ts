// Retention by partition of the nonces and the Idempotency-Keys (issue 38, migration 0025): the
// daemon's partition job, on a clock the test drives, drops an hour of nonces once every nonce in
// it is older than NONCE_RETENTION_SECONDS and a day of keys once every key in it has expired,
// keeps what is within, and never lets a replay or a second run through; rows that land in the
// DEFAULT partition (no partition covered them: the daemon was down) keep both guarantees there,
// are moved into the partition created for them, and are pruned once expired.
import { randomBytes } from "node:crypto"

import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as TestClock from "effect/testing/TestClock"

import { maintainPolicy, partitionPolicies } from "../jobs/Partitions.js"
import { NONCE_SLOT_MS } from "../src/domain/nonces.js"
import { DAY_MS } from "../src/domain/partitions.js"
import { IdempotencyRepo } from "../src/repos/IdempotencyRepo.js"
import { ReplayRepo } from "../src/repos/ReplayRepo.js"
import { Transaction } from "../src/repos/sqlHelpers.js"
import { createCredentials, TestServer, testServerLayer } from "./support/harness.js"
import { sighting } from "./support/nonces.js"
import { partitionsOf } from "./support/partitions.js"
import { rawRequest } from "./support/raw.js"

const PATH = "/api/open/v1/companies"
const RETENTION_MS = 900_000

/** One pass of the partition job's policy `name` with its clock at `nowMs`. */
const passAt = (name: string, nowMs: number) =>
  Effect.gen(function*() {
    const entry = (yield* partitionPolicies).find((e) => e.policy.name === name)
    expect(entry).toBeDefined()
    return yield* maintainPolicy(entry!, nowMs)
  })

const hourName = (ms: number) => {
  const iso = new Date(ms).toISOString()
  const time = iso.slice(11, 19).replaceAll(":", "")
  return `request_nonces_p${iso.slice(0, 10).replaceAll("-", "")}${time === "000000" ? "" : `_${time}`}`
}
const dayName = (ms: number) => `idempotency_keys_p${new Date(ms).toISOString().slice(0, 10).replaceAll("-", "")}`

const noncePartitions = (appKey: string, nonce: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ part: string }>`SELECT tableoid::regclass::text AS part FROM request_nonces
        WHERE app_key = ${appKey} AND nonce = ${nonce} ORDER BY slot_ms`,
      (rows) => rows.map((r) => r.part)
    ))

const keyPartitions = (appKey: string, key: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ part: string }>`SELECT tableoid::regclass::text AS part FROM idempotency_keys WHERE app_key = ${appKey} AND key = ${key}`,
      (rows) => rows.map((r) => r.part)
    ))

const newNonce = (label: string) => `${label}-${randomBytes(8).toString("hex")}`

// One day of partitions ahead, not the default seven: a pass at a new clock makes every hourly
// nonce partition of its days, one transaction each.
layer(testServerLayer({ nonceRetentionSeconds: RETENTION_MS / 1000, partitionsAheadDays: 1 }), { timeout: 120_000 })(
  "nonces kept by partition",
  (it) => {
    it.effect("an hour of nonces is dropped whole once it ended NONCE_RETENTION_SECONDS ago, not a moment before; a replay stays refused throughout", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const credentials = yield* createCredentials()
        const boundary = (Math.floor(Date.now() / NONCE_SLOT_MS) + 1) * NONCE_SLOT_MS
        const early = { path: PATH, credentials, nonce: newNonce("early"), timestamp: Math.floor((boundary - 2_000) / 1000) }
        const late = { path: PATH, credentials, nonce: newNonce("late"), timestamp: Math.floor((boundary + 30 * 60_000) / 1000) }
        yield* TestClock.setTime(boundary - 2_000)
        expect((yield* rawRequest(baseUrl, early)).status).toBe(200)
        yield* TestClock.setTime(boundary + 30 * 60_000)
        expect((yield* rawRequest(baseUrl, late)).status).toBe(200)
        expect(yield* noncePartitions(credentials.appKey, early.nonce)).toEqual([hourName(boundary - NONCE_SLOT_MS), hourName(boundary)])

        // A moment before: the hour before the boundary still holds a nonce seen within the retention.
        const before = yield* passAt("request_nonces", boundary + RETENTION_MS - 1)
        expect(before.dropped).not.toContain(hourName(boundary - NONCE_SLOT_MS))
        expect(yield* partitionsOf("request_nonces")).toContain(hourName(boundary - NONCE_SLOT_MS))

        const after = yield* passAt("request_nonces", boundary + RETENTION_MS)
        expect(after.dropped).toContain(hourName(boundary - NONCE_SLOT_MS))
        // The partitions the job makes are unlogged, as the table's DEFAULT partition (migration 0013's reason).
        const sql = yield* SqlClient.SqlClient
        // An hour past the 24 the migration made ahead, within the day the job makes ahead here.
        const made = hourName(boundary + 24 * NONCE_SLOT_MS)
        expect([...before.created, ...after.created]).toContain(made)
        expect(yield* sql<{ p: string }>`SELECT relpersistence AS p FROM pg_class WHERE relname = ${made}`).toEqual([{ p: "u" }])
        expect(after.dropped).not.toContain(hourName(boundary))
        expect(yield* partitionsOf("request_nonces")).not.toContain(hourName(boundary - NONCE_SLOT_MS))
        expect(yield* noncePartitions(credentials.appKey, early.nonce)).toEqual([hourName(boundary)])

        // The early request's replay is out of its timestamp window by now; the late one's, within it, is still refused.
        yield* TestClock.setTime(boundary + RETENTION_MS)
        expect((yield* rawRequest(baseUrl, early)).json.data.error).toBe("timestamp_out_of_window")
        yield* TestClock.setTime(boundary + 30 * 60_000 + 4 * 60_000)
        expect((yield* rawRequest(baseUrl, late)).json.data.error).toBe("nonce_replayed")
      }))

    it.effect("a nonce no partition covers lands in the DEFAULT partition, is refused there when replayed, moves into the partition made for it, and is pruned there once past the retention", () =>
      Effect.gen(function*() {
        const replay = yield* ReplayRepo
        const appKey = `ak_default_${randomBytes(4).toString("hex")}`
        const admit = (nonce: string, nowMs: number) => replay.admit(sighting(appKey, nonce, nowMs, RETENTION_MS))
        // Ten days ahead: past the partitions made so far (by the migration and the daemon's default seven
        // days ahead), as if no daemon had run since.
        const ahead = (Math.floor(Date.now() / NONCE_SLOT_MS) + 240) * NONCE_SLOT_MS + 10 * 60_000
        const future = newNonce("future")
        expect((yield* admit(future, ahead)).fresh).toBe(true)
        expect(yield* noncePartitions(appKey, future)).toEqual(["request_nonces_default"])
        expect((yield* admit(future, ahead + 1_000)).fresh).toBe(false)

        // Three days ago, ten minutes into an hour (one hour slot, whatever the time of the run): before any partition.
        const past = newNonce("past")
        expect((yield* admit(past, (Math.floor(Date.now() / NONCE_SLOT_MS) - 72) * NONCE_SLOT_MS + 10 * 60_000)).fresh).toBe(true)
        expect(yield* noncePartitions(appKey, past)).toEqual(["request_nonces_default"])

        // The daemon back, at the future nonce's hour: its partition is made, with the nonce in it; the old one is pruned.
        const pass = yield* passAt("request_nonces", ahead)
        expect(pass.created).toContain(hourName(ahead - 10 * 60_000))
        expect(yield* noncePartitions(appKey, future)).toEqual([hourName(ahead - 10 * 60_000)])
        expect((yield* admit(future, ahead + 2_000)).fresh).toBe(false)
        expect(yield* noncePartitions(appKey, past)).toEqual([])
      }))
  }
)

/** A key claimed and answered in a transaction of its own, kept `ttlSeconds`. */
const keep = (appKey: string, key: string, ttlSeconds: number) =>
  Effect.gen(function*() {
    const repo = yield* IdempotencyRepo
    const tx = yield* Transaction
    yield* tx.run(Effect.gen(function*() {
      expect(yield* repo.claim({ app_key: appKey, key, fingerprint: "f", ttl_seconds: ttlSeconds }, 5)).toBe(true)
      yield* repo.complete({ app_key: appKey, key, status: 200, sealed: `kept-${key}`, content_type: "application/json" })
    }))
  })

layer(IdempotencyRepo.layer.pipe(Layer.provideMerge(testServerLayer())), { timeout: 120_000 })(
  "Idempotency-Keys kept by partition",
  (it) => {
    it.effect("a day of keys is dropped whole an hour after its last key expired, not before; keys of the days after it are kept and replayed", () =>
      Effect.gen(function*() {
        const repo = yield* IdempotencyRepo
        const appKey = `ak_keys_${randomBytes(4).toString("hex")}`
        const today = Math.floor(Date.now() / DAY_MS) * DAY_MS
        // One key expiring today (within the minute, or in the last minute of the day), one tomorrow.
        const secondsToMidnight = Math.floor((today + DAY_MS - Date.now()) / 1000)
        yield* keep(appKey, "today", Math.max(1, secondsToMidnight - 60))
        yield* keep(appKey, "tomorrow", secondsToMidnight + 3600)
        expect(yield* keyPartitions(appKey, "today")).toEqual([dayName(today)])
        expect(yield* keyPartitions(appKey, "tomorrow")).toEqual([dayName(today + DAY_MS)])

        const early = yield* passAt("idempotency_keys", today + DAY_MS + 3_600_000 - 1)
        expect(early.dropped).not.toContain(dayName(today))
        expect(yield* keyPartitions(appKey, "today")).toEqual([dayName(today)])

        const due = yield* passAt("idempotency_keys", today + DAY_MS + 3_600_000)
        expect(due.dropped).toContain(dayName(today))
        expect(due.dropped).not.toContain(dayName(today + DAY_MS))
        expect(yield* partitionsOf("idempotency_keys")).not.toContain(dayName(today))
        expect(yield* keyPartitions(appKey, "today")).toEqual([])
        const kept = yield* repo.find(appKey, "tomorrow")
        expect(kept._tag === "Some" && kept.value.status).toBe(200)
      }))

    it.effect("a key no partition covers is kept in the DEFAULT partition and still claimed once; the daemon prunes it there once expired", () =>
      Effect.gen(function*() {
        const repo = yield* IdempotencyRepo
        const tx = yield* Transaction
        const sql = yield* SqlClient.SqlClient
        const appKey = `ak_keys_default_${randomBytes(4).toString("hex")}`
        // Kept 30 days: past every partition made ahead.
        yield* keep(appKey, "long", 30 * 86_400)
        expect(yield* keyPartitions(appKey, "long")).toEqual(["idempotency_keys_default"])
        expect(yield* tx.run(repo.claim({ app_key: appKey, key: "long", fingerprint: "f", ttl_seconds: 60 }, 5))).toBe(false)

        // Expired long ago (as a key kept while the daemon was down would be by the time it is back).
        yield* sql`UPDATE idempotency_keys SET expires_at = now() - interval '20 days' WHERE app_key = ${appKey}`
        expect(yield* keyPartitions(appKey, "long")).toEqual(["idempotency_keys_default"])
        const pass = yield* passAt("idempotency_keys", Date.now())
        expect(pass.pruned).toBeGreaterThanOrEqual(1)
        expect(yield* keyPartitions(appKey, "long")).toEqual([])
      }))
  }
)
