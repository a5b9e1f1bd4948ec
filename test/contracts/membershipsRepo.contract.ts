// What the membership service and the time moves rely on from MembershipsRepo (all but the list),
// run against the real repository (integration) and its in-memory fake (unit).
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { PlatformTimeZone } from "../../src/Config.js"
import { deriveGuest } from "../../src/domain/guest.js"
import * as Scopes from "../../src/domain/scope.js"
import { parseTimestamp } from "../../src/domain/time.js"
import { GuestsRepo } from "../../src/repos/GuestsRepo.js"
import { MembershipsRepo } from "../../src/repos/MembershipsRepo.js"
import { type OutboxRepo } from "../../src/repos/OutboxRepo.js"
import { ContractSeed } from "./seed.js"

const DAY = 86_400_000

const ms = (text: string) => Effect.map(PlatformTimeZone, (tz) => parseTimestamp(text, tz).getTime())

const guestOf = (company: number) =>
  Effect.flatMap(GuestsRepo, (guests) => guests.insert(deriveGuest({ name: "会员嘉宾", gender: "male", company_id: company }, undefined)))

const newGuest = Effect.flatMap(ContractSeed, (seed) => Effect.flatMap(seed.company, guestOf))

export const membershipsRepoContract = (
  name: string,
  repo: Layer.Layer<MembershipsRepo | GuestsRepo | OutboxRepo | ContractSeed>
) =>
  layer(repo)(`MembershipsRepo contract (${name})`, (it) => {
    it.effect("the three seeded plans come first; a new plan is found and listed in id order", () =>
      Effect.gen(function*() {
        const repo = yield* MembershipsRepo
        expect((yield* repo.plans).slice(0, 3)).toEqual([
          { id: 1, name: "月度会员", days: 30 },
          { id: 2, name: "季度会员", days: 90 },
          { id: 3, name: "年度会员", days: 365 }
        ])
        const plan = yield* repo.insertPlan({ name: "契约周卡", days: 7 })
        expect(plan).toMatchObject({ name: "契约周卡", days: 7 })
        expect(plan.id).toBeGreaterThan(3)
        expect(Option.getOrThrow(yield* repo.findPlan(plan.id))).toEqual(plan)
        expect(Option.isNone(yield* repo.findPlan(plan.id + 1000))).toBe(true)
        const ids = (yield* repo.plans).map((p) => p.id)
        expect(ids).toEqual([...ids].sort((a, b) => a - b))
      }))

    it.effect("upsert starts an active membership for the plan's days, then renews that one in place by the days; unknown plan: none", () =>
      Effect.gen(function*() {
        const repo = yield* MembershipsRepo
        const user = yield* (yield* ContractSeed).user
        const first = Option.getOrThrow(yield* repo.upsert(Scopes.all, user, 1, null))
        expect(first).toMatchObject({ status: "active", renewed: false })
        const record = Option.getOrThrow(yield* repo.findById(Scopes.all, first.id))
        expect(record).toMatchObject({ id: first.id, user_id: user, guest_id: null, plan_id: 1, plan_name: "月度会员", status: "active" })
        expect((yield* ms(record.expire_at)) - (yield* ms(record.started_at))).toBe(30 * DAY)
        expect(record.expire_at).toBe(first.expire_at)
        const renewed = Option.getOrThrow(yield* repo.upsert(Scopes.all, user, 1, null))
        expect(renewed).toMatchObject({ id: first.id, status: "active", renewed: true })
        expect((yield* ms(renewed.expire_at)) - (yield* ms(first.expire_at))).toBe(30 * DAY)
        const other = Option.getOrThrow(yield* repo.upsert(Scopes.all, user, 2, null))
        expect(other.id).not.toBe(first.id)
        expect(Option.isNone(yield* repo.upsert(Scopes.all, user, 9999, null))).toBe(true)
      }))

    it.effect("a renewal keeps the membership's guest unless it names another", () =>
      Effect.gen(function*() {
        const repo = yield* MembershipsRepo
        const user = yield* (yield* ContractSeed).user
        const [g1, g2] = [yield* newGuest, yield* newGuest]
        const m = Option.getOrThrow(yield* repo.upsert(Scopes.all, user, 3, g1.id))
        yield* repo.upsert(Scopes.all, user, 3, null)
        expect(Option.getOrThrow(yield* repo.findById(Scopes.all, m.id)).guest_id).toBe(g1.id)
        yield* repo.upsert(Scopes.all, user, 3, g2.id)
        expect(Option.getOrThrow(yield* repo.findById(Scopes.all, m.id)).guest_id).toBe(g2.id)
      }))

    it.effect("a cancelled membership is not renewed: the next purchase starts a new one; lock reads the status", () =>
      Effect.gen(function*() {
        const repo = yield* MembershipsRepo
        const user = yield* (yield* ContractSeed).user
        const m = Option.getOrThrow(yield* repo.upsert(Scopes.all, user, 1, null))
        expect(Option.getOrThrow(yield* repo.lock(m.id))).toEqual({ id: m.id, status: "active" })
        yield* repo.setStatus(m.id, "cancelled")
        expect(Option.getOrThrow(yield* repo.lock(m.id))).toEqual({ id: m.id, status: "cancelled" })
        const next = Option.getOrThrow(yield* repo.upsert(Scopes.all, user, 1, null))
        expect(next).toMatchObject({ status: "active", renewed: false })
        expect(next.id).not.toBe(m.id)
        expect(Option.isNone(yield* repo.lock(next.id + 1000))).toBe(true)
        expect(Option.isNone(yield* repo.findById(Scopes.all, next.id + 1000))).toBe(true)
      }))

    it.effect("expireDue moves memberships past expire_at to expired and returns their ids (for their events); a scope limits it", () =>
      Effect.gen(function*() {
        const repo = yield* MembershipsRepo
        const seed = yield* ContractSeed
        const [u1, u2] = [yield* seed.user, yield* seed.user]
        const lapsed = Option.getOrThrow(yield* repo.upsert(Scopes.all, u1, 1, null))
        const alsoLapsed = Option.getOrThrow(yield* repo.upsert(Scopes.all, u2, 2, null))
        const current = Option.getOrThrow(yield* repo.upsert(Scopes.all, u1, 2, null))
        yield* seed.expireMembershipAgo(lapsed.id, DAY)
        yield* seed.expireMembershipAgo(alsoLapsed.id, 1000)
        // Scoped to u1's plan 1: only that one.
        expect(yield* repo.expireDue({ userId: u1, planId: 1 })).toEqual([lapsed.id])
        expect(Option.getOrThrow(yield* repo.lock(lapsed.id)).status).toBe("expired")
        expect(Option.getOrThrow(yield* repo.lock(alsoLapsed.id)).status).toBe("active")
        expect(yield* repo.expireDue()).toContain(alsoLapsed.id)
        expect(Option.getOrThrow(yield* repo.lock(alsoLapsed.id)).status).toBe("expired")
        expect(Option.getOrThrow(yield* repo.lock(current.id)).status).toBe("active")
        expect(yield* repo.expireDue({ userId: u1, planId: 1 })).toEqual([])
      }))

    it.effect("findById answers a membership only within its guest's company; one without a guest is in no scope", () =>
      Effect.gen(function*() {
        const repo = yield* MembershipsRepo
        const seed = yield* ContractSeed
        const [mine, theirs] = [yield* seed.company, yield* seed.company]
        const [u1, u2, u3] = [yield* seed.user, yield* seed.user, yield* seed.user]
        const ofMine = Option.getOrThrow(yield* repo.upsert(Scopes.all, u1, 1, (yield* guestOf(mine)).id))
        const ofTheirs = Option.getOrThrow(yield* repo.upsert(Scopes.all, u2, 1, (yield* guestOf(theirs)).id))
        const guestless = Option.getOrThrow(yield* repo.upsert(Scopes.all, u3, 1, null))
        const scope = Scopes.of([mine])
        expect(Option.getOrThrow(yield* repo.findById(scope, ofMine.id))).toMatchObject({ id: ofMine.id, user_id: u1 })
        expect(Option.isNone(yield* repo.findById(scope, ofTheirs.id))).toBe(true)
        expect(Option.isNone(yield* repo.findById(scope, guestless.id))).toBe(true)
        expect(Option.isNone(yield* repo.findById(Scopes.of([mine, theirs]), guestless.id))).toBe(true)
        expect(Option.getOrThrow(yield* repo.findById(Scopes.all, guestless.id))).toMatchObject({ id: guestless.id, guest_id: null })
      }))

    it.effect("upsert in a scope renews only a membership of the scope's guests; another's is none and left as it was", () =>
      Effect.gen(function*() {
        const repo = yield* MembershipsRepo
        const seed = yield* ContractSeed
        const [mine, theirs] = [yield* seed.company, yield* seed.company]
        const [u1, u2] = [yield* seed.user, yield* seed.user]
        const [myGuest, theirGuest] = [yield* guestOf(mine), yield* guestOf(theirs)]
        const scope = Scopes.of([mine])
        const foreign = Option.getOrThrow(yield* repo.upsert(Scopes.all, u1, 1, theirGuest.id))
        expect(Option.isNone(yield* repo.upsert(scope, u1, 1, myGuest.id))).toBe(true)
        expect(Option.getOrThrow(yield* repo.findById(Scopes.all, foreign.id))).toMatchObject({
          guest_id: theirGuest.id,
          expire_at: foreign.expire_at
        })
        const ours = Option.getOrThrow(yield* repo.upsert(scope, u2, 1, myGuest.id))
        expect(Option.getOrThrow(yield* repo.upsert(scope, u2, 1, null))).toMatchObject({ id: ours.id, renewed: true })
      }))
  })
