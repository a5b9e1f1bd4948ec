// Companies for a company-scoped client (DECISIONS §14): it reads and updates only its own
// companies; another is 404 exactly as an unknown id, absent from lists, totals and sync; an
// unscoped client sees every company as before.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { testServerLayer } from "../support/harness.js"
import { expectNotFound, syncAll, twoCompanies } from "./othersFixture.js"

const UNKNOWN = 987_654_321

layer(testServerLayer({ rateLimitBurst: 1_000_000 }))("company scopes: companies", (it) => {
  it.effect("get answers a scoped client its company; another company is 404 with the body of an unknown id", () =>
    Effect.gen(function*() {
      const { mine, platform, scoped, theirs } = yield* twoCompanies
      expect((yield* scoped.companies.get({ params: { id: mine } })).id).toBe(mine)
      const other = yield* Effect.flip(scoped.companies.get({ params: { id: theirs } }))
      expectNotFound(other, "company", theirs)
      const unknown = yield* Effect.flip(scoped.companies.get({ params: { id: UNKNOWN } }))
      expect({ ...(other as object), message: "" }).toEqual({ ...(unknown as object), message: "" })
      expect((yield* platform.companies.get({ params: { id: theirs } })).id).toBe(theirs)
    }))

  it.effect("the list and its total hold only the scoped client's companies; the unscoped client's list holds both", () =>
    Effect.gen(function*() {
      const { mine, platform, scoped, theirs } = yield* twoCompanies
      const page = yield* scoped.companies.list({ query: { city: "长沙", page_size: 100 } })
      expect(page.list.map((c) => c.id)).toEqual([mine])
      expect(page.total).toBe(1)
      const all = yield* platform.companies.list({ query: { city: "长沙", page_size: 100 } })
      expect(all.list.map((c) => c.id)).toEqual(expect.arrayContaining([mine, theirs]))
      expect(all.total).toBeGreaterThanOrEqual(2)
    }))

  it.effect("sync (updated_since and every cursor) and its total hold only the scoped client's companies", () =>
    Effect.gen(function*() {
      const { mine, platform, scoped, since, theirs } = yield* twoCompanies
      yield* platform.companies.update({ params: { id: theirs }, payload: { city: "长沙" } })
      const seen = yield* syncAll((query) => scoped.companies.list({ query }), since)
      expect(seen.ids).toEqual([mine])
      expect(new Set(seen.totals)).toEqual(new Set([1]))
      const everything = yield* syncAll((query) => platform.companies.list({ query: { ...query, page_size: 100 } }), since)
      expect(everything.ids).toEqual(expect.arrayContaining([mine, theirs]))
    }))

  it.effect("update changes the scoped client's company; another company is 404 and stays unchanged", () =>
    Effect.gen(function*() {
      const { mine, platform, scoped, theirs } = yield* twoCompanies
      expect(yield* scoped.companies.update({ params: { id: mine }, payload: { city: "株洲" } })).toMatchObject({ id: mine, city: "株洲" })
      const refused = yield* Effect.flip(scoped.companies.update({ params: { id: theirs }, payload: { city: "株洲" } }))
      expectNotFound(refused, "company", theirs)
      expect((yield* platform.companies.get({ params: { id: theirs } })).city).toBe("长沙")
      expect(yield* platform.companies.update({ params: { id: theirs }, payload: { city: "湘潭" } })).toMatchObject({ city: "湘潭" })
    }))
})
