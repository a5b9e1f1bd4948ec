// Matchmakers end to end (SPEC §4.1, §2.1 defaults, §8 limits; DECISIONS §3 masking).
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { Matchmakers } from "../src/services/Matchmakers.js"
import { signedClient, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const PATH = "/api/open/v1/matchmakers"

layer(testServerLayer())("matchmakers", (it) => {
  it.effect("create answers the record with the defaults of SPEC 2.1", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const m = yield* client.matchmakers.create({ payload: { name: "李红娘" } })
      expect(m).toMatchObject({
        name: "李红娘",
        company_id: null,
        guest_count: 0,
        match_count: 0,
        success_rate: 0,
        credit_score: 100,
        level: "normal",
        cert_level: "none",
        status: "active"
      })
      expect(yield* client.matchmakers.get({ params: { id: m.id } })).toEqual(m)
    }))

  it.effect("every writable field is stored and read back", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const company = yield* client.companies.create({ payload: { name: "月老婚介" } })
      const payload = {
        name: "王红娘",
        company_id: company.id,
        store_id: 7,
        phone: "13812345678",
        wechat: "wang_hn",
        wechat_id: "wxid_abc",
        country: "中国",
        province: "湖南",
        city: "长沙",
        avatar: "https://example.com/a.png",
        years_exp: 5,
        specialty: "高知人群",
        intro: "从业五年",
        level: "gold" as const
      }
      const m = yield* client.matchmakers.create({ payload })
      expect(m).toMatchObject(payload)
    }))

  it.effect("an unknown company_id in the body is 404 company", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const err = yield* Effect.flip(client.matchmakers.create({ payload: { name: "赵红娘", company_id: 424242 } }))
      expect(err).toMatchObject({ _tag: "NotFound", resource: "company" })
      const m = yield* client.matchmakers.create({ payload: { name: "赵红娘" } })
      const err2 = yield* Effect.flip(client.matchmakers.update({ params: { id: m.id }, payload: { company_id: 424242 } }))
      expect(err2).toMatchObject({ _tag: "NotFound", resource: "company" })
    }))

  it.effect("length limits of SPEC 8: name 1-50, specialty 200, intro 500", () =>
    Effect.gen(function*() {
      const { credentials, baseUrl } = yield* signedClient()
      const post = (body: object) => rawRequest(baseUrl, { method: "POST", path: PATH, body: JSON.stringify(body), credentials })
      expect((yield* post({ name: "红".repeat(50), specialty: "专".repeat(200), intro: "介".repeat(500) })).status).toBe(200)
      const bad = yield* post({ name: "红".repeat(51), specialty: "专".repeat(201), intro: "介".repeat(501), years_exp: -1 })
      expect(bad.status).toBe(400)
      expect(bad.json.data.issues.map((i: { path: string }) => i.path).sort()).toEqual(["intro", "name", "specialty", "years_exp"])
      expect((yield* post({ name: "" })).json.data.issues[0].path).toBe("name")
    }))

  it.effect("update answers id, company_id, name, the sent fields and updated_at", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const m = yield* client.matchmakers.create({ payload: { name: "钱红娘", city: "北京" } })
      const u = yield* client.matchmakers.update({ params: { id: m.id }, payload: { city: "天津", level: "silver" } })
      expect(Object.keys(u).sort()).toEqual(["city", "company_id", "id", "level", "name", "updated_at"])
      expect(u).toMatchObject({ id: m.id, company_id: null, name: "钱红娘", city: "天津", level: "silver" })
      const unknown = yield* Effect.flip(client.matchmakers.update({ params: { id: 999999 }, payload: { city: "x" } }))
      expect(unknown).toMatchObject({ _tag: "NotFound", resource: "matchmaker" })
    }))

  it.effect("list filters by company, keyword over name/phone/wechat, status, level and has_guests", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const company = yield* client.companies.create({ payload: { name: "筛选婚介" } })
      const a = yield* client.matchmakers.create({
        payload: { name: "筛选甲", company_id: company.id, phone: "13900001111", level: "gold" }
      })
      const b = yield* client.matchmakers.create({ payload: { name: "筛选乙", company_id: company.id, wechat: "FindMe_WX" } })
      const c = yield* client.matchmakers.create({ payload: { name: "筛选丙", company_id: company.id } })
      yield* Effect.flatMap(Matchmakers, (s) => s.setStatus(c.id, "disabled"))
      const ids = (r: { list: ReadonlyArray<{ id: number }> }) => r.list.map((m) => m.id)

      expect(ids(yield* client.matchmakers.list({ query: { company_id: company.id } }))).toEqual([c.id, b.id, a.id])
      expect(ids(yield* client.matchmakers.list({ query: { company_id: company.id, keyword: "00011" } }))).toEqual([a.id])
      expect(ids(yield* client.matchmakers.list({ query: { company_id: company.id, keyword: "findme" } }))).toEqual([b.id])
      expect(ids(yield* client.matchmakers.list({ query: { company_id: company.id, status: "disabled" } }))).toEqual([c.id])
      expect(ids(yield* client.matchmakers.list({ query: { company_id: company.id, level: "gold" } }))).toEqual([a.id])
      expect(ids(yield* client.matchmakers.list({ query: { company_id: company.id, has_guests: true } }))).toEqual([])
      expect((yield* client.matchmakers.list({ query: { company_id: company.id, has_guests: false } })).total).toBe(3)
      expect((yield* client.matchmakers.list({ query: { company_id: 999999 } })).total).toBe(0)
    }))

  it.effect("/matchmakers/ids lists only matchmakers with a wechat_id", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const company = yield* client.companies.create({ payload: { name: "同步婚介" } })
      const withId = yield* client.matchmakers.create({ payload: { name: "有微信", company_id: company.id, wechat_id: "wxid_sync" } })
      yield* client.matchmakers.create({ payload: { name: "无微信", company_id: company.id } })
      yield* client.matchmakers.create({ payload: { name: "空微信", company_id: company.id, wechat_id: "" } })
      const r = yield* client.matchmakers.ids({ query: { company_id: company.id } })
      expect(r).toEqual({
        list: [{ id: withId.id, wechat_id: "wxid_sync", group_nos: [], work_wechat_ids: [] }],
        total: 1,
        next_cursor: null
      })
    }))

  it.effect("a masking client sees starred phone, wechat and wechat_id; others see them plain", () =>
    Effect.gen(function*() {
      const plain = yield* signedClient()
      const masked = yield* signedClient(undefined, { masking: true })
      const m = yield* plain.client.matchmakers.create({
        payload: { name: "遮蔽红娘", phone: "13812345678", wechat: "mask_me", wechat_id: "wxid_mask" }
      })
      expect(m).toMatchObject({ phone: "13812345678", wechat: "mask_me", wechat_id: "wxid_mask" })
      const seen = yield* masked.client.matchmakers.get({ params: { id: m.id } })
      expect(seen).toMatchObject({ name: "遮蔽红娘", phone: "138****5678", wechat: "***", wechat_id: "***" })
      const listed = yield* masked.client.matchmakers.list({ query: { keyword: "遮蔽红娘" } })
      expect(listed.list[0]).toMatchObject({ phone: "138****5678", wechat: "***" })
      const company = yield* masked.client.companies.create({
        payload: { name: "遮蔽婚介", contact_phone: "13900001234", credit_code: "91430100MA4L1234X5" }
      })
      expect(company).toMatchObject({ contact_phone: "139****1234", credit_code: "***" })
      expect(yield* plain.client.companies.get({ params: { id: company.id } })).toMatchObject({ contact_phone: "13900001234" })
    }))
})
