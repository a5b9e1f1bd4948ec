// The membership service's create-or-renew, cancel and expiry rules (DECISIONS §3, §5) and the
// daemon's expiry pass, over in-memory fakes of the repositories and the TestClock: no database,
// no network. End to end with concurrent purchases: test/memberships.test.ts.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"

import { moveByTimeOnce } from "../../jobs/TimeMoves.js"
import { appConfigWith } from "../../src/Config.js"
import * as Scopes from "../../src/domain/scope.js"
import { MembershipsRepo } from "../../src/repos/MembershipsRepo.js"
import { Activities } from "../../src/services/Activities.js"
import { Memberships } from "../../src/services/Memberships.js"
import { FakeCompanyLookup, FakeUserLookup } from "../fakes/lookups.js"
import { recordedEvents } from "../fakes/outboxRepo.js"
import { seedGuest, seedUser } from "../fakes/seed.js"
import { FakeStore } from "../fakes/store.js"

// 2026-11-24 12:00 in Asia/Shanghai.
const START = Date.UTC(2026, 10, 24, 4, 0, 0)

const TestLayer = () =>
  Layer.merge(Memberships.layerWithoutDependencies, Activities.layerWithoutDependencies).pipe(
    Layer.provideMerge(Layer.merge(FakeUserLookup, FakeCompanyLookup)),
    Layer.provideMerge(FakeStore),
    Layer.provideMerge(appConfigWith({})),
    Layer.provideMerge(Layer.effectDiscard(TestClock.setTime(START)))
  )

const test = <A, E>(name: string, body: () => Effect.Effect<A, E, Layer.Success<ReturnType<typeof TestLayer>>>) =>
  it.effect(name, () => Effect.provide(body(), TestLayer()))

const buy = (user_id: number, plan_id: number, guest_id?: number) =>
  Effect.flatMap(Memberships, (m) => m.createOrRenew(Scopes.all, { user_id, plan_id, ...(guest_id !== undefined ? { guest_id } : {}) }))

const statusOf = (id: number) => Effect.flatMap(MembershipsRepo, (r) => Effect.map(r.lock(id), (s) => Option.getOrThrow(s).status))

describe("membership service over fakes", () => {
  test("a purchase starts an active membership now for the plan's days", () =>
    Effect.gen(function*() {
      const user = yield* seedUser
      expect(yield* buy(user, 1)).toMatchObject({ status: "active", expire_at: "2026-12-24 12:00:00" })
      expect(yield* buy(user, 3)).toMatchObject({ status: "active", expire_at: "2027-11-24 12:00:00" })
    }))

  test("a purchase of a plan the user holds renews it in place: same id, expire_at extended from the old one, not from now", () =>
    Effect.gen(function*() {
      const user = yield* seedUser
      const first = yield* buy(user, 1)
      yield* TestClock.adjust("10 days")
      expect(yield* buy(user, 1)).toEqual({ id: first.id, status: "active", expire_at: "2027-01-23 12:00:00" })
      expect((yield* recordedEvents).map((e) => [e.type, e.data])).toEqual([
        ["membership.created", { id: first.id }],
        ["membership.renewed", { id: first.id }]
      ])
    }))

  test("a membership past expire_at that the daemon has not reached is expired with its event, and the purchase starts anew from now", () =>
    Effect.gen(function*() {
      const user = yield* seedUser
      const guest = yield* seedGuest()
      const stale = yield* buy(user, 1, guest.id)
      yield* TestClock.adjust("31 days")
      const fresh = yield* buy(user, 1)
      expect(fresh.id).not.toBe(stale.id)
      expect(fresh).toMatchObject({ status: "active", expire_at: "2027-01-24 12:00:00" })
      expect(yield* statusOf(stale.id)).toBe("expired")
      expect((yield* recordedEvents).map((e) => [e.type, e.data])).toEqual([
        ["membership.created", { id: stale.id }],
        ["membership.expired", { id: stale.id }],
        ["membership.created", { id: fresh.id }]
      ])
    }))

  test("the daemon expires a membership at its expire_at, not a millisecond before, with one event; a second pass moves nothing", () =>
    Effect.gen(function*() {
      const user = yield* seedUser
      const m = yield* buy(user, 1)
      yield* TestClock.adjust(30 * 86_400_000 - 1)
      expect((yield* moveByTimeOnce).membershipsExpired).toBe(0)
      yield* TestClock.adjust(1)
      expect((yield* moveByTimeOnce).membershipsExpired).toBe(1)
      expect((yield* moveByTimeOnce).membershipsExpired).toBe(0)
      expect(yield* statusOf(m.id)).toBe("expired")
      expect((yield* recordedEvents).filter((e) => e.type === "membership.expired")).toHaveLength(1)
    }))

  test("cancel moves active → cancelled and again is a no-op; an expired one cannot be cancelled; a purchase after a cancel is new", () =>
    Effect.gen(function*() {
      const memberships = yield* Memberships
      const user = yield* seedUser
      const m = yield* buy(user, 2)
      expect(yield* memberships.cancel(m.id)).toMatchObject({ id: m.id, status: "cancelled", plan_name: "季度会员" })
      expect(yield* memberships.cancel(m.id)).toMatchObject({ id: m.id, status: "cancelled" })
      const next = yield* buy(user, 2)
      expect(next.id).not.toBe(m.id)
      yield* TestClock.adjust("91 days")
      yield* moveByTimeOnce
      expect(yield* Effect.flip(memberships.cancel(next.id))).toMatchObject({ _tag: "InvalidTransition" })
      expect(yield* Effect.flip(memberships.cancel(next.id + 100))).toMatchObject({ _tag: "NotFound", resource: "membership" })
      // One cancelled event: the second cancel changed nothing.
      expect((yield* recordedEvents).map((e) => [e.type, e.data])).toEqual([
        ["membership.created", { id: m.id }],
        ["membership.cancelled", { id: m.id }],
        ["membership.created", { id: next.id }],
        ["membership.expired", { id: next.id }]
      ])
    }))

  test("an unknown user, plan or guest is 404 naming it, and nothing is created", () =>
    Effect.gen(function*() {
      const user = yield* seedUser
      expect(yield* Effect.flip(buy(user + 100, 1))).toMatchObject({ resource: "user" })
      expect(yield* Effect.flip(buy(user, 99))).toMatchObject({ resource: "plan" })
      expect(yield* Effect.flip(buy(user, 1, 999))).toMatchObject({ resource: "guest" })
      expect((yield* buy(user, 1)).id).toBe(1)
    }))
})
