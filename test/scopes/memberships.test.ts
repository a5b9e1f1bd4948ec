// Memberships for a company-scoped client (DECISIONS §14): a membership belongs to its guest's
// company, one without a guest to none. The client lists only its guests' memberships (lists,
// totals and sync); a company_id filter outside the scope is 403 out_of_scope; creating one for
// another company's guest is 404 for that guest, and one without a guest (which would belong to no
// company) 403 out_of_scope. An unscoped client sees and does everything as before.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { runAdmin } from "../../src/admin/commands.js"
import { testServerLayer } from "../support/harness.js"
import { expectNotFound, syncAll, twoCompanies } from "./othersFixture.js"

const newUser = Effect.map(runAdmin(["users", "create", "--name", "范围用户"]), (u) => (u as unknown as { id: number }).id)

/** Memberships of a guest of `mine`, of a guest of `theirs` and without a guest, made by the platform. */
const threeMemberships = Effect.gen(function*() {
  const fixture = yield* twoCompanies
  const { guest, mine, platform, theirs } = fixture
  const [myGuest, theirGuest] = [yield* guest(mine), yield* guest(theirs)]
  const [u1, u2, u3] = [yield* newUser, yield* newUser, yield* newUser]
  const ours = yield* platform.memberships.create({ payload: { user_id: u1, plan_id: 1, guest_id: myGuest.id } })
  const foreign = yield* platform.memberships.create({ payload: { user_id: u2, plan_id: 1, guest_id: theirGuest.id } })
  const guestless = yield* platform.memberships.create({ payload: { user_id: u3, plan_id: 1 } })
  return { ...fixture, myGuest, theirGuest, users: { u1, u2, u3 }, ours: ours.id, foreign: foreign.id, guestless: guestless.id }
})

layer(testServerLayer({ rateLimitBurst: 1_000_000 }))("company scopes: memberships", (it) => {
  it.effect("the list and its total hold only the memberships of the scope's guests; company_id outside it is 403", () =>
    Effect.gen(function*() {
      const { foreign, guestless, mine, ours, platform, scoped, theirs, users } = yield* threeMemberships
      const page = yield* scoped.memberships.list({ query: { status: "active", page_size: 100 } })
      const ids = page.list.map((m) => m.id)
      expect(ids).toContain(ours)
      expect(ids).not.toContain(foreign)
      expect(ids).not.toContain(guestless)
      expect(page.total).toBe(page.list.length)
      expect((yield* scoped.memberships.list({ query: { company_id: mine } })).list.map((m) => m.id)).toEqual([ours])
      // user_id alone is a counter for the platform; a scoped client's total counts its scope only.
      for (const user of [users.u2, users.u3]) {
        expect(yield* scoped.memberships.list({ query: { user_id: user } })).toMatchObject({ list: [], total: 0 })
      }
      expect(yield* Effect.flip(scoped.memberships.list({ query: { company_id: theirs } }))).toMatchObject({ _tag: "OutOfScope" })
      expect((yield* platform.memberships.list({ query: { user_id: users.u3 } })).list.map((m) => m.id)).toEqual([guestless])
      expect((yield* platform.memberships.list({ query: { company_id: theirs } })).list.map((m) => m.id)).toEqual([foreign])
    }))

  it.effect("sync (updated_since and every cursor) and its total hold only the memberships of the scope's guests", () =>
    Effect.gen(function*() {
      const { foreign, guestless, myGuest, ours, platform, scoped, since } = yield* threeMemberships
      const more = [yield* newUser, yield* newUser]
      const added = []
      for (const user of more) {
        added.push((yield* platform.memberships.create({ payload: { user_id: user, plan_id: 2, guest_id: myGuest.id } })).id)
      }
      const seen = yield* syncAll((query) => scoped.memberships.list({ query }), since)
      expect(seen.ids).toEqual([ours, ...added])
      expect(new Set(seen.totals)).toEqual(new Set([3]))
      const everything = yield* syncAll((query) => platform.memberships.list({ query: { ...query, page_size: 100 } }), since)
      expect(everything.ids).toEqual(expect.arrayContaining([ours, foreign, guestless, ...added]))
    }))

  it.effect("create for another company's guest is 404 guest; without a guest 403 out_of_scope; for the scope's guest it saves", () =>
    Effect.gen(function*() {
      const { myGuest, platform, scoped, theirGuest } = yield* threeMemberships
      const user = yield* newUser
      expectNotFound(
        yield* Effect.flip(scoped.memberships.create({ payload: { user_id: user, plan_id: 2, guest_id: theirGuest.id } })),
        "guest",
        theirGuest.id
      )
      expect(yield* Effect.flip(scoped.memberships.create({ payload: { user_id: user, plan_id: 2 } }))).toMatchObject({
        _tag: "OutOfScope"
      })
      expect((yield* platform.memberships.list({ query: { user_id: user } })).total).toBe(0)
      const saved = yield* scoped.memberships.create({ payload: { user_id: user, plan_id: 2, guest_id: myGuest.id } })
      expect(saved.status).toBe("active")
      // The unscoped client may still create one without a guest.
      expect((yield* platform.memberships.create({ payload: { user_id: user, plan_id: 3 } })).status).toBe("active")
    }))

  it.effect("a renewal of another company's (or a guestless) active membership is 403 out_of_scope and leaves it as it was", () =>
    Effect.gen(function*() {
      const { foreign, guestless, myGuest, platform, scoped, users } = yield* threeMemberships
      const before = (yield* platform.memberships.list({ query: { user_id: users.u2 } })).list
      for (const user of [users.u2, users.u3]) {
        const refused = yield* Effect.flip(scoped.memberships.create({ payload: { user_id: user, plan_id: 1, guest_id: myGuest.id } }))
        expect(refused).toMatchObject({ _tag: "OutOfScope" })
      }
      expect((yield* platform.memberships.list({ query: { user_id: users.u2 } })).list).toEqual(before)
      expect((yield* platform.memberships.list({ query: { user_id: users.u3 } })).list.map((m) => [m.id, m.guest_id])).toEqual([[
        guestless,
        null
      ]])
      // The platform renews it as before: same id.
      expect((yield* platform.memberships.create({ payload: { user_id: users.u2, plan_id: 1 } })).id).toBe(foreign)
    }))
})
