// Masking that search cannot get around (DECISIONS §1 "Masking and search", §3), tried as an
// attacker would: two records that differ only in masked values (a phone's middle digits, a
// workplace, a WeChat account). For every keyword and filter a masking client can send, built from
// either record's hidden values, the answer holds both records or neither, so the client cannot
// tell them apart; a client without masking separates them with the same probes (so these tests
// can fail).
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { signedClient, testServerLayer } from "./support/harness.js"

type Probe = { readonly keyword?: string; readonly workplace?: string }

/** The keywords an attacker tries for a phone: the whole number, its hidden middle and pieces of it. */
const phoneProbes = (phone: string): ReadonlyArray<Probe> =>
  [phone, phone.slice(0, 7), phone.slice(3, 7), phone.slice(2, 8), phone.slice(3, 5), phone.slice(5, 7)].map((keyword) => ({ keyword }))

/** The keywords an attacker tries for a starred value: the whole value and a piece of it. */
const valueProbes = (value: string): ReadonlyArray<Probe> => [{ keyword: value }, { keyword: value.slice(1, -1) }]

/** Whether the answer to a probe tells a from b: one is in it, the other is not. */
const separates = (found: ReadonlyArray<number>, a: number, b: number): boolean => found.includes(a) !== found.includes(b)

const show = (probe: Probe): string => JSON.stringify(probe)

/**
 * Runs every probe with both clients: the masking client never separates the two records, the
 * plain client separates them with each of `telling` (a subset of the probes, by construction
 * distinguishing).
 */
const attack = <E, R>(
  search: (masking: boolean, probe: Probe) => Effect.Effect<ReadonlyArray<number>, E, R>,
  ids: { readonly a: number; readonly b: number },
  probes: ReadonlyArray<Probe>,
  telling: ReadonlyArray<Probe>
) =>
  Effect.gen(function*() {
    for (const probe of probes) {
      expect(separates(yield* search(true, probe), ids.a, ids.b), `masking client, ${show(probe)}`).toBe(false)
    }
    for (const probe of telling) {
      expect(separates(yield* search(false, probe), ids.a, ids.b), `plain client, ${show(probe)}`).toBe(true)
    }
  })

layer(testServerLayer())("masking and search", (it) => {
  const clients = Effect.all({ plain: signedClient(), masked: signedClient(undefined, { masking: true }) })

  it.effect("a masking client cannot tell two guests apart by phone digits or workplace; a plain client can", () =>
    Effect.gen(function*() {
      const { masked, plain } = yield* clients
      const company = yield* plain.client.companies.create({ payload: { name: "遮蔽检索" } })
      const base = { name: "双生客", gender: "male", company_id: company.id } as const
      const hidden = {
        a: { phone: "13812345678", workplace: "华为技术", birth_date: "1990-05-01", wechat: "wx_alpha", source_id: "SRC-ALPHA" },
        b: { phone: "13898765678", workplace: "腾讯科技", birth_date: "1992-07-09", wechat: "wx_omega", source_id: "SRC-OMEGA" }
      }
      const a = yield* plain.client.guests.create({ payload: { ...base, ...hidden.a } })
      const b = yield* plain.client.guests.create({ payload: { ...base, ...hidden.b } })

      // The premise: a masking client sees the two guests alike but for their ids.
      const view = (id: number) =>
        Effect.map(masked.client.guests.get({ params: { id } }), ({ created_at: _c, id: _i, photo_time: _p, updated_at: _u, ...rest }) =>
          rest)
      expect(yield* view(a.id)).toEqual(yield* view(b.id))

      const search = (masking: boolean, probe: Probe) =>
        Effect.map(
          (masking ? masked : plain).client.guests.list({ query: { company_id: company.id, page_size: 100, ...probe } }),
          (page) =>
            page.list.map((g) => g.id)
        )
      const keywords = [hidden.a, hidden.b].flatMap((h) => [
        ...phoneProbes(h.phone),
        ...[h.workplace, h.wechat, h.source_id, h.birth_date].flatMap(valueProbes)
      ])
      yield* attack(search, { a: a.id, b: b.id }, keywords, [hidden.a, hidden.b].flatMap((h) => phoneProbes(h.phone)))
      // The unmasked name still finds both.
      expect([...(yield* search(true, { keyword: "双生" }))].sort()).toEqual([a.id, b.id].sort())

      // A filter over the masked workplace: refused for the masking client, naming it.
      for (const workplace of [hidden.a.workplace, hidden.b.workplace, ""]) {
        expect(yield* Effect.flip(search(true, { workplace }))).toMatchObject({
          _tag: "InvalidInput",
          issues: [{ path: "workplace" }]
        })
      }
      expect(yield* search(false, { workplace: hidden.a.workplace })).toEqual([a.id])
      expect(yield* search(false, { workplace: hidden.b.workplace })).toEqual([b.id])
    }))

  it.effect("a masking client cannot tell two matchmakers apart by phone digits or WeChat account; a plain client can", () =>
    Effect.gen(function*() {
      const { masked, plain } = yield* clients
      const company = yield* plain.client.companies.create({ payload: { name: "遮蔽红娘" } })
      const base = { name: "双生红娘", company_id: company.id }
      const hidden = {
        a: { phone: "13712340000", wechat: "mm_alpha_wx", wechat_id: "wxid_alpha" },
        b: { phone: "13798760000", wechat: "mm_omega_wx", wechat_id: "wxid_omega" }
      }
      const a = yield* plain.client.matchmakers.create({ payload: { ...base, ...hidden.a } })
      const b = yield* plain.client.matchmakers.create({ payload: { ...base, ...hidden.b } })

      const search = (masking: boolean, probe: Probe) =>
        Effect.map(
          (masking ? masked : plain).client.matchmakers.list({ query: { company_id: company.id, page_size: 100, ...probe } }),
          (page) => page.list.map((m) => m.id)
        )
      const probes = [hidden.a, hidden.b].flatMap((h) => [...phoneProbes(h.phone), ...[h.wechat, h.wechat_id].flatMap(valueProbes)])
      const telling = [hidden.a, hidden.b].flatMap((h) => [...phoneProbes(h.phone), ...valueProbes(h.wechat)])
      yield* attack(search, { a: a.id, b: b.id }, probes, telling)
      expect([...(yield* search(true, { keyword: "双生红娘" }))].sort()).toEqual([a.id, b.id].sort())
    }))

  it.effect("a masking client cannot tell two work WeChat accounts apart by phone digits; a plain client can", () =>
    Effect.gen(function*() {
      const { masked, plain } = yield* clients
      const hidden = { a: "13612340000", b: "13698760000" }
      const a = yield* plain.client.workWechats.create({
        payload: { wechat_number: "acct_alpha", phone: hidden.a, wechat_nickname: "双生号" }
      })
      const b = yield* plain.client.workWechats.create({
        payload: { wechat_number: "acct_omega", phone: hidden.b, wechat_nickname: "双生号" }
      })

      const search = (masking: boolean, probe: Probe) =>
        Effect.map(
          (masking ? masked : plain).client.workWechats.list({ query: { page_size: 100, ...probe } }),
          (page) => page.list.map((w) => w.id)
        )
      const probes = [hidden.a, hidden.b].flatMap(phoneProbes)
      yield* attack(search, { a: a.id, b: b.id }, probes, probes)
      expect([...(yield* search(true, { keyword: "双生号" }))].sort()).toEqual([a.id, b.id].sort())
      expect(yield* search(true, { keyword: "acct_alpha" })).toEqual([a.id])
    }))
})
