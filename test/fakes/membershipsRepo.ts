// An in-memory MembershipsRepo over the fake database: plans (the three seeded ones first) and
// memberships with the real repository's rules — at most one active membership per user and plan,
// so create-or-renew extends that one's expire_at by the plan's days (keeping its guest unless a
// new one is given) or starts a new one now; expiry moves every active membership whose expire_at
// has passed (all, or one user's plan) and records one membership.expired event each, in id order.
// "Now" is the fiber's clock (the TestClock) where PostgreSQL uses now(). The list is not faked.
// Checked against the real one by test/contracts/membershipsRepo.contract.ts.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import type { Membership } from "../../schema/Memberships.js"
import { PlatformTimeZone } from "../../src/Config.js"
import * as Scopes from "../../src/domain/scope.js"
import { formatTimestamp } from "../../src/domain/time.js"
import { MembershipsRepo } from "../../src/repos/MembershipsRepo.js"
import { FakeDb, type FakeMembership, nextId, now } from "./db.js"

const DAY_MS = 86_400_000

export const makeFakeMembershipsRepo = Effect.gen(function*() {
  const db = yield* FakeDb
  const plan = (id: number) => Option.fromNullishOr(db.tables.membershipPlans.get(id))
  const toMembership = (m: FakeMembership, tz: string): Membership => {
    const at = (ms: number) => formatTimestamp(new Date(ms), tz)
    return {
      id: m.id,
      user_id: m.user_id,
      guest_id: m.guest_id,
      plan_name: db.tables.membershipPlans.get(m.plan_id)!.name,
      plan_id: m.plan_id,
      status: m.status,
      started_at: at(m.started_at),
      expire_at: at(m.expire_at),
      created_at: at(m.created_at)
    }
  }

  /** A membership belongs to its guest's company; one without a guest (or its guest gone) to none. */
  const inScope = (scope: Scopes.CompanyScope, m: FakeMembership) =>
    !Scopes.isScoped(scope) || (m.guest_id !== null && Scopes.includes(scope, db.tables.guests.get(m.guest_id)?.state.company_id))

  return MembershipsRepo.of({
    insertPlan: (p) =>
      Effect.sync(() => {
        const row = { id: nextId(db, "membershipPlans"), name: p.name, days: p.days }
        db.tables.membershipPlans.set(row.id, row)
        return row
      }),
    plans: Effect.sync(() => [...db.tables.membershipPlans.values()].sort((a, b) => a.id - b.id).map((p) => ({ ...p }))),
    findPlan: (id) => Effect.sync(() => Option.map(plan(id), (p) => ({ ...p }))),
    upsert: (scope, userId, planId, guestId) =>
      Effect.gen(function*() {
        const tz = yield* PlatformTimeZone
        const p = db.tables.membershipPlans.get(planId)
        if (p === undefined) return Option.none()
        const active = [...db.tables.memberships.values()].find((m) =>
          m.user_id === userId && m.plan_id === planId && m.status === "active"
        )
        if (active !== undefined) {
          if (!inScope(scope, active)) return Option.none()
          active.expire_at += p.days * DAY_MS
          active.guest_id = guestId ?? active.guest_id
          return Option.some({
            id: active.id,
            status: active.status,
            expire_at: formatTimestamp(new Date(active.expire_at), tz),
            renewed: true
          })
        }
        const nowMs = yield* now
        const row: FakeMembership = {
          id: nextId(db, "memberships"),
          user_id: userId,
          guest_id: guestId,
          plan_id: planId,
          status: "active",
          started_at: nowMs,
          expire_at: nowMs + p.days * DAY_MS,
          created_at: nowMs
        }
        db.tables.memberships.set(row.id, row)
        return Option.some({ id: row.id, status: row.status, expire_at: formatTimestamp(new Date(row.expire_at), tz), renewed: false })
      }),
    lock: (id) =>
      Effect.sync(() => Option.map(Option.fromNullishOr(db.tables.memberships.get(id)), (m) => ({ id: m.id, status: m.status }))),
    setStatus: (id, status) =>
      Effect.sync(() => {
        const m = db.tables.memberships.get(id)
        if (m !== undefined) m.status = status
      }),
    findById: (scope, id) =>
      Effect.map(PlatformTimeZone, (tz) =>
        Option.map(
          Option.filter(Option.fromNullishOr(db.tables.memberships.get(id)), (m) => inScope(scope, m)),
          (m) => toMembership(m, tz)
        )),
    expireDue: (scope = null) =>
      Effect.gen(function*() {
        const nowMs = yield* now
        const due = [...db.tables.memberships.values()]
          .filter((m) =>
            m.status === "active" && m.expire_at <= nowMs && (scope === null || (m.user_id === scope.userId && m.plan_id === scope.planId))
          )
          .sort((a, b) => a.id - b.id)
        for (const m of due) m.status = "expired"
        return due.map((m) => m.id)
      }),
    list: () => Effect.die(new Error("MembershipsRepo.list is not faked: list tests run against PostgreSQL"))
  })
})

export const FakeMembershipsRepo: Layer.Layer<MembershipsRepo, never, FakeDb> = Layer.effect(MembershipsRepo, makeFakeMembershipsRepo)
