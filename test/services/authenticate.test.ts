// The authenticator's decisions (DECISIONS §2 order, §10 rate limit) with every dependency a fake:
// in-memory clients and replay record, a client-change feed the test drives, the real Signer and
// SecretBox, and the test clock. No database, no network.
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"

import { Authenticator } from "../../src/auth/Authenticator.js"
import { ClientCache, ClientChanges } from "../../src/auth/ClientCache.js"
import { makeSecretBox, placeOf, SecretBox } from "../../src/auth/SecretBox.js"
import { singleKey } from "../../src/auth/secretKeys.js"
import { liveSigner, Signer } from "../../src/auth/Signer.js"
import { appConfigWith } from "../../src/Config.js"
import { ClientsRepo } from "../../src/repos/ClientsRepo.js"
import { ReplayRepo } from "../../src/repos/ReplayRepo.js"
import type { ListenerHandlers } from "../../src/sql/Listener.js"
import { makeFakeClientsRepo } from "../fakes/clientsRepo.js"
import { type FakeReplayState, makeFakeReplayRepo } from "../fakes/replayRepo.js"

const box = makeSecretBox([singleKey("ab".repeat(32))])
const START = Date.UTC(2026, 10, 24, 12, 0, 0)
const PATH = "/api/open/v1/guests"

/** The change feed as the test drives it: live from the start; `onMessage` is a NOTIFY, `onLost` a lost connection. */
const feed: { handlers?: ListenerHandlers } = {}
const FakeClientChanges = Layer.succeed(ClientChanges, {
  follow: (handlers) =>
    Effect.sync(() => {
      feed.handlers = handlers
      handlers.onLive()
    })
})

/** The replay record, which a test may empty as a crash would. */
const replay: FakeReplayState = { nonces: new Map(), buckets: new Map(), epochS: 0 }

const AuthLayer = Authenticator.layerWithoutDependencies.pipe(
  Layer.provideMerge(ClientCache.layerWithoutDependencies),
  Layer.provideMerge(Layer.mergeAll(FakeClientChanges, Signer.layer, Layer.succeed(SecretBox, box))),
  Layer.provideMerge(
    Layer.mergeAll(Layer.effect(ClientsRepo, makeFakeClientsRepo()), Layer.effect(ReplayRepo, makeFakeReplayRepo(replay)))
  ),
  Layer.provideMerge(appConfigWith({ rateLimitRps: 1, rateLimitBurst: 3, signatureWindowSeconds: 300 })),
  Layer.provideMerge(Layer.effectDiscard(TestClock.setTime(START)))
)

let seq = 0
/** A new client row (its secret sealed as the real service seals it). */
const newClient = (secret = `secret-${seq}`) =>
  Effect.gen(function*() {
    const clients = yield* ClientsRepo
    const appKey = `ak_unit_${seq++}`
    yield* clients.insert({
      appKey,
      name: "unit",
      permissions: ["open:guest:read"],
      masking: false,
      secretEnc: box.seal(secret, placeOf("clients.secret_enc", appKey))
    })
    return { appKey, secret }
  })

interface Signing {
  readonly appKey: string
  readonly secret: string
  readonly timestamp?: number
  readonly nonce?: string
  readonly headers?: Record<string, string | undefined>
}

/** A request signed as an integrator would (the nonce fresh unless given). */
const signed = (o: Signing) =>
  Effect.gen(function*() {
    const nowS = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const timestamp = String(o.timestamp ?? nowS)
    const nonce = o.nonce ?? `nonce-${seq++}-${"x".repeat(16)}`
    const body = new Uint8Array(0)
    const signature = liveSigner.sign(o.secret, { method: "GET", path: PATH, rawQuery: "", appKey: o.appKey, timestamp, nonce, body })
    return {
      method: "GET",
      url: PATH,
      body,
      headers: { "x-app-key": o.appKey, "x-timestamp": timestamp, "x-nonce": nonce, "x-signature": signature, ...o.headers }
    }
  })

const authenticate = (o: Signing) => Effect.flatMap(signed(o), (req) => Effect.flatMap(Authenticator, (a) => a.authenticate(req)))

