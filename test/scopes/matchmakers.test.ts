// Company-scoped clients and matchmakers (DECISIONS §14): a client bound to one company reads,
// lists, counts, syncs and ids-lists only its companies' matchmakers; independent ones (no
// company) are outside every scope; a company_id outside the scope is 403 out_of_scope, another
// company's matchmaker 404; creation without company_id takes the client's only company (400 when
// it has several); an unscoped client sees and makes every matchmaker as before.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { signedClient, testServerLayer } from "../support/harness.js"

/** Two companies with a matchmaker each (with a wechat_id), an independent one, a client bound to the first. */
const world = Effect.gen(function*() {
  const { client: platform } = yield* signedClient()
  const a = (yield* platform.companies.create({ payload: { name: "甲红娘所" } })).id
  const b = (yield* platform.companies.create({ payload: { name: "乙红娘所" } })).id
  const matchmaker = (name: string, company_id: number | null) =>
    Effect.map(
      platform.matchmakers.create({ payload: { name, company_id, wechat_id: `wxid_${name}_${Date.now()}` } }),
      (m) => m.id
    )
  const ma = yield* matchmaker("甲", a)
  const mb = yield* matchmaker("乙", b)
  const lone = yield* matchmaker("独", null)
  const { client } = yield* signedClient(undefined, { scope: [a] })
  return { platform, client, a, b, ma, mb, lone }
})

const tagOf = (error: unknown) => (error as { _tag: string })._tag

layer(testServerLayer())("scoped clients: matchmakers", (it) => {
  it.effect("a scoped client reads only its companies' matchmakers; another's and independent ones are 404 and absent", () =>
    Effect.gen(function*() {
      const { a, b, client, lone, ma, mb, platform } = yield* world
      expect((yield* client.matchmakers.get({ params: { id: ma } })).company_id).toBe(a)
      expect(tagOf(yield* Effect.flip(client.matchmakers.get({ params: { id: mb } })))).toBe("NotFound")
      expect(tagOf(yield* Effect.flip(client.matchmakers.get({ params: { id: lone } })))).toBe("NotFound")
      const page = yield* client.matchmakers.list({ query: { page_size: 100 } })
      expect(page.list.map((m) => m.id)).toEqual([ma])
      expect(page.total).toBe(1)
      expect((yield* client.matchmakers.list({ query: { company_id: b } })).total).toBe(0)
      const synced = yield* client.matchmakers.list({ query: { updated_since: "2000-01-01 00:00:00", page_size: 100 } })
      expect(synced.list.map((m) => m.id)).toEqual([ma])
      const ids = yield* client.matchmakers.ids({ query: { page_size: 100 } })
      expect(ids.list.map((m) => m.id)).toEqual([ma])
      expect(ids.total).toBe(1)
      // The platform's own client sees them all.
      expect((yield* platform.matchmakers.get({ params: { id: lone } })).company_id).toBeNull()
      expect((yield* platform.matchmakers.list({ query: { company_id: b } })).total).toBe(1)
    }))

  it.effect("writes: company_id outside the scope or none is 403, another company's matchmaker 404; the only company is the default", () =>
    Effect.gen(function*() {
      const { a, b, client, mb, ma, platform } = yield* world
      expect(tagOf(yield* Effect.flip(client.matchmakers.create({ payload: { name: "越界", company_id: b } })))).toBe("OutOfScope")
      expect(tagOf(yield* Effect.flip(client.matchmakers.create({ payload: { name: "独立", company_id: null } })))).toBe("OutOfScope")
      const made = yield* client.matchmakers.create({ payload: { name: "默认" } })
      expect(made.company_id).toBe(a)
      expect(tagOf(yield* Effect.flip(client.matchmakers.update({ params: { id: mb }, payload: { city: "上海" } })))).toBe("NotFound")
      expect(tagOf(yield* Effect.flip(client.matchmakers.update({ params: { id: ma }, payload: { company_id: b } })))).toBe(
        "OutOfScope"
      )
      expect(tagOf(yield* Effect.flip(client.matchmakers.update({ params: { id: ma }, payload: { company_id: null } })))).toBe(
        "OutOfScope"
      )
      expect((yield* client.matchmakers.update({ params: { id: ma }, payload: { city: "北京" } })).city).toBe("北京")
      expect((yield* platform.matchmakers.get({ params: { id: mb } })).city).toBeNull()
      // A client of two companies must name one; the unscoped client may still make an independent matchmaker.
      const { client: both } = yield* signedClient(undefined, { scope: [a, b] })
      expect(tagOf(yield* Effect.flip(both.matchmakers.create({ payload: { name: "两家" } })))).toBe("InvalidInput")
      expect((yield* both.matchmakers.create({ payload: { name: "乙家", company_id: b } })).company_id).toBe(b)
      expect((yield* platform.matchmakers.create({ payload: { name: "平台独立" } })).company_id).toBeNull()
    }))
})
