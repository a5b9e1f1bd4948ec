// What the services rely on from ClientsRepo, run against the real repository (integration) and
// its in-memory fake (unit): the same expectations, so the fake cannot drift from PostgreSQL.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { ClientsRepo } from "../../src/repos/ClientsRepo.js"

let seq = 0
const appKey = () => `ak_contract_${process.pid}_${Date.now().toString(36)}_${seq++}`
const newClient = (key: string) => ({
  appKey: key,
  name: "契约客户",
  permissions: ["open:guest:read" as const],
  masking: false,
  secretEnc: "v1:x"
})

export const clientsRepoContract = (name: string, repo: Layer.Layer<ClientsRepo>) =>
  layer(repo)(`ClientsRepo contract (${name})`, (it) => {
    it.effect("an unknown app_key is none", () =>
      Effect.gen(function*() {
        const clients = yield* ClientsRepo
        expect(Option.isNone(yield* clients.findByAppKey(appKey()))).toBe(true)
      }))

    it.effect("a new client is active, unlimited by its own rate, without webhook, and found by its app_key", () =>
      Effect.gen(function*() {
        const clients = yield* ClientsRepo
        const key = appKey()
        const row = yield* clients.insert(newClient(key))
        expect(row).toMatchObject({
          app_key: key,
          name: "契约客户",
          status: "active",
          permissions: ["open:guest:read"],
          masking: false,
          secret_enc: "v1:x",
          prev_secret_enc: null,
          prev_secret_expires_at: null,
          rate_rps: null,
          rate_burst: null,
          webhook_url: null,
          webhook_events: [],
          webhook_enabled: false,
          scoped: false,
          companies: []
        })
        expect(Option.getOrThrow(yield* clients.findByAppKey(key))).toEqual(row)
        // Locked for a change computed from it (test/rotations.test.ts holds what the lock is for).
        expect(Option.getOrThrow(yield* clients.lockByAppKey(key))).toEqual(row)
        expect(Option.isNone(yield* clients.lockByAppKey(appKey()))).toBe(true)
      }))

    it.effect("a scope binds the client (bound to no company is still bound) until it is removed; an unknown app_key is none", () =>
      Effect.gen(function*() {
        const clients = yield* ClientsRepo
        const key = appKey()
        yield* clients.insert(newClient(key))
        const bound = Option.getOrThrow(yield* clients.replaceScope(key, []))
        expect([bound.scoped, bound.companies]).toEqual([true, []])
        expect(Option.getOrThrow(yield* clients.findByAppKey(key))).toMatchObject({ scoped: true, companies: [] })
        const unbound = Option.getOrThrow(yield* clients.replaceScope(key, null))
        expect([unbound.scoped, unbound.companies]).toEqual([false, []])
        expect(Option.isNone(yield* clients.replaceScope(appKey(), [1]))).toBe(true)
      }))

    it.effect("app_key is unique: a second insert with it is refused", () =>
      Effect.gen(function*() {
        const clients = yield* ClientsRepo
        const key = appKey()
        yield* clients.insert(newClient(key))
        expect(Exit.isFailure(yield* Effect.exit(clients.insert(newClient(key))))).toBe(true)
      }))

    it.effect("an update changes only the fields it names and answers the new row; none for an unknown app_key", () =>
      Effect.gen(function*() {
        const clients = yield* ClientsRepo
        const key = appKey()
        const before = yield* clients.insert(newClient(key))
        const expires = new Date(Date.UTC(2030, 0, 1))
        const after = Option.getOrThrow(
          yield* clients.update(key, {
            status: "disabled",
            rate_rps: 5,
            rate_burst: 10,
            prev_secret_enc: "v1:y",
            prev_secret_expires_at: expires
          })
        )
        expect(after).toEqual({
          ...before,
          status: "disabled",
          rate_rps: 5,
          rate_burst: 10,
          prev_secret_enc: "v1:y",
          prev_secret_expires_at: expires
        })
        expect(Option.getOrThrow(yield* clients.findByAppKey(key))).toEqual(after)
        expect(Option.isNone(yield* clients.update(appKey(), { status: "disabled" }))).toBe(true)
      }))

    it.effect("the list holds every client in id order", () =>
      Effect.gen(function*() {
        const clients = yield* ClientsRepo
        const a = yield* clients.insert(newClient(appKey()))
        const b = yield* clients.insert(newClient(appKey()))
        const ids = (yield* clients.list).map((r) => r.id)
        expect(ids).toEqual([...ids].sort((x, y) => x - y))
        expect(ids.indexOf(a.id)).toBeLessThan(ids.indexOf(b.id))
      }))
  })
