// Rotations of one client take turns (DECISIONS §13), against PostgreSQL: concurrent rotations of
// the app secret (operator and self-service mixed), and of the webhook signing secret, are all
// held at the client's row by a lock the test takes, then let go at once. The invariant: the
// rotations take effect one after another, each making the secret current before it the previous
// one. So every secret a rotation returned was current once; the last one is current and the one
// before it previous; every other one (and the original) stops working, superseded twice over,
// and none is dropped without having been current.
import { expect, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"

import { placeOf, SecretBox } from "../src/auth/SecretBox.js"
import { Clients } from "../src/services/Clients.js"
import { eventually } from "./support/eventually.js"
import { liveAppLayer, serverLayer, TestServer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

/** Rotations at once: below the pool's 10 connections, so that every one reaches the lock. */
const N = 6

const pairs = {
  app: { current: "secret_enc", previous: "prev_secret_enc" },
  webhook: { current: "webhook_secret_enc", previous: "webhook_prev_secret_enc" }
} as const

/** Every change of a client's secrets, in the order the changes took effect (a trigger of the test's own). */
const installLog = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE IF NOT EXISTS test_rotation_log (
    seq bigserial PRIMARY KEY, app_key text, secret_enc text, prev_secret_enc text,
    webhook_secret_enc text, webhook_prev_secret_enc text)`)
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION test_log_rotation() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.secret_enc IS DISTINCT FROM OLD.secret_enc OR NEW.webhook_secret_enc IS DISTINCT FROM OLD.webhook_secret_enc THEN
        INSERT INTO test_rotation_log (app_key, secret_enc, prev_secret_enc, webhook_secret_enc, webhook_prev_secret_enc)
        VALUES (NEW.app_key, NEW.secret_enc, NEW.prev_secret_enc, NEW.webhook_secret_enc, NEW.webhook_prev_secret_enc);
      END IF;
      RETURN NULL;
    END $$`)
  yield* sql.unsafe(`CREATE OR REPLACE TRIGGER test_log_rotation AFTER UPDATE ON clients
    FOR EACH ROW EXECUTE FUNCTION test_log_rotation()`)
})

/** The (current, previous) secrets of one pair in `table`'s rows of the client, opened, in their order. */
const secretsIn = (table: "test_rotation_log" | "clients", appKey: string, pair: keyof typeof pairs) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const order = table === "clients" ? sql`id` : sql`seq`
    const rows = yield* sql<{ current: string; previous: string | null }>`SELECT ${sql(pairs[pair].current)} AS current,
      ${sql(pairs[pair].previous)} AS previous FROM ${sql(table)} WHERE app_key = ${appKey} ORDER BY ${order}`
    const { current, previous } = pairs[pair]
    // Each value opens only at its own column of the client's row (the log table keeps them as they were there).
    return rows.map((r) => ({
      current: box.open(r.current, placeOf(`clients.${current}`, appKey)),
      previous: r.previous === null ? null : box.open(r.previous, placeOf(`clients.${previous}`, appKey))
    }))
  })

/** Every change of one pair of the client's secrets, oldest first. */
const changesOf = (appKey: string, pair: keyof typeof pairs) => secretsIn("test_rotation_log", appKey, pair)

/** The client's secrets now. */
const secretsNow = (appKey: string, pair: keyof typeof pairs) => Effect.map(secretsIn("clients", appKey, pair), (rows) => rows[0]!)

/**
 * Runs `rotations` at once while the test holds the client's row locked, and lets them go when
 * every one of them waits on a lock (a read that did not lock the row would have been done by then).
 */
