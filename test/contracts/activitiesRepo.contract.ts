// What the activity service and the time moves rely on from ActivitiesRepo (all but the list), run
// against the real repository (integration) and its in-memory fake (unit).
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { deriveGuest } from "../../src/domain/guest.js"
import * as Scopes from "../../src/domain/scope.js"
import { ActivitiesRepo, type ActivityInsert } from "../../src/repos/ActivitiesRepo.js"
import { GuestsRepo } from "../../src/repos/GuestsRepo.js"
import { OutboxRepo } from "../../src/repos/OutboxRepo.js"
import { ContractSeed } from "./seed.js"

const HOUR = 3_600_000
let seq = 0

const newActivity = (companyId: number, over: Partial<ActivityInsert> = {}): ActivityInsert => ({
  title: `契约活动${seq++}`,
  address: "长沙",
  start_time: "2030-05-01 14:00:00",
  end_time: "2030-05-01 17:00:00",
  company_id: companyId,
  description: null,
  cover_url: null,
  male_quota: 1,
  female_quota: null,
  male_fee: 99.9,
  female_fee: 0,
  ...over
})

const newGuest = (companyId: number, gender: "male" | "female") =>
  Effect.flatMap(GuestsRepo, (g) => g.insert(deriveGuest({ name: `活动嘉宾${seq++}`, gender, company_id: companyId }, undefined)))

/** An activity open for registration. */
const registering = (over: Partial<ActivityInsert> = {}) =>
  Effect.gen(function*() {
    const repo = yield* ActivitiesRepo
    const company = yield* (yield* ContractSeed).company
    const a = yield* repo.insert(newActivity(company, over))
    yield* repo.setState({ id: a.id, status: "registering", audit_status: "approved" })
    return { company, activity: a }
  })