/** The `error` of a refusal, or "ok". */
const outcome = (o: Signing) =>
  authenticate(o).pipe(
    Effect.as("ok"),
    Effect.catch((e) => Effect.succeed(e._tag === "Unauthorized" ? e.error : e._tag))
  )

layer(AuthLayer)("authentication decisions", (it) => {
  it.effect("a well-signed request names its caller, its permissions and the default rate", () =>
    Effect.gen(function*() {
      const c = yield* newClient()
      const ok = yield* authenticate(c)
      expect(ok.caller.appKey).toBe(c.appKey)
      expect([...ok.caller.permissions]).toEqual(["open:guest:read"])
      expect(ok.deprecatedSecret).toBe(false)
      expect(ok.rate).toEqual({ rps: 1, burst: 3 })
      expect(ok.bucket.allowed).toBe(true)
    }))

  it.effect("the checks come in DECISIONS §2 order: headers, app_key, window, signature, nonce", () =>
    Effect.gen(function*() {
      const c = yield* newClient()
      const nowS = Math.floor(START / 1000)
      expect(yield* outcome({ ...c, headers: { "x-signature": undefined } })).toBe("missing_credentials")
      expect(yield* outcome({ ...c, headers: { "x-timestamp": "12.5" } })).toBe("missing_credentials")
      expect(yield* outcome({ ...c, nonce: "short" })).toBe("missing_credentials")
      expect(yield* outcome({ appKey: "ak_nobody", secret: "x" })).toBe("unknown_app_key")
      expect(yield* outcome({ ...c, timestamp: nowS - 301 })).toBe("timestamp_out_of_window")
      expect(yield* outcome({ ...c, timestamp: nowS + 301 })).toBe("timestamp_out_of_window")
      expect(yield* outcome({ ...c, timestamp: nowS - 300 })).toBe("ok")
      expect(yield* outcome({ ...c, secret: "not-the-secret" })).toBe("invalid_signature")
      expect(yield* outcome({ ...c, nonce: "the-same-nonce-twice-0001" })).toBe("ok")
      expect(yield* outcome({ ...c, nonce: "the-same-nonce-twice-0001" })).toBe("nonce_replayed")
    }))

  it.effect("a refusal for a bad signature shows the string to sign; a millisecond timestamp gets a hint", () =>
    Effect.gen(function*() {
      const c = yield* newClient()
      const bad = yield* Effect.flip(authenticate({ ...c, secret: "wrong", nonce: "nonce-for-the-canonical-1" }))
      expect("string_to_sign" in bad && bad.string_to_sign).toBe(
        ["GET", PATH, "", c.appKey, String(Math.floor(START / 1000)), "nonce-for-the-canonical-1", "d41d8cd98f00b204e9800998ecf8427e"].join(
          "\n"
        )
      )
      const ms = yield* Effect.flip(authenticate({ ...c, timestamp: START }))
      expect(ms).toMatchObject({ error: "timestamp_out_of_window", server_time: Math.floor(START / 1000) })
      expect("hint" in ms && ms.hint).toMatch(/milliseconds/)
    }))

  it.effect("after a crash emptied the nonce record, a request signed before its new epoch is signed_before_restart with a hint, not out of its window", () =>
    Effect.gen(function*() {
      const c = yield* newClient()
      const nowS = Math.floor(START / 1000)
      const epochBefore = replay.epochS
      // The record is complete again only from the next second on: a request signed now may have been seen.
      replay.epochS = nowS + 1
      const refused = yield* Effect.flip(authenticate(c))
      replay.epochS = epochBefore
      expect(refused).toMatchObject({ error: "signed_before_restart" })
      expect("hint" in refused && refused.hint).toMatch(/fresh X-Timestamp and X-Nonce/)
      expect(yield* outcome(c)).toBe("ok")
    }))

  it.effect("the previous secret signs during its overlap (marked deprecated), not after it", () =>
    Effect.gen(function*() {
      const clients = yield* ClientsRepo
      const c = yield* newClient("old-secret")
      const now = yield* Clock.currentTimeMillis
      yield* clients.update(c.appKey, {
        secret_enc: box.seal("new-secret", placeOf("clients.secret_enc", c.appKey)),
        prev_secret_enc: box.seal("old-secret", placeOf("clients.prev_secret_enc", c.appKey)),
        prev_secret_expires_at: new Date(now + 60_000)
      })
      feed.handlers!.onMessage(c.appKey)
      expect((yield* authenticate({ ...c, secret: "old-secret" })).deprecatedSecret).toBe(true)
      expect((yield* authenticate({ ...c, secret: "new-secret" })).deprecatedSecret).toBe(false)
      yield* TestClock.adjust("61 seconds")
      expect(yield* outcome({ ...c, secret: "old-secret" })).toBe("invalid_signature")
    }))

  it.effect("a cached client stays as it was until its change is announced; a disabled key is refused after that", () =>
    Effect.gen(function*() {
      const clients = yield* ClientsRepo
      const c = yield* newClient()
      expect(yield* outcome(c)).toBe("ok")
      yield* clients.update(c.appKey, { status: "disabled" })
      expect(yield* outcome(c)).toBe("ok")
      feed.handlers!.onMessage(c.appKey)
      expect(yield* outcome(c)).toBe("app_key_disabled")
    }))

  it.effect("while the change feed is lost nothing is cached: every change is seen at once", () =>
    Effect.gen(function*() {
      const clients = yield* ClientsRepo
      const cache = yield* ClientCache
      const c = yield* newClient()
      expect(yield* outcome(c)).toBe("ok")
      feed.handlers!.onLost()
      expect(cache.isLive()).toBe(false)
      yield* clients.update(c.appKey, { status: "disabled" })
      expect(yield* outcome(c)).toBe("app_key_disabled")
      yield* clients.update(c.appKey, { status: "active" })
      expect(yield* outcome(c)).toBe("ok")
      feed.handlers!.onLive()
      expect(cache.isLive()).toBe(true)
    }))

  it.effect("past the burst the bucket refuses; a second of refill lets one more through", () =>
    Effect.gen(function*() {
      const c = yield* newClient()
      const allowed = (yield* Effect.all(Array.from({ length: 5 }, () => authenticate(c)))).map((r) => r.bucket.allowed)
      expect(allowed).toEqual([true, true, true, false, false])
      yield* TestClock.adjust("1 second")
      expect((yield* authenticate(c)).bucket.allowed).toBe(true)
      expect((yield* authenticate(c)).bucket.allowed).toBe(false)
    }))

  it.effect("a new rate takes effect once announced: tokens leased under the old one are dropped", () =>
    Effect.gen(function*() {
      const clients = yield* ClientsRepo
      const c = yield* newClient()
      yield* clients.update(c.appKey, { rate_rps: 1000, rate_burst: 1000 })
      feed.handlers!.onMessage(c.appKey)
      // A lease of 50 tokens; one spent.
      expect((yield* authenticate(c)).rate).toEqual({ rps: 1000, burst: 1000 })
      yield* clients.update(c.appKey, { rate_rps: 1, rate_burst: 1 })
      feed.handlers!.onMessage(c.appKey)
      // The shared bucket still holds 950 tokens; the new burst of 1 caps what is leased from it.
      const allowed = (yield* Effect.all(Array.from({ length: 3 }, () => authenticate(c)))).map((r) => r.bucket.allowed)
      expect(allowed).toEqual([true, false, false])
    }))

  it.effect("a refused nonce costs no rate token", () =>
    Effect.gen(function*() {
      const c = yield* newClient()
      yield* authenticate({ ...c, nonce: "nonce-spent-once-0000001" })
      for (let i = 0; i < 3; i++) expect(yield* outcome({ ...c, nonce: "nonce-spent-once-0000001" })).toBe("nonce_replayed")
      const allowed = (yield* Effect.all(Array.from({ length: 3 }, () => authenticate(c)))).map((r) => r.bucket.allowed)
      expect(allowed).toEqual([true, true, false])
    }))
})
