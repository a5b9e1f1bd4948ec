// The activity service's quota, registration and transition rules (DECISIONS §4, §5) and the
// daemon's time moves, over in-memory fakes of the repositories and the TestClock: no database,
// no network. End to end with concurrent registrations: test/activities.test.ts.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"

import { moveByTimeOnce } from "../../jobs/TimeMoves.js"
import type { ActivityCreate } from "../../schema/Activities.js"
import { appConfigWith } from "../../src/Config.js"
import * as Scopes from "../../src/domain/scope.js"
import { Activities } from "../../src/services/Activities.js"
import { Memberships } from "../../src/services/Memberships.js"
import { FakeDb } from "../fakes/db.js"
import { FakeCompanyLookup, FakeUserLookup } from "../fakes/lookups.js"
import { seedCompany, seedGuest } from "../fakes/seed.js"
import { FakeStore } from "../fakes/store.js"

// 2026-11-24 12:00 in Asia/Shanghai.
const START = Date.UTC(2026, 10, 24, 4, 0, 0)

const TestLayer = () =>
  Layer.merge(Activities.layerWithoutDependencies, Memberships.layerWithoutDependencies).pipe(
    Layer.provideMerge(Layer.merge(FakeCompanyLookup, FakeUserLookup)),
    Layer.provideMerge(FakeStore),
    Layer.provideMerge(appConfigWith({})),
    Layer.provideMerge(Layer.effectDiscard(TestClock.setTime(START)))
  )

const test = <A, E>(name: string, body: () => Effect.Effect<A, E, Layer.Success<ReturnType<typeof TestLayer>>>) =>
  it.effect(name, () => Effect.provide(body(), TestLayer()))

const input = (companyId: number, over: Partial<ActivityCreate> = {}): ActivityCreate => ({
  title: "周末联谊",
  address: "长沙市岳麓区",
  start_time: "2026-11-24 14:00:00",
  end_time: "2026-11-24 17:00:00",
  company_id: companyId,
  male_quota: 2,
  female_quota: null,
  male_fee: 99,
  female_fee: 0,
  ...over
})

/** An approved, opened activity of a new company. */
const openActivity = (over: Partial<ActivityCreate> = {}) =>
  Effect.gen(function*() {
    const activities = yield* Activities
    const company = yield* seedCompany
    const created = yield* activities.create(Scopes.all, input(company, over))
    yield* activities.operate(created.id, "approve")
    yield* activities.operate(created.id, "open")
    return { company, id: created.id }
  })

const places = (id: number) =>
  Effect.map(FakeDb, (db) => {
    const a = db.tables.activities.get(id)!
    return { male: a.male_registered, female: a.female_registered }
  })

