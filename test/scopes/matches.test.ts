// Matches for a company-scoped client (DECISIONS §14): a match belongs to both its guests'
// companies, so the client reads (and moves) a match when either guest is of its companies; one
// with neither is 404 as an unknown id and absent from lists, totals and sync. Creating a match
// with a guest of another company is 404 for that guest; a company_id filter outside the scope is
// 403 out_of_scope. An unscoped client sees and does everything as before.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { testServerLayer } from "../support/harness.js"
import { type Api, expectNotFound, syncAll, twoCompanies } from "./othersFixture.js"

/** Matches within `mine`, across both companies, and within `theirs`, made by the platform. */
const threeMatches = Effect.gen(function*() {
  const fixture = yield* twoCompanies
  const { guest, mine, platform, theirs } = fixture
  const pair = (client: Api, a: number, b: number) => client.matches.create({ payload: { guest_a_id: a, guest_b_id: b } })
  const [m1, m2, t1, t2] = [yield* guest(mine), yield* guest(mine, "female"), yield* guest(theirs), yield* guest(theirs, "female")]
  const within = yield* pair(platform, m1.id, m2.id)
  const across = yield* pair(platform, t1.id, m2.id)
  const foreign = yield* pair(platform, t1.id, t2.id)
  return { ...fixture, pair, guests: { m1, m2, t1, t2 }, within: within.id, across: across.id, foreign: foreign.id }
})

layer(testServerLayer({ rateLimitBurst: 1_000_000 }))("company scopes: matches", (it) => {
  it.effect("the list and its total hold the matches with a guest of the scope (either side); company_id outside it is 403", () =>
    Effect.gen(function*() {
      const { across, foreign, guests, mine, platform, scoped, theirs, within } = yield* threeMatches
      const page = yield* scoped.matches.list({ query: { company_id: mine } })
      expect(page.list.map((m) => m.id)).toEqual([across, within])
      expect(page.total).toBe(2)
      // By guest: the foreign guest's matches the client may read are those with one of its guests.
      const ofForeignGuest = yield* scoped.matches.list({ query: { guest_id: guests.t1.id } })
      expect(ofForeignGuest.list.map((m) => m.id)).toEqual([across])
      expect(ofForeignGuest.total).toBe(1)
      // Status alone is a counter for the platform; a scoped client's total is counted with its scope.
      const pending = yield* scoped.matches.list({ query: { status: "pending", page_size: 100 } })
      expect(pending.list.map((m) => m.id)).not.toContain(foreign)
      expect(pending.total).toBe(pending.list.length)
      expect(yield* Effect.flip(scoped.matches.list({ query: { company_id: theirs } }))).toMatchObject({ _tag: "OutOfScope" })
      const all = yield* platform.matches.list({ query: { company_id: theirs } })
      expect(all.list.map((m) => m.id)).toEqual([foreign, across])
    }))

  it.effect("sync (updated_since and every cursor) and its total hold only the matches with a guest of the scope", () =>
    Effect.gen(function*() {
      const { across, foreign, platform, scoped, since, within } = yield* threeMatches
      const seen = yield* syncAll((query) => scoped.matches.list({ query }), since)
      expect(seen.ids).toEqual([within, across])
      expect(new Set(seen.totals)).toEqual(new Set([2]))
      const everything = yield* syncAll((query) => platform.matches.list({ query: { ...query, page_size: 100 } }), since)
      expect(everything.ids).toEqual(expect.arrayContaining([within, across, foreign]))
    }))

  it.effect("create with a guest of another company is 404 for that guest; two guests of the scope make a match", () =>
    Effect.gen(function*() {
      const { guest, guests, mine, pair, platform, scoped } = yield* threeMatches
      expectNotFound(yield* Effect.flip(pair(scoped, guests.m1.id, guests.t2.id)), "guest", guests.t2.id)
      expectNotFound(yield* Effect.flip(pair(scoped, guests.t2.id, guests.m1.id)), "guest", guests.t2.id)
      const third = yield* guest(mine, "female")
      expect((yield* pair(scoped, guests.m1.id, third.id)).status).toBe("pending")
      // The unscoped client matches across companies as before.
      expect((yield* pair(platform, guests.m1.id, guests.t2.id)).status).toBe("pending")
    }))

  it.effect("create naming another company's matchmaker for a side is 404 for that matchmaker; its own matchmaker is taken", () =>
    Effect.gen(function*() {
      const { guest, mine, platform, scoped, theirs } = yield* threeMatches
      const [a, b] = [yield* guest(mine), yield* guest(mine, "female")]
      const ours = yield* platform.matchmakers.create({ payload: { name: "本方红娘", company_id: mine } })
      const rival = yield* platform.matchmakers.create({ payload: { name: "他方红娘", company_id: theirs } })
      const refused = yield* Effect.flip(
        scoped.matches.create({ payload: { guest_a_id: a.id, guest_b_id: b.id, guest_a_matchmaker_id: rival.id } })
      )
      expectNotFound(refused, "matchmaker", rival.id)
      const made = yield* scoped.matches.create({ payload: { guest_a_id: a.id, guest_b_id: b.id, guest_a_matchmaker_id: ours.id } })
      expect(made.status).toBe("pending")
    }))

  it.effect("a status change of a match outside the scope is 404 and leaves it; one across the scope's border moves", () =>
    Effect.gen(function*() {
      const { across, foreign, platform, scoped, theirs } = yield* threeMatches
      const refused = yield* Effect.flip(scoped.matches.updateStatus({ params: { id: foreign }, payload: { status: "pending_date" } }))
      expectNotFound(refused, "match", foreign)
      expect(yield* scoped.matches.updateStatus({ params: { id: across }, payload: { status: "pending_date" } })).toMatchObject({
        id: across,
        status: "pending_date"
      })
      const theirsNow = (yield* platform.matches.list({ query: { company_id: theirs } })).list
      expect(theirsNow.find((m) => m.id === foreign)?.status).toBe("pending")
      expect(yield* platform.matches.updateStatus({ params: { id: foreign }, payload: { status: "pending_date" } })).toMatchObject({
        status: "pending_date"
      })
    }))
})
