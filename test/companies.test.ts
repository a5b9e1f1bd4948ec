// Companies end to end through the typed client (SPEC §4.7, DECISIONS §1, §4, §5).
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { Companies } from "../src/services/Companies.js"
import { signedClient, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const PATH = "/api/open/v1/companies"

layer(testServerLayer())("companies", (it) => {
  it.effect("create answers the record with defaults: active, normal, cert none", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const c = yield* client.companies.create({
        payload: {
          name: "长沙幸福婚介",
          contact_name: "王经理",
          contact_phone: "13812345678",
          city: "长沙",
          credit_code: "91430100MA4L1234X5"
        }
      })
      expect(c).toMatchObject({
        name: "长沙幸福婚介",
        contact_name: "王经理",
        contact_phone: "13812345678",
        city: "长沙",
        credit_code: "91430100MA4L1234X5",
        company_type: "normal",
        cert_level: "none",
        status: "active"
      })
      expect(c.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      const read = yield* client.companies.get({ params: { id: c.id } })
      expect(read).toEqual(c)
    }))

  it.effect("name must be 2-100 characters, counted as characters not bytes", () =>
    Effect.gen(function*() {
      const { client, credentials, baseUrl } = yield* signedClient()
      const post = (body: object) => rawRequest(baseUrl, { method: "POST", path: PATH, body: JSON.stringify(body), credentials })
      const one = yield* post({ name: "婚" })
      expect(one.status).toBe(400)
      expect(one.json.data.issues).toEqual([{ path: "name", message: "must be 2 to 100 characters" }])
      const hundred = yield* client.companies.create({ payload: { name: "婚".repeat(100) } })
      expect(hundred.name).toHaveLength(100)
      expect((yield* post({ name: "婚".repeat(101) })).status).toBe(400)
      expect((yield* post({})).json.data.issues[0].path).toBe("name")
    }))

  it.effect("company_type, credit_code and contact_phone are validated, every issue reported", () =>
    Effect.gen(function*() {
      const { credentials, baseUrl } = yield* signedClient()
      const res = yield* rawRequest(baseUrl, {
        method: "POST",
        path: PATH,
        body: JSON.stringify({ name: "某婚介", company_type: "chain", credit_code: "123", contact_phone: "tel:0731" }),
        credentials
      })
      expect(res.status).toBe(400)
      expect(res.json.data.issues.map((i: { path: string }) => i.path).sort()).toEqual(["company_type", "contact_phone", "credit_code"])
    }))

  it.effect("update changes only the sent fields and answers id, name, those fields and updated_at", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const c = yield* client.companies.create({ payload: { name: "老名字婚介", city: "北京", company_type: "franchisee" } })
      const updated = yield* client.companies.update({ params: { id: c.id }, payload: { city: "上海", address: null } })
      expect(Object.keys(updated).sort()).toEqual(["address", "city", "id", "name", "updated_at"])
      expect(updated).toMatchObject({ id: c.id, name: "老名字婚介", city: "上海", address: null })
      const read = yield* client.companies.get({ params: { id: c.id } })
      expect(read).toMatchObject({ city: "上海", company_type: "franchisee", name: "老名字婚介" })
    }))

  it.effect("status is not writable through the interface; the operator sets it", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const c = yield* client.companies.create({ payload: { name: "状态婚介" } })
      // Unknown keys are ignored (DECISIONS §1).
      const updated = yield* client.companies.update({ params: { id: c.id }, payload: { status: "frozen" } as never })
      expect(updated).not.toHaveProperty("status")
      expect((yield* client.companies.get({ params: { id: c.id } })).status).toBe("active")
      yield* Effect.flatMap(Companies, (s) => s.setStatus(c.id, "frozen"))
      expect((yield* client.companies.get({ params: { id: c.id } })).status).toBe("frozen")
    }))

  it.effect("update and read of an unknown company are 404 company", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const err = yield* Effect.flip(client.companies.update({ params: { id: 987654 }, payload: { city: "x" } }))
      expect(err).toMatchObject({ _tag: "NotFound", resource: "company" })
    }))

  it.effect("list filters by keyword (case-insensitive substring), status and city, newest first", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const tag = `Tag${Date.now()}`
      const a = yield* client.companies.create({ payload: { name: `${tag} Alpha 婚介`, city: "杭州" } })
      const b = yield* client.companies.create({ payload: { name: `${tag} beta 婚介`, city: "杭州" } })
      const c = yield* client.companies.create({ payload: { name: `${tag} gamma 婚介`, city: "宁波" } })
      yield* Effect.flatMap(Companies, (s) => s.setStatus(c.id, "pending"))
      const byKeyword = yield* client.companies.list({ query: { keyword: tag.toLowerCase() } })
      expect(byKeyword.list.map((x) => x.id)).toEqual([c.id, b.id, a.id])
      expect(byKeyword.total).toBe(3)
      expect(byKeyword.list[0]).not.toHaveProperty("updated_at")
      const byCity = yield* client.companies.list({ query: { keyword: tag, city: "杭州" } })
      expect(byCity.list.map((x) => x.id)).toEqual([b.id, a.id])
      const byStatus = yield* client.companies.list({ query: { keyword: tag, status: "pending" } })
      expect(byStatus.list.map((x) => x.id)).toEqual([c.id])
      const paged = yield* client.companies.list({ query: { keyword: tag, page: 2, page_size: 2 } })
      expect(paged).toMatchObject({ total: 3 })
      expect(paged.list.map((x) => x.id)).toEqual([a.id])
      const pastEnd = yield* client.companies.list({ query: { keyword: tag, page: 9 } })
      expect(pastEnd).toEqual({ list: [], total: 3, next_cursor: null })
      const percent = yield* client.companies.list({ query: { keyword: "%" } })
      expect(percent.total).toBe(0)
    }))

  it.effect("page_size above the maximum of 100 is clamped", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const page = yield* client.companies.list({ query: { page_size: 5000 } })
      expect(page.list.length).toBeLessThanOrEqual(100)
    }))
})

layer(testServerLayer({ timeZone: "UTC" }))("platform time zone", (it) => {
  it.effect("timestamps are written in the configured platform time zone (TZ=UTC here), through the shared row transform", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const before = Date.now()
      const company = yield* client.companies.create({ payload: { name: "时区公司" } })
      const read = yield* client.companies.get({ params: { id: company.id } })
      const utc = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace("T", " ")
      // Within the seconds the request took, in UTC (Asia/Shanghai would be 8 hours later).
      expect(read.created_at >= utc(before - 1000) && read.created_at <= utc(Date.now() + 1000)).toBe(true)
    }))
})
