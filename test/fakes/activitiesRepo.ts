// An in-memory ActivitiesRepo over the fake database: activities and registrations with the real
// repository's rules — a new activity is a draft pending audit; a place is taken only while the
// activity is registering and the gender's quota (null: unlimited) has room, answering that
// gender's fee; one registration per guest and activity (a second is 400 already_registered); the
// time moves (registering → ongoing at start_time, → ended at end_time) against "now", which here
// is the fiber's clock (the TestClock) where PostgreSQL uses now(). An insert records its
// activity.created event, as the real one does in its statement. The list is not faked.
// Checked against the real one by test/contracts/activitiesRepo.contract.ts.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import type { Activity, Registration } from "../../schema/Activities.js"
import { PlatformTimeZone } from "../../src/Config.js"
import { genderSide } from "../../src/domain/activities.js"
import { AlreadyRegistered } from "../../src/domain/errors.js"
import { EVENT_READ_PERMISSION } from "../../src/domain/eventTypes.js"
import * as Scopes from "../../src/domain/scope.js"
import { formatTimestamp, parseTimestamp } from "../../src/domain/time.js"
import { ActivitiesRepo } from "../../src/repos/ActivitiesRepo.js"
import { type FakeActivity, FakeDb, type FakeRegistration, nextId, now } from "./db.js"
import { addFakeEvent } from "./outboxRepo.js"

/** numeric(10, 2). */
const money = (n: number) => Math.round(n * 100) / 100

export const makeFakeActivitiesRepo = Effect.gen(function*() {
  const db = yield* FakeDb
  const toActivity = (a: FakeActivity, tz: string): Activity => {
    const at = (ms: number) => formatTimestamp(new Date(ms), tz)
    const { created_at, end_time, female_registered: _f, male_registered: _m, start_time, ...rest } = a
    return { ...rest, start_time: at(start_time), end_time: at(end_time), created_at: at(created_at) }
  }
  const toRegistration = (r: FakeRegistration, tz: string): Registration => {
    const { id, registered_at, ...rest } = r
    return { registration_id: id, ...rest, registered_at: formatTimestamp(new Date(registered_at), tz) }
  }
  const activity = (id: number) => Option.fromNullishOr(db.tables.activities.get(id))
  const moved = (from: FakeActivity["status"], move: (a: FakeActivity, nowMs: number) => boolean) =>
    Effect.map(
      now,
      (nowMs) =>
        [...db.tables.activities.values()].filter((a) => a.status === from && move(a, nowMs)).map((a) => a.id).sort((a, b) => a - b)
    )

  return ActivitiesRepo.of({
    insert: (input) =>
      Effect.gen(function*() {
        const tz = yield* PlatformTimeZone
        const row: FakeActivity = {
          id: nextId(db, "activities"),
          ...input,
          start_time: parseTimestamp(input.start_time, tz).getTime(),
          end_time: parseTimestamp(input.end_time, tz).getTime(),
          male_fee: money(input.male_fee),
          female_fee: money(input.female_fee),
          male_registered: 0,
          female_registered: 0,
          status: "draft",
          audit_status: "pending",
          created_at: yield* now
        }
        db.tables.activities.set(row.id, row)
        // Its activity.created event, as the real insert records it in the same statement.
        const shown = toActivity(row, tz)
        yield* addFakeEvent(db, "activity.created", EVENT_READ_PERMISSION.activity, shown)
        return shown
      }),
    findById: (scope, id) =>
      Effect.map(
        PlatformTimeZone,
        (tz) => Option.map(Option.filter(activity(id), (a) => Scopes.includes(scope, a.company_id)), (a) => toActivity(a, tz))
      ),
    lockState: (id) => Effect.sync(() => Option.map(activity(id), (a) => ({ id: a.id, status: a.status, audit_status: a.audit_status }))),
    setState: (state) =>
      Effect.gen(function*() {
        const a = db.tables.activities.get(state.id)
        if (a === undefined) return yield* Effect.die(new Error(`activity ${state.id} does not exist`))
        a.status = state.status
        a.audit_status = state.audit_status
        return toActivity(a, yield* PlatformTimeZone)
      }),
    takePlace: (id, gender) =>
      Effect.sync(() => {
        const a = db.tables.activities.get(id)
        const side = genderSide(gender)
        if (a === undefined || a.status !== "registering") return Option.none()
        const quota = a[side.quota]
        if (quota !== null && a[side.registered] >= quota) return Option.none()
        a[side.registered]++
        return Option.some(a[side.fee])
      }),
    registrationState: (id, guestId) =>
      Effect.sync(() =>
        Option.map(activity(id), (a) => ({
          status: a.status,
          registered: db.tables.registrations.some((r) => r.activity_id === id && r.guest_id === guestId)
        }))
      ),
    insertRegistration: (input) =>
      Effect.gen(function*() {
        if (db.tables.registrations.some((r) => r.activity_id === input.activity_id && r.guest_id === input.guest_id)) {
          return yield* new AlreadyRegistered({ message: "the guest is already registered for this activity" })
        }
        const row: FakeRegistration = { id: nextId(db, "registrations"), ...input, fee: money(input.fee), registered_at: yield* now }
        db.tables.registrations.push(row)
        return toRegistration(row, yield* PlatformTimeZone)
      }),
    startDue: moved("registering", (a, nowMs) => {
      if (a.start_time > nowMs) return false
      a.status = a.end_time <= nowMs ? "ended" : "ongoing"
      return true
    }),
    endDue: moved("ongoing", (a, nowMs) => {
      if (a.end_time > nowMs) return false
      a.status = "ended"
      return true
    }),
    list: () => Effect.die(new Error("ActivitiesRepo.list is not faked: list tests run against PostgreSQL"))
  })
})

export const FakeActivitiesRepo: Layer.Layer<ActivitiesRepo, never, FakeDb> = Layer.effect(ActivitiesRepo, makeFakeActivitiesRepo)
