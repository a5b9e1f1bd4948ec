// What the services rely on from GuestsRepo (all but the list), run against the real repository
// (integration) and its in-memory fake (unit): the same expectations, so the fake cannot drift.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { deriveGuest, type GuestSent } from "../../src/domain/guest.js"
import * as Scopes from "../../src/domain/scope.js"
import { GuestsRepo } from "../../src/repos/GuestsRepo.js"
import { ContractSeed } from "./seed.js"

let seq = 0

/** A guest's state as the services derive it from what a client sent. */
const stateOf = (sent: GuestSent) => deriveGuest(sent, undefined)

const sentGuest = (companyId: number, extra: GuestSent = {}): GuestSent => ({
  name: `契约嘉宾${seq++}`,
  gender: "female",
  company_id: companyId,
  age: 29,
  height: 165,
  education: "本科",
  income_amount: 150_000,
  requirement_tags: { age_min: 28, age_max: 35, locations: ["长沙"] },
  photos: ["https://example.com/a.jpg"],
  ...extra
})

export const guestsRepoContract = (name: string, repo: Layer.Layer<GuestsRepo | ContractSeed>) =>
  layer(repo)(`GuestsRepo contract (${name})`, (it) => {
    it.effect("a new guest is answered as stored; photo_time defaults to its creation instant; ids ascend", () =>
      Effect.gen(function*() {
        const guests = yield* GuestsRepo
        const company = yield* (yield* ContractSeed).company
        const state = stateOf(sentGuest(company))
        const g = yield* guests.insert(state)
        expect(g).toMatchObject({ name: state.name, gender: "female", company_id: company, age: 29, education: "本科" })
        expect(g.photo_time).toBe(g.created_at)
        expect(g.updated_at).toBe(g.created_at)
        expect(Option.getOrThrow(yield* guests.findById(Scopes.all, g.id))).toEqual(g)
        expect("family_income_explicit" in g).toBe(false)
        const next = yield* guests.insert(stateOf(sentGuest(company)))
        expect(next.id).toBeGreaterThan(g.id)
        expect(Option.isNone(yield* guests.findById(Scopes.all, next.id + 1000))).toBe(true)
      }))

    it.effect("lockStates answers the stored states (with the hidden family-income flag) of the ids that exist, in a map", () =>
      Effect.gen(function*() {
        const guests = yield* GuestsRepo
        const company = yield* (yield* ContractSeed).company
        const state = stateOf(sentGuest(company, { photo_time: "2026-01-02 03:04:05" }))
        const g = yield* guests.insert(state)
        const states = yield* guests.lockStates([g.id, g.id + 1000])
        expect([...states.keys()]).toEqual([g.id])
        expect(states.get(g.id)).toEqual({ ...state, completeness: Math.round(state.completeness * 100) / 100 })
        expect((yield* guests.lockStates([])).size).toBe(0)
      }))

    it.effect("an update stores the next state; without a photo_time it keeps the stored one", () =>
      Effect.gen(function*() {
        const guests = yield* GuestsRepo
        const company = yield* (yield* ContractSeed).company
        const first = stateOf(sentGuest(company, { photo_time: "2026-01-02 03:04:05" }))
        const g = yield* guests.insert(first)
        const current = (yield* guests.lockStates([g.id])).get(g.id)!
        const next = deriveGuest({ occupation: "教师", age: 30, photo_time: null }, current)
        const updated = yield* guests.update(g.id, next)
        expect(updated).toMatchObject({
          id: g.id,
          occupation: "教师",
          age: 30,
          photo_time: "2026-01-02 03:04:05",
          created_at: g.created_at
        })
        expect(Option.getOrThrow(yield* guests.findById(Scopes.all, g.id))).toEqual(updated)
      }))

    it.effect(
      "updateRecorded stores a state against the version it was derived from and moves the counters; a version no longer the row's writes nothing",
      () =>
        Effect.gen(function*() {
          const guests = yield* GuestsRepo
          const seed = yield* ContractSeed
          const company = yield* seed.company
          const [a, b] = [yield* seed.matchmaker(company), yield* seed.matchmaker(company)]
          const g = yield* guests.insert(stateOf(sentGuest(company, { matchmaker_id: a, photo_time: "2026-01-02 03:04:05" })))
          yield* guests.adjustGuestCounts(new Map([[a, 1]]))
          const read = Option.getOrThrow(yield* guests.findVersioned(Scopes.all, g.id))
          expect(read.state.matchmaker_id).toBe(a)
          expect(read.state.photo_time).toBe("2026-01-02 03:04:05")
          expect(Option.isNone(yield* guests.findVersioned(Scopes.of([]), g.id))).toBe(true)
          const next = deriveGuest({ occupation: "教师", matchmaker_id: b }, read.state)
          const updated = Option.getOrThrow(
            yield* guests.updateRecorded(g.id, read.version, next, ["occupation", "matchmaker_id"], [[b, 1], [a, -1]])
          )
          expect(updated).toMatchObject({ id: g.id, occupation: "教师", matchmaker_id: b, photo_time: "2026-01-02 03:04:05" })
          expect(Option.getOrThrow(yield* guests.findById(Scopes.all, g.id))).toEqual(updated)
          expect([yield* seed.matchmakerGuestCount(a), yield* seed.matchmakerGuestCount(b)]).toEqual([0, 1])
          // The version read before that write is not the row's any more: nothing is written, nothing moves.
          const stale = yield* guests.updateRecorded(
            g.id,
            read.version,
            deriveGuest({ occupation: "医生", matchmaker_id: a }, read.state),
            [
              "occupation",
              "matchmaker_id"
            ],
            [[a, 1], [b, -1]]
          )
          expect(Option.isNone(stale)).toBe(true)
          expect(Option.getOrThrow(yield* guests.findById(Scopes.all, g.id))).toEqual(updated)
          expect([yield* seed.matchmakerGuestCount(a), yield* seed.matchmakerGuestCount(b)]).toEqual([0, 1])
          const now = Option.getOrThrow(yield* guests.findVersioned(Scopes.all, g.id))
          expect(now.version).not.toBe(read.version)
          expect(Option.isSome(yield* guests.updateRecorded(g.id, now.version, now.state, [], []))).toBe(true)
        })
    )

    it.effect("findByImage finds the guest made from that image under that matchmaker only; the pair is unique", () =>
      Effect.gen(function*() {
        const guests = yield* GuestsRepo
        const seed = yield* ContractSeed
        const company = yield* seed.company
        const [m1, m2] = [yield* seed.matchmaker(company), yield* seed.matchmaker(company)]
        const hash = `hash-${seq++}`.padEnd(32, "0")
        const g = yield* guests.insert(stateOf(sentGuest(company, { matchmaker_id: m1 })), { image_hash: hash })
        expect(Option.getOrThrow(yield* guests.findByImage(m1, hash))).toEqual({ id: g.id, name: g.name })
        expect(Option.isNone(yield* guests.findByImage(m2, hash))).toBe(true)
        expect(Option.isNone(yield* guests.findByImage(m1, `other-${hash}`))).toBe(true)
        // Another matchmaker may import the same image; the same one may not.
        yield* guests.insert(stateOf(sentGuest(company, { matchmaker_id: m2 })), { image_hash: hash })
        const again = yield* Effect.exit(guests.insert(stateOf(sentGuest(company, { matchmaker_id: m1 })), { image_hash: hash }))
        expect(Exit.isFailure(again)).toBe(true)
      }))

    it.effect("adjustGuestCounts moves each matchmaker's guest counter by its delta (zero deltas are skipped)", () =>
      Effect.gen(function*() {
        const guests = yield* GuestsRepo
        const seed = yield* ContractSeed
        const company = yield* seed.company
        const [a, b] = [yield* seed.matchmaker(company), yield* seed.matchmaker(company)]
        yield* guests.adjustGuestCounts(new Map([[a, 3], [b, 0]]))
        yield* guests.adjustGuestCounts(new Map([[a, -1], [b, 2]]))
        expect([yield* seed.matchmakerGuestCount(a), yield* seed.matchmakerGuestCount(b)]).toEqual([2, 2])
      }))

    it.effect("existingIds names which ids are rows of companies or matchmakers", () =>
      Effect.gen(function*() {
        const guests = yield* GuestsRepo
        const seed = yield* ContractSeed
        const company = yield* seed.company
        const matchmaker = yield* seed.matchmaker(company)
        expect(yield* guests.existingIds(Scopes.all, "companies", [company, company, company + 1000])).toEqual(new Set([company]))
        expect(yield* guests.existingIds(Scopes.all, "matchmakers", [matchmaker, matchmaker + 1000])).toEqual(new Set([matchmaker]))
        expect((yield* guests.existingIds(Scopes.all, "companies", [])).size).toBe(0)
      }))

    it.effect("a scoped read (DECISIONS §14) finds only its companies' guests and matchmakers; an unscoped one finds all", () =>
      Effect.gen(function*() {
        const guests = yield* GuestsRepo
        const seed = yield* ContractSeed
        const [a, b] = [yield* seed.company, yield* seed.company]
        const [ma, mb] = [yield* seed.matchmaker(a), yield* seed.matchmaker(b)]
        const ga = yield* guests.insert(stateOf(sentGuest(a)))
        const gb = yield* guests.insert(stateOf(sentGuest(b)))
        const onlyA = Scopes.of([a])
        expect(Option.getOrThrow(yield* guests.findById(onlyA, ga.id))).toEqual(ga)
        expect(Option.isNone(yield* guests.findById(onlyA, gb.id))).toBe(true)
        expect(Option.isNone(yield* guests.findById(Scopes.of([]), ga.id))).toBe(true)
        expect(Option.getOrThrow(yield* guests.findById(Scopes.all, gb.id))).toEqual(gb)
        expect(yield* guests.existingIds(onlyA, "companies", [a, b])).toEqual(new Set([a]))
        expect(yield* guests.existingIds(onlyA, "matchmakers", [ma, mb])).toEqual(new Set([ma]))
        expect(yield* guests.existingIds(Scopes.of([a, b]), "matchmakers", [ma, mb])).toEqual(new Set([ma, mb]))
      }))
  })