const heldThenReleased = <A, E, R>(appKey: string, rotations: ReadonlyArray<Effect.Effect<A, E, R>>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const locked = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const holder = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT 1 FROM clients WHERE app_key = ${appKey} FOR UPDATE`
      yield* Deferred.succeed(locked, undefined)
      yield* Deferred.await(release)
    })))
    yield* Deferred.await(locked)
    const running = yield* Effect.forkChild(Effect.all(rotations, { concurrency: "unbounded" }))
    yield* eventually(
      "every rotation waiting on a lock",
      Effect.map(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        (r) => r[0]!.n
      ),
      (n) => n === rotations.length
    )
    yield* Deferred.succeed(release, undefined)
    yield* Fiber.join(holder)
    return yield* Fiber.join(running)
  })

/** The chain of DECISIONS §13: each change made the secret current before it the previous one. */
const expectChain = (
  changes: ReadonlyArray<{ readonly current: string; readonly previous: string | null }>,
  original: string | null,
  returned: ReadonlyArray<string>
) => {
  expect(changes).toHaveLength(returned.length)
  changes.forEach((change, i) => expect(change.previous, `change ${i}`).toBe(i === 0 ? original : changes[i - 1]!.current))
  expect(new Set(changes.map((c) => c.current))).toEqual(new Set(returned))
}

/** One API instance on the real clock. */
const liveLayer = serverLayer.pipe(
  Layer.provideMerge(liveAppLayer()),
  Layer.provideMerge(FetchHttpClient.layer),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
)

layer(liveLayer, { excludeTestServices: true })("rotations take turns", (it) => {
  it.effect("N concurrent app-secret rotations (operator and self-service) form one chain: the last is current, the one before it previous, every other returned secret superseded; none lost", () =>
    Effect.gen(function*() {
      yield* installLog
      const clients = yield* Clients
      const { baseUrl } = yield* TestServer
      const { app_key: appKey, app_secret: original } = yield* clients.create({ name: "rotating", permissions: [], masking: false })
      const rotations = Array.from({ length: N }, (_, i) =>
        i % 2 === 0
          ? Effect.map(clients.resetSecret(appKey), (r) => r.app_secret)
          : Effect.map(clients.rotateOwnSecret(appKey), (r) => r.app_secret))
      const returned = yield* heldThenReleased(appKey, rotations)
      expect(new Set(returned).size).toBe(N)

      const changes = yield* changesOf(appKey, "app")
      expectChain(changes, original, returned)
      const now = yield* secretsNow(appKey, "app")
      expect(now).toEqual({ current: changes[N - 1]!.current, previous: changes[N - 2]!.current })

      // As a client sees it: the last signs, the one before it signs as deprecated, no other.
      const outcome = (secret: string) =>
        Effect.map(
          rawRequest(baseUrl, { path: "/api/open/v1/webhook", credentials: { appKey, appSecret: secret } }),
          (r) => `${r.status === 200 ? "ok" : r.json.data.error}${r.headers.get("x-secret-deprecated") === "true" ? "+deprecated" : ""}`
        )
      const superseded = [original, ...returned].filter((s) => s !== now.current && s !== now.previous)
      expect(superseded).toHaveLength(N - 1)
      yield* eventually(
        "the last rotation seen by the API",
        Effect.all([outcome(now.current), outcome(now.previous!), Effect.forEach(superseded, outcome)]),
        ([current, previous, others]) => current === "ok" && previous === "ok+deprecated" && others.every((o) => o === "invalid_signature")
      )
    }))

  it.effect("N concurrent webhook-secret rotations form one chain the same way: the last signs, the one before it signs during the overlap", () =>
    Effect.gen(function*() {
      yield* installLog
      const clients = yield* Clients
      const { app_key: appKey } = yield* clients.create({ name: "rotating webhook", permissions: [], masking: false })
      yield* clients.updateWebhook(appKey, { url: "http://127.0.0.1:9/in" })
      const original = (yield* secretsNow(appKey, "webhook")).current
      const rotations = Array.from({ length: N }, (_, i) =>
        i % 2 === 0
          ? Effect.map(clients.webhook(appKey, { _tag: "RotateSecret" }), (r) => ("signing_secret" in r ? r.signing_secret ?? "" : ""))
          : Effect.map(clients.rotateOwnWebhookSecret(appKey), (r) => r.signing_secret))
      const returned = yield* heldThenReleased(appKey, rotations)
      expect(new Set(returned).size).toBe(N)

      const changes = (yield* changesOf(appKey, "webhook")).slice(1) // the first is the PUT that set the URL
      expectChain(changes, original, returned)
      expect(yield* secretsNow(appKey, "webhook")).toEqual({ current: changes[N - 1]!.current, previous: changes[N - 2]!.current })
    }))
})
