// What the services rely on from Transaction (the unit of work), run against the real one over
// PostgreSQL (integration) and the fake over the in-memory tables (unit): a unit that fails or
// dies leaves nothing behind, one that succeeds keeps everything, and a nested unit that fails
// undoes only its own writes when the outer one recovers (a savepoint).
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { deriveGuest } from "../../src/domain/guest.js"
import * as Scopes from "../../src/domain/scope.js"
import { GuestsRepo } from "../../src/repos/GuestsRepo.js"
import { OutboxRepo } from "../../src/repos/OutboxRepo.js"
import { Transaction } from "../../src/repos/sqlHelpers.js"
import { ContractSeed } from "./seed.js"

let seq = 0

const newGuest = (companyId: number) =>
  Effect.flatMap(GuestsRepo, (g) => g.insert(deriveGuest({ name: `事务嘉宾${seq++}`, gender: "male", company_id: companyId }, undefined)))

const eventsAfter = (id: number) => Effect.flatMap(OutboxRepo, (o) => o.after(id, 1000))

const lastEventId = Effect.gen(function*() {
  let last = 0
  for (;;) {
    const page = yield* eventsAfter(last)
    if (page.length === 0) return last
    last = page[page.length - 1]!.id
  }
})

export const transactionContract = (name: string, layer_: Layer.Layer<Transaction | GuestsRepo | OutboxRepo | ContractSeed>) =>
  layer(layer_)(`Transaction contract (${name})`, (it) => {
    it.effect("a unit of work that fails or dies leaves none of its writes; one that succeeds keeps them all", () =>
      Effect.gen(function*() {
        const tx = yield* Transaction
        const guests = yield* GuestsRepo
        const outbox = yield* OutboxRepo
        const company = yield* (yield* ContractSeed).company
        const before = yield* lastEventId
        const write = Effect.gen(function*() {
          const g = yield* newGuest(company)
          yield* outbox.record("guest.created", "open:guest:read", { guest_id: g.id })
          return g.id
        })
        let failedId = 0
        const failed = yield* Effect.exit(tx.run(Effect.flatMap(write, (id) => Effect.fail(`refused ${(failedId = id)}`))))
        expect(Exit.isFailure(failed)).toBe(true)
        const died = yield* Effect.exit(tx.run(Effect.andThen(write, Effect.die(new Error("boom")))))
        expect(Exit.isFailure(died)).toBe(true)
        expect(Option.isNone(yield* guests.findById(Scopes.all, failedId))).toBe(true)
        expect(yield* eventsAfter(before)).toEqual([])
        const kept = yield* tx.run(write)
        expect(Option.isSome(yield* guests.findById(Scopes.all, kept))).toBe(true)
        expect((yield* eventsAfter(before)).map((e) => e.data)).toEqual([{ guest_id: kept }])
      }))

    it.effect("a nested unit that fails undoes only its own writes when the outer one recovers", () =>
      Effect.gen(function*() {
        const tx = yield* Transaction
        const guests = yield* GuestsRepo
        const company = yield* (yield* ContractSeed).company
        let innerId = 0
        const outerId = yield* tx.run(Effect.gen(function*() {
          const outer = yield* newGuest(company)
          yield* Effect.ignore(tx.run(Effect.flatMap(newGuest(company), (g) => Effect.fail(innerId = g.id))))
          return outer.id
        }))
        expect(innerId).toBeGreaterThan(outerId)
        expect(Option.isSome(yield* guests.findById(Scopes.all, outerId))).toBe(true)
        expect(Option.isNone(yield* guests.findById(Scopes.all, innerId))).toBe(true)
      }))
  })
