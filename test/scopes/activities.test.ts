// Activities for a company-scoped client (DECISIONS §14): it lists, creates and registers for only
// its companies' activities; another company's activity is 404 as an unknown id and absent from
// lists, totals and sync; a company_id outside the scope is 403 out_of_scope; a guest of another
// company is 404 to register. An unscoped client sees and does everything as before.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { runAdmin } from "../../src/admin/commands.js"
import { formatTimestamp } from "../../src/domain/time.js"
import { testServerLayer } from "../support/harness.js"
import { type Api, expectNotFound, syncAll, twoCompanies } from "./othersFixture.js"

/** Wall time in the platform zone, `minutes` from now. */
const at = (minutes: number) => formatTimestamp(new Date(Date.now() + minutes * 60_000), "Asia/Shanghai")

const activityOf = (client: Api, company: number) =>
  client.activities.create({
    payload: { title: "周末联谊", address: "长沙市岳麓山", start_time: at(60 * 24), end_time: at(60 * 28), company_id: company }
  })

/** An activity open for registration, as the operator approves and opens it. */
const open = (client: Api, company: number) =>
  Effect.gen(function*() {
    const { id } = yield* activityOf(client, company)
    yield* runAdmin(["activities", "approve", String(id)])
    yield* runAdmin(["activities", "open", String(id)])
    return id
  })

layer(testServerLayer({ rateLimitBurst: 1_000_000 }))("company scopes: activities", (it) => {
  it.effect("the list, its total and a company_id filter hold only the scope's activities; company_id outside it is 403", () =>
    Effect.gen(function*() {
      const { mine, platform, scoped, theirs } = yield* twoCompanies
      const a = yield* activityOf(platform, mine)
      const b = yield* activityOf(platform, theirs)
      const page = yield* scoped.activities.list({ query: { page_size: 100 } })
      const ids = page.list.map((x) => x.id)
      expect(ids).toContain(a.id)
      expect(ids).not.toContain(b.id)
      expect(page.list.every((x) => x.company_id === mine)).toBe(true)
      // Exact: the scope's activities, not the platform's counter.
      expect(page.total).toBe(page.list.length)
      expect((yield* scoped.activities.list({ query: { company_id: mine } })).total).toBe(1)
      expect((yield* scoped.activities.list({ query: { status: "draft", page_size: 100 } })).total).toBe(1)
      const refused = yield* Effect.flip(scoped.activities.list({ query: { company_id: theirs } }))
      expect(refused).toMatchObject({ _tag: "OutOfScope" })
      const all = yield* platform.activities.list({ query: { company_id: theirs } })
      expect(all.list.map((x) => x.id)).toEqual([b.id])
    }))

  it.effect("sync (updated_since and every cursor) and its total hold only the scope's activities", () =>
    Effect.gen(function*() {
      const { mine, platform, scoped, since, theirs } = yield* twoCompanies
      const mineIds = [
        (yield* activityOf(platform, mine)).id,
        (yield* activityOf(platform, mine)).id,
        (yield* activityOf(platform, mine)).id
      ]
      const b = yield* activityOf(platform, theirs)
      const seen = yield* syncAll((query) => scoped.activities.list({ query }), since)
      expect(seen.ids).toEqual(mineIds)
      expect(new Set(seen.totals)).toEqual(new Set([3]))
      const everything = yield* syncAll((query) => platform.activities.list({ query: { ...query, page_size: 100 } }), since)
      expect(everything.ids).toEqual(expect.arrayContaining([...mineIds, b.id]))
    }))

  it.effect("create names a company of the scope; another company is 403 out_of_scope and nothing is created", () =>
    Effect.gen(function*() {
      const { mine, platform, scoped, theirs } = yield* twoCompanies
      expect((yield* activityOf(scoped, mine)).status).toBe("draft")
      const refused = yield* Effect.flip(activityOf(scoped, theirs))
      expect(refused).toMatchObject({ _tag: "OutOfScope" })
      expect((yield* platform.activities.list({ query: { company_id: theirs } })).total).toBe(0)
      expect((yield* activityOf(platform, theirs)).status).toBe("draft")
    }))

  it.effect("register: another company's activity is 404 activity, another company's guest 404 guest; the scope's own register", () =>
    Effect.gen(function*() {
      const { guest, mine, platform, scoped, theirs } = yield* twoCompanies
      const ours = yield* open(platform, mine)
      const foreign = yield* open(platform, theirs)
      const myGuest = yield* guest(mine)
      const theirGuest = yield* guest(theirs)
      expectNotFound(
        yield* Effect.flip(scoped.activities.register({ params: { id: foreign }, payload: { guest_id: myGuest.id } })),
        "activity",
        foreign
      )
      expectNotFound(
        yield* Effect.flip(scoped.activities.register({ params: { id: ours }, payload: { guest_id: theirGuest.id } })),
        "guest",
        theirGuest.id
      )
      const registered = yield* scoped.activities.register({ params: { id: ours }, payload: { guest_id: myGuest.id } })
      expect(registered).toMatchObject({ activity_id: ours, guest_id: myGuest.id })
      // The unscoped client registers across companies as before.
      const across = yield* platform.activities.register({ params: { id: ours }, payload: { guest_id: theirGuest.id } })
      expect(across).toMatchObject({ activity_id: ours, guest_id: theirGuest.id })
    }))
})