describe("activity service over fakes", () => {
  test("create answers a draft pending audit; end_time not after start_time is 400; an unknown company is 404", () =>
    Effect.gen(function*() {
      const activities = yield* Activities
      const company = yield* seedCompany
      expect(yield* activities.create(Scopes.all, input(company))).toMatchObject({
        status: "draft",
        audit_status: "pending",
        created_at: "2026-11-24 12:00:00"
      })
      const backwards = yield* Effect.flip(activities.create(Scopes.all, input(company, { end_time: "2026-11-24 14:00:00" })))
      expect(backwards).toMatchObject({ _tag: "InvalidInput", issues: [{ path: "end_time" }] })
      expect(yield* Effect.flip(activities.create(Scopes.all, input(company + 1)))).toMatchObject({ _tag: "NotFound", resource: "company" })
    }))

  test("open needs an approved audit; approve and reject overturn each other before opening; repeats change nothing", () =>
    Effect.gen(function*() {
      const activities = yield* Activities
      const { id } = yield* activities.create(Scopes.all, input(yield* seedCompany))
      expect(yield* Effect.flip(activities.operate(id, "open"))).toMatchObject({ _tag: "InvalidTransition" })
      expect(yield* activities.operate(id, "reject")).toMatchObject({ status: "draft", audit_status: "rejected" })
      expect(yield* activities.operate(id, "approve")).toMatchObject({ status: "draft", audit_status: "approved" })
      expect(yield* activities.operate(id, "approve")).toMatchObject({ status: "draft", audit_status: "approved" })
      expect(yield* activities.operate(id, "open")).toMatchObject({ status: "registering", audit_status: "approved" })
      expect(yield* activities.operate(id, "open")).toMatchObject({ status: "registering" })
      expect(yield* Effect.flip(activities.operate(id, "reject"))).toMatchObject({ _tag: "InvalidTransition" })
    }))

  test("registration takes a place of the guest's gender and answers that gender's fee; name and phone default to the guest's", () =>
    Effect.gen(function*() {
      const activities = yield* Activities
      const { company, id } = yield* openActivity()
      const guest = yield* seedGuest({ name: "王磊", gender: "male", phone: "13900001111", company_id: company })
      const registration = yield* activities.register(Scopes.all, id, { guest_id: guest.id })
      expect(registration).toMatchObject({ activity_id: id, guest_id: guest.id, name: "王磊", phone: "13900001111", fee: 99, remark: null })
      expect(yield* places(id)).toEqual({ male: 1, female: 0 })
    }))

  test("a full gender quota is 400 quota_full while the other gender (no quota) still registers", () =>
    Effect.gen(function*() {
      const activities = yield* Activities
      const { company, id } = yield* openActivity({ male_quota: 1 })
      yield* activities.register(Scopes.all, id, { guest_id: (yield* seedGuest({ gender: "male", company_id: company })).id })
      const late = yield* seedGuest({ gender: "male", company_id: company })
      expect(yield* Effect.flip(activities.register(Scopes.all, id, { guest_id: late.id }))).toMatchObject({ _tag: "QuotaFull" })
      for (let i = 0; i < 3; i++) {
        yield* activities.register(Scopes.all, id, { guest_id: (yield* seedGuest({ gender: "female", company_id: company })).id })
      }
      expect(yield* places(id)).toEqual({ male: 1, female: 3 })
    }))

  test("a guest registers once: the second try is 400 already_registered and gives its place back", () =>
    Effect.gen(function*() {
      const activities = yield* Activities
      const { company, id } = yield* openActivity({ male_quota: 2 })
      const guest = yield* seedGuest({ gender: "male", company_id: company })
      yield* activities.register(Scopes.all, id, { guest_id: guest.id })
      expect(yield* Effect.flip(activities.register(Scopes.all, id, { guest_id: guest.id }))).toMatchObject({ _tag: "AlreadyRegistered" })
      expect(yield* places(id)).toEqual({ male: 1, female: 0 })
      // The place given back is still there for someone else.
      yield* activities.register(Scopes.all, id, { guest_id: (yield* seedGuest({ gender: "male", company_id: company })).id })
      expect(yield* places(id)).toEqual({ male: 2, female: 0 })
    }))

  test("registration needs a registering activity (a draft is 400 activity_not_open); unknown activity or guest is 404", () =>
    Effect.gen(function*() {
      const activities = yield* Activities
      const company = yield* seedCompany
      const draft = yield* activities.create(Scopes.all, input(company))
      const guest = yield* seedGuest({ company_id: company })
      expect(yield* Effect.flip(activities.register(Scopes.all, draft.id, { guest_id: guest.id }))).toMatchObject({
        _tag: "ActivityNotOpen"
      })
      expect(yield* Effect.flip(activities.register(Scopes.all, draft.id + 100, { guest_id: guest.id }))).toMatchObject({
        resource: "activity"
      })
      expect(yield* Effect.flip(activities.register(Scopes.all, draft.id, { guest_id: guest.id + 100 }))).toMatchObject({
        resource: "guest"
      })
    }))

  test("by time: registering → ongoing at start_time, → ended at end_time; then registration is closed; drafts stay", () =>
    Effect.gen(function*() {
      const activities = yield* Activities
      const { company, id } = yield* openActivity()
      const draft = yield* activities.create(Scopes.all, input(company))
      const status = (i: number) => Effect.map(FakeDb, (db) => db.tables.activities.get(i)!.status)
      expect(yield* moveByTimeOnce).toMatchObject({ activitiesStarted: 0, activitiesEnded: 0 })
      yield* TestClock.adjust("2 hours")
      expect(yield* moveByTimeOnce).toMatchObject({ activitiesStarted: 1, activitiesEnded: 0 })
      expect([yield* status(id), yield* status(draft.id)]).toEqual(["ongoing", "draft"])
      const guest = yield* seedGuest({ company_id: company })
      expect(yield* Effect.flip(activities.register(Scopes.all, id, { guest_id: guest.id }))).toMatchObject({ _tag: "ActivityNotOpen" })
      yield* TestClock.adjust("3 hours")
      expect(yield* moveByTimeOnce).toMatchObject({ activitiesStarted: 0, activitiesEnded: 1 })
      expect(yield* status(id)).toBe("ended")
    }))

  test("an activity whose start and end both passed between two passes goes straight to ended", () =>
    Effect.gen(function*() {
      const { id } = yield* openActivity()
      yield* TestClock.adjust("1 day")
      expect(yield* moveByTimeOnce).toMatchObject({ activitiesStarted: 1, activitiesEnded: 0 })
      expect(yield* Effect.map(FakeDb, (db) => db.tables.activities.get(id)!.status)).toBe("ended")
    }))
})