export const activitiesRepoContract = (name: string, repo: Layer.Layer<ActivitiesRepo | GuestsRepo | OutboxRepo | ContractSeed>) =>
  layer(repo)(`ActivitiesRepo contract (${name})`, (it) => {
    it.effect("a new activity is a draft pending audit, answered as stored; setState moves status and audit", () =>
      Effect.gen(function*() {
        const repo = yield* ActivitiesRepo
        const company = yield* (yield* ContractSeed).company
        const input = newActivity(company)
        const a = yield* repo.insert(input)
        expect(a).toMatchObject({ ...input, status: "draft", audit_status: "pending" })
        expect(Option.getOrThrow(yield* repo.findById(Scopes.all, a.id))).toEqual(a)
        expect(Option.getOrThrow(yield* repo.lockState(a.id))).toEqual({ id: a.id, status: "draft", audit_status: "pending" })
        const moved = yield* repo.setState({ id: a.id, status: "registering", audit_status: "approved" })
        expect(moved).toEqual({ ...a, status: "registering", audit_status: "approved" })
        expect(Option.isNone(yield* repo.findById(Scopes.all, a.id + 1000))).toBe(true)
        expect(Option.isNone(yield* repo.lockState(a.id + 1000))).toBe(true)
      }))

    it.effect("an insert records one activity.created event carrying the activity as stored (the real one in the insert's own statement)", () =>
      Effect.gen(function*() {
        const repo = yield* ActivitiesRepo
        const outbox = yield* OutboxRepo
        const a = yield* repo.insert(newActivity(yield* (yield* ContractSeed).company))
        const events = (yield* outbox.after(0, 100_000)).filter((e) =>
          e.type === "activity.created" && (e.data as { readonly id?: number }).id === a.id
        )
        expect(events.map((e) => ({ permission: e.permission, data: e.data }))).toEqual([
          { permission: "open:activity:read", data: a }
        ])
      }))

    it.effect("a place is taken only while registering and within the gender's quota (null: unlimited), answering its fee", () =>
      Effect.gen(function*() {
        const repo = yield* ActivitiesRepo
        const company = yield* (yield* ContractSeed).company
        const draft = yield* repo.insert(newActivity(company))
        expect(Option.isNone(yield* repo.takePlace(draft.id, "male"))).toBe(true)
        const { activity } = yield* registering({ male_quota: 1, female_quota: null, male_fee: 99.9, female_fee: 10 })
        expect(yield* repo.takePlace(activity.id, "male")).toEqual(Option.some(99.9))
        expect(Option.isNone(yield* repo.takePlace(activity.id, "male"))).toBe(true)
        for (let i = 0; i < 5; i++) expect(yield* repo.takePlace(activity.id, "female")).toEqual(Option.some(10))
        const none = yield* registering({ male_quota: 0 })
        expect(Option.isNone(yield* repo.takePlace(none.activity.id, "male"))).toBe(true)
        expect(Option.isNone(yield* repo.takePlace(activity.id + 1000, "female"))).toBe(true)
      }))

    it.effect("a guest registers once per activity (then 400 already_registered); registrationState tells status and registration", () =>
      Effect.gen(function*() {
        const repo = yield* ActivitiesRepo
        const { activity, company } = yield* registering()
        const guest = yield* newGuest(company, "female")
        expect(Option.getOrThrow(yield* repo.registrationState(activity.id, guest.id))).toEqual({
          status: "registering",
          registered: false
        })
        const input = { activity_id: activity.id, guest_id: guest.id, name: "报名人", phone: null, remark: "素食", fee: 10 }
        const r = yield* repo.insertRegistration(input)
        const { activity_id, fee, guest_id, name, phone, remark } = input
        expect(r).toMatchObject({ activity_id, fee, guest_id, name, phone, remark })
        expect(r.registration_id).toBeGreaterThan(0)
        expect(r.registered_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
        const again = yield* Effect.flip(repo.insertRegistration(input))
        expect(again).toMatchObject({ _tag: "AlreadyRegistered" })
        expect(Option.getOrThrow(yield* repo.registrationState(activity.id, guest.id))).toEqual({ status: "registering", registered: true })
        expect(Option.isNone(yield* repo.registrationState(activity.id + 1000, guest.id))).toBe(true)
      }))

    it.effect("by time: registering → ongoing at start_time, → ended at end_time (straight to ended past both); drafts stay", () =>
      Effect.gen(function*() {
        const repo = yield* ActivitiesRepo
        const seed = yield* ContractSeed
        const started = (yield* registering()).activity
        const over = (yield* registering()).activity
        const future = (yield* registering()).activity
        const draft = yield* repo.insert(newActivity(yield* seed.company))
        yield* seed.setActivityWindow(started.id, -HOUR, HOUR)
        yield* seed.setActivityWindow(over.id, -2 * HOUR, -HOUR)
        yield* seed.setActivityWindow(future.id, HOUR, 2 * HOUR)
        yield* seed.setActivityWindow(draft.id, -2 * HOUR, -HOUR)
        expect(yield* repo.startDue).toEqual(expect.arrayContaining([started.id, over.id]))
        const status = (id: number) => Effect.map(repo.lockState(id), (s) => Option.getOrThrow(s).status)
        expect([yield* status(started.id), yield* status(over.id), yield* status(future.id), yield* status(draft.id)]).toEqual([
          "ongoing",
          "ended",
          "registering",
          "draft"
        ])
        yield* seed.setActivityWindow(started.id, -2 * HOUR, -1000)
        expect(yield* repo.endDue).toContain(started.id)
        expect(yield* status(started.id)).toBe("ended")
      }))

    it.effect("findById answers an activity only within the scope: another company's is none, as if it did not exist", () =>
      Effect.gen(function*() {
        const repo = yield* ActivitiesRepo
        const seed = yield* ContractSeed
        const [mine, theirs] = [yield* seed.company, yield* seed.company]
        const a = yield* repo.insert(newActivity(mine))
        const b = yield* repo.insert(newActivity(theirs))
        expect(Option.getOrThrow(yield* repo.findById(Scopes.of([mine]), a.id))).toEqual(a)
        expect(Option.isNone(yield* repo.findById(Scopes.of([mine]), b.id))).toBe(true)
        expect(Option.isNone(yield* repo.findById(Scopes.of([]), a.id))).toBe(true)
        expect(Option.getOrThrow(yield* repo.findById(Scopes.of([mine, theirs]), b.id))).toEqual(b)
        expect(Option.getOrThrow(yield* repo.findById(Scopes.all, b.id))).toEqual(b)
      }))
  })
