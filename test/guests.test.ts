// Guests end to end (SPEC §4.2, §2.2, §2.3, §8; DECISIONS §1, §3, §4, §6): derived fields,
// validation paths, batches with partial failure, filters and orderings, masking, counters, events.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { OutboxRepo } from "../src/repos/OutboxRepo.js"
import { signedClient, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const PATH = "/api/open/v1/guests"

const setup = Effect.gen(function*() {
  const ctx = yield* signedClient()
  const company = yield* ctx.client.companies.create({ payload: { name: "测试婚介" } })
  const post = (body: unknown) =>
    rawRequest(ctx.baseUrl, { method: "POST", path: PATH, body: JSON.stringify(body), credentials: ctx.credentials })
  const put = (path: string, body: unknown) =>
    rawRequest(ctx.baseUrl, { method: "PUT", path, body: JSON.stringify(body), credentials: ctx.credentials })
  return { ...ctx, company, post, put }
})

layer(testServerLayer())("guests", (it) => {
  it.effect("a guest created with requirement_tags and req_income_text reads back with the derived req_* fields, codes and completeness", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const created = yield* client.guests.create({
        payload: {
          name: "李明",
          gender: "male",
          company_id: company.id,
          age: 31,
          phone: "13812345678",
          education: "硕士",
          native_place: "湖南长沙",
          requirement_tags: {
            age_min: 25,
            age_max: 32,
            height_min: 160,
            education_min: 3,
            income_min: 3,
            locations: ["北京", "上海浦东"],
            health: ["健康"],
            has_house: 1
          },
          req_income_text: "年薪30w",
          req_age_max: 30
        }
      })
      expect(created).toMatchObject({ name: "李明", gender: "male", age: 31, status: "incomplete" })
      const g = yield* client.guests.get({ params: { id: created.id } })
      expect(g).toMatchObject({
        req_age_min: 25,
        req_age_max: 30, // the explicit field wins over the tag
        req_height_min: 160,
        req_education_min: 3,
        req_income_amount: 300000, // the text wins over tags.income_min
        req_income_text: "年薪30w",
        req_location: "北京、上海浦东",
        req_location_codes: ["110000", "310115"],
        req_health: "健康",
        native_place_code: "430100",
        requirement_tags: {
          age_min: 25,
          age_max: 32,
          height_min: 160,
          education_min: 3,
          income_min: 3,
          locations: ["北京", "上海浦东"],
          health: ["健康"],
          has_house: 1
        },
        // name, gender, age, phone, education, native_place, requirement (via tags) = 7 of 20
        completeness: 0.35,
        status: "incomplete"
      })
    }))

  it.effect("requirement_tags.income_min gives the level's lower bound when no amount or text is sent; null tags clear", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const a = yield* client.guests.create({
        payload: { name: "王芳", gender: "female", company_id: company.id, requirement_tags: { income_min: 4, age_min: null } }
      })
      expect(yield* client.guests.get({ params: { id: a.id } })).toMatchObject({ req_income_amount: 300000, req_age_min: null })
      yield* client.guests.update({ params: { id: a.id }, payload: { req_age_min: 28 } })
      yield* client.guests.update({ params: { id: a.id }, payload: { requirement_tags: { height_min: 170 } } })
      const after = yield* client.guests.get({ params: { id: a.id } })
      // Keys absent from the new tags leave their fields; the tags object is replaced whole.
      expect(after).toMatchObject({
        req_age_min: 28,
        req_height_min: 170,
        req_income_amount: 300000,
        requirement_tags: { height_min: 170 }
      })
    }))

  it.effect("income: the amount wins, a level alone gives its lower bound, family income follows until sent", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const a = yield* client.guests.create({ payload: { name: "甲", gender: "male", company_id: company.id, income_level: "30-50万" } })
      expect(yield* client.guests.get({ params: { id: a.id } })).toMatchObject({
        income_amount: 300000,
        income_level: "30-50万",
        family_income_amount: 300000,
        family_income_level: "30-50万"
      })
      const b = yield* client.guests.create({
        payload: { name: "乙", gender: "male", company_id: company.id, income_level: "10万以下", income_amount: 100000 }
      })
      expect(yield* client.guests.get({ params: { id: b.id } })).toMatchObject({ income_amount: 100000, income_level: "10-20万" })
      yield* client.guests.update({ params: { id: b.id }, payload: { family_income_amount: 800000 } })
      yield* client.guests.update({ params: { id: b.id }, payload: { income_amount: 50000 } })
      expect(yield* client.guests.get({ params: { id: b.id } })).toMatchObject({
        income_amount: 50000,
        income_level: "10万以下",
        family_income_amount: 800000,
        family_income_level: "50-100万"
      })
      yield* client.guests.update({ params: { id: b.id }, payload: { family_income_amount: null } })
      expect(yield* client.guests.get({ params: { id: b.id } })).toMatchObject({ family_income_amount: 50000 })
    }))

  it.effect("req_income_text is parsed when no amount is sent, and an explicit amount wins", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const cases: ReadonlyArray<readonly [string, number | null]> = [["月入8千", 96000], ["15-30万", 150000], ["20万以上", 200000], [
        "不限",
        null
      ]]
      for (const [text, amount] of cases) {
        const g = yield* client.guests.create({
          payload: { name: "收入", gender: "female", company_id: company.id, req_income_text: text }
        })
        expect((yield* client.guests.get({ params: { id: g.id } })).req_income_amount, text).toBe(amount)
      }
      const g = yield* client.guests.create({
        payload: { name: "显式", gender: "female", company_id: company.id, req_income_text: "20万以上", req_income_amount: 123000 }
      })
      expect(yield* client.guests.get({ params: { id: g.id } })).toMatchObject({ req_income_amount: 123000, req_income_text: "20万以上" })
    }))

  it.effect("every invalid field is reported with its path", () =>
    Effect.gen(function*() {
      const { post, company } = yield* setup
      const res = yield* post({
        name: "一二三四五六七八九十一二三四五六七八九十一",
        gender: "unknown",
        company_id: company.id,
        age: 17,
        phone: "1381234567",
        photos: ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"],
        self_intro: "x".repeat(501),
        source: "s".repeat(151),
        requirement_tags: { age_min: "twenty", marriage_status: [1, 4] },
        education: "小学",
        birth_date: "1990-02-30"
      })
      expect(res.status).toBe(400)
      const paths = res.json.data.issues.map((i: { path: string }) => i.path).sort()
      expect(paths).toEqual([
        "age",
        "birth_date",
        "education",
        "gender",
        "name",
        "phone",
        "photos",
        "requirement_tags.age_min",
        "requirement_tags.marriage_status[1]",
        "self_intro",
        "source"
      ])
      const missing = yield* post({ age: 30 })
      expect(missing.json.data.issues.map((i: { path: string }) => i.path).sort()).toEqual(["company_id", "gender", "name"])
      const nine = yield* post({
        name: "九张",
        gender: "male",
        company_id: company.id,
        photos: Array.from({ length: 9 }, (_, i) => `https://img/${i}.jpg`)
      })
      expect(nine.status).toBe(200)
    }))

  it.effect("unknown company or matchmaker is 404 with its resource", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      expect(yield* Effect.flip(client.guests.create({ payload: { name: "无", gender: "male", company_id: 99999 } }))).toMatchObject({
        _tag: "NotFound",
        resource: "company"
      })
      expect(
        yield* Effect.flip(client.guests.create({ payload: { name: "无", gender: "male", company_id: company.id, matchmaker_id: 99999 } }))
      ).toMatchObject({ _tag: "NotFound", resource: "matchmaker" })
      expect(yield* Effect.flip(client.guests.get({ params: { id: 99999 } }))).toMatchObject({ _tag: "NotFound", resource: "guest" })
      expect(yield* Effect.flip(client.guests.update({ params: { id: 99999 }, payload: { age: 30 } }))).toMatchObject({
        _tag: "NotFound",
        resource: "guest"
      })
    }))

  it.effect("update accepts the update-only fields, answers the sent fields, and ignores status and derived fields", () =>
    Effect.gen(function*() {
      const { client, company, put } = yield* setup
      const g = yield* client.guests.create({ payload: { name: "更新", gender: "female", company_id: company.id, native_place: "北京" } })
      const u = yield* client.guests.update({
        params: { id: g.id },
        payload: { ethnicity: "汉族", hobbies: "读书", accept_flash_marriage: "no", native_place: "广东省深圳市南山区" }
      })
      expect(Object.keys(u).sort()).toEqual(["accept_flash_marriage", "ethnicity", "hobbies", "id", "native_place", "updated_at"])
      const res = yield* put(`${PATH}/${g.id}`, { status: "matched", native_place_code: "999999", completeness: 1 })
      expect(res.status).toBe(200)
      const read = yield* client.guests.get({ params: { id: g.id } })
      expect(read).toMatchObject({
        status: "incomplete",
        native_place_code: "440305",
        ethnicity: "汉族",
        hobbies: "读书",
        accept_flash_marriage: "no"
      })
    }))

  it.effect("a batch of 50 with 3 bad items reports 47 successes and 3 failures with reasons", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const guests: Array<unknown> = Array.from(
        { length: 50 },
        (_, i) => ({ name: `批量${i}`, gender: i % 2 ? "male" : "female", company_id: company.id, age: 20 + (i % 40) })
      )
      guests[3] = { name: "坏年龄", gender: "male", company_id: company.id, age: 10 }
      guests[17] = { gender: "male", company_id: company.id }
      guests[42] = { name: "坏公司", gender: "female", company_id: 999999 }
      const r = yield* client.guests.batchCreate({ payload: { guests } })
      expect(r.success_count).toBe(47)
      expect(r.failed_count).toBe(3)
      expect(r.results).toHaveLength(50)
      expect(r.results.map((x) => x.index)).toEqual(Array.from({ length: 50 }, (_, i) => i))
      const failures = r.results.filter((x) => x.status === "failure")
      expect(failures).toEqual([
        {
          index: 3,
          status: "failure",
          error: "invalid_parameter",
          reason: expect.stringContaining("age"),
          issues: [{ path: "age", message: expect.any(String) }]
        },
        {
          index: 17,
          status: "failure",
          error: "invalid_parameter",
          reason: expect.stringContaining("name"),
          issues: [{ path: "name", message: expect.any(String) }]
        },
        { index: 42, status: "failure", error: "not_found", reason: "company 999999 not found" }
      ])
      const ok = r.results.find((x) => x.index === 0)
      expect(ok).toMatchObject({ status: "success", id: expect.any(Number) })
    }))

  it.effect("a batch of more than 50 is 400 batch_too_large; a body without guests is 400 invalid_parameter", () =>
    Effect.gen(function*() {
      const { baseUrl, credentials } = yield* setup
      const send = (method: string, body: unknown) =>
        rawRequest(baseUrl, { method, path: `${PATH}/batch`, body: JSON.stringify(body), credentials })
      const big = yield* send("POST", { guests: Array.from({ length: 51 }, () => ({})) })
      expect(big.status).toBe(400)
      expect(big.json.data.error).toBe("batch_too_large")
      expect((yield* send("PUT", { guests: Array.from({ length: 51 }, () => ({})) })).json.data.error).toBe("batch_too_large")
      const none = yield* send("POST", {})
      expect(none.json.data).toMatchObject({ error: "invalid_parameter", issues: [{ path: "guests" }] })
    }))

  it.effect("batch update sets status, derives codes, refuses update-only fields and unknown ids per item", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const a = yield* client.guests.create({ payload: { name: "批改甲", gender: "male", company_id: company.id } })
      const b = yield* client.guests.create({ payload: { name: "批改乙", gender: "female", company_id: company.id } })
      const r = yield* client.guests.batchUpdate({
        payload: {
          guests: [
            { id: a.id, status: "available", req_location: "湖南长沙、北京", native_place: "上海浦东" },
            { id: b.id, hobbies: "跑步" },
            { id: 999999, age: 30 },
            { id: b.id, age: 15 },
            { age: 30 }
          ]
        }
      })
      expect(r).toMatchObject({ success_count: 1, failed_count: 4 })
      expect(r.results[1]).toMatchObject({
        index: 1,
        status: "failure",
        id: b.id,
        error: "invalid_parameter",
        issues: [{ path: "hobbies" }]
      })
      expect(r.results[2]).toMatchObject({ index: 2, status: "failure", error: "not_found" })
      expect(r.results[3]).toMatchObject({ index: 3, status: "failure", issues: [{ path: "age" }] })
      expect(r.results[4]).toMatchObject({ index: 4, status: "failure", issues: [{ path: "id" }] })
      expect(yield* client.guests.get({ params: { id: a.id } })).toMatchObject({
        status: "available",
        req_location_codes: ["430100", "110000"],
        native_place_code: "310115"
      })
      expect((yield* client.guests.get({ params: { id: b.id } })).hobbies).toBeNull()
    }))

  it.effect("a batch update item whose id is not a valid id fails alone and its result names no id", () =>
    Effect.gen(function*() {
      const { baseUrl, credentials, client, company } = yield* setup
      const g = yield* client.guests.create({ payload: { name: "批改丙", gender: "male", company_id: company.id } })
      const r = yield* rawRequest(baseUrl, {
        method: "PUT",
        path: `${PATH}/batch`,
        body: JSON.stringify({ guests: [{ id: 1.5, age: 30 }, { id: 2 ** 53, age: 30 }, { id: -3 }, { id: g.id, age: 31 }] }),
        credentials
      })
      expect(r.status).toBe(200)
      expect(r.json.data).toMatchObject({ success_count: 1, failed_count: 3 })
      for (const failed of r.json.data.results.slice(0, 3)) {
        expect(failed).toMatchObject({ status: "failure", error: "invalid_parameter", issues: [{ path: "id" }] })
        expect(failed).not.toHaveProperty("id")
      }
      expect(r.json.data.results[3]).toEqual({ index: 3, status: "success", id: g.id })
    }))

  it.effect("list filters by keyword (two-character names, phone digits), gender, workplace, status and company", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const other = yield* client.companies.create({ payload: { name: "另一家" } })
      const zs = yield* client.guests.create({
        payload: { name: "张三", gender: "male", company_id: company.id, phone: "13900001111", workplace: "北京" }
      })
      const zsf = yield* client.guests.create({ payload: { name: "张三丰", gender: "male", company_id: company.id, workplace: "武当" } })
      const ls = yield* client.guests.create({
        payload: { name: "Lisa", gender: "female", company_id: other.id, phone: "13900002222", workplace: "北京" }
      })
      yield* client.guests.batchUpdate({ payload: { guests: [{ id: ls.id, status: "matching" }] } })
      const ids = (r: { list: ReadonlyArray<{ id: number }> }) => r.list.map((g) => g.id)
      expect(ids(yield* client.guests.list({ query: { keyword: "张三" } }))).toEqual([zsf.id, zs.id])
      expect(ids(yield* client.guests.list({ query: { keyword: "三丰" } }))).toEqual([zsf.id])
      expect(ids(yield* client.guests.list({ query: { keyword: "张三丰" } }))).toEqual([zsf.id])
      expect(ids(yield* client.guests.list({ query: { keyword: "0000" } }))).toEqual([ls.id, zs.id])
      expect(ids(yield* client.guests.list({ query: { keyword: "LISA" } }))).toEqual([ls.id])
      expect(ids(yield* client.guests.list({ query: { keyword: "li" } }))).toContain(ls.id)
      expect(ids(yield* client.guests.list({ query: { company_id: other.id } }))).toEqual([ls.id])
      expect(ids(yield* client.guests.list({ query: { company_id: company.id, gender: "male", workplace: "北京" } }))).toEqual([zs.id])
      expect(ids(yield* client.guests.list({ query: { company_id: other.id, status: "matching" } }))).toEqual([ls.id])
      expect((yield* client.guests.list({ query: { company_id: other.id, status: "available" } })).total).toBe(0)
    }))

  it.effect("list orders by created_at or updated_at in either direction with id as the tie-break, and pages", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const company = yield* client.companies.create({ payload: { name: "排序婚介" } })
      const made: Array<number> = []
      for (let i = 0; i < 5; i++) {
        made.push((yield* client.guests.create({ payload: { name: `排序${i}`, gender: "male", company_id: company.id } })).id)
      }
      yield* client.guests.update({ params: { id: made[1]! }, payload: { age: 40 } })
      const ids = (r: { list: ReadonlyArray<{ id: number }> }) => r.list.map((g) => g.id)
      expect(ids(yield* client.guests.list({ query: { company_id: company.id } }))).toEqual([...made].reverse())
      expect(ids(yield* client.guests.list({ query: { company_id: company.id, order_dir: "asc" } }))).toEqual(made)
      const byUpdate = ids(yield* client.guests.list({ query: { company_id: company.id, order_by: "updated_at" } }))
      expect(byUpdate[0]).toBe(made[1])
      const page2 = yield* client.guests.list({ query: { company_id: company.id, order_dir: "asc", page: 2, page_size: 2 } })
      expect(page2.total).toBe(5)
      expect(ids(page2)).toEqual([made[2], made[3]])
    }))

  it.effect("the list carries the SPEC subset; the detail carries everything", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const g = yield* client.guests.create({
        payload: { name: "字段", gender: "female", company_id: company.id, wechat: "wx_x", self_intro: "你好" }
      })
      const listed = (yield* client.guests.list({ query: { keyword: "字段" } })).list.find((x) => x.id === g.id)!
      expect(Object.keys(listed).sort()).toEqual([
        "age",
        "company_id",
        "created_at",
        "education",
        "family_income_amount",
        "family_income_level",
        "gender",
        "height",
        "id",
        "income_amount",
        "income_level",
        "marital_status",
        "name",
        "occupation",
        "phone",
        "photo_time",
        "photos",
        "req_income_amount",
        "req_income_text",
        "requirement",
        "requirement_tags",
        "status",
        "updated_at",
        "weight",
        "workplace"
      ])
      const detail = yield* client.guests.get({ params: { id: g.id } })
      expect(detail).toMatchObject({ wechat: "wx_x", self_intro: "你好", photos: [], req_location_codes: [] })
      expect(detail.photo_time).toBe(detail.created_at)
    }))

  it.effect("a masking client sees phone, workplace, birth_date, wechat and source_id starred", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const masked = yield* signedClient(undefined, { masking: true })
      const g = yield* client.guests.create({
        payload: {
          name: "遮蔽",
          gender: "male",
          company_id: company.id,
          phone: "13812345678",
          workplace: "华为",
          birth_date: "1990-05-01",
          wechat: "wx",
          source_id: "S-1",
          source: "card"
        }
      })
      expect(yield* masked.client.guests.get({ params: { id: g.id } })).toMatchObject({
        phone: "138****5678",
        workplace: "***",
        birth_date: "***",
        wechat: "***",
        source_id: "***",
        source: "card",
        name: "遮蔽"
      })
      const listed = (yield* masked.client.guests.list({ query: { keyword: "遮蔽" } })).list[0]!
      expect(listed).toMatchObject({ phone: "138****5678", workplace: "***" })
    }))

  it.effect("matchmaker guest_count and has_guests follow the guests, moves included", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const m1 = yield* client.matchmakers.create({ payload: { name: "计数甲", company_id: company.id } })
      const m2 = yield* client.matchmakers.create({ payload: { name: "计数乙", company_id: company.id } })
      const g = yield* client.guests.create({ payload: { name: "计数", gender: "male", company_id: company.id, matchmaker_id: m1.id } })
      yield* client.guests.batchCreate({
        payload: { guests: [{ name: "计数2", gender: "male", company_id: company.id, matchmaker_id: m1.id }] }
      })
      expect((yield* client.matchmakers.get({ params: { id: m1.id } })).guest_count).toBe(2)
      yield* client.guests.update({ params: { id: g.id }, payload: { matchmaker_id: m2.id } })
      expect((yield* client.matchmakers.get({ params: { id: m1.id } })).guest_count).toBe(1)
      expect((yield* client.matchmakers.get({ params: { id: m2.id } })).guest_count).toBe(1)
      const withGuests = yield* client.matchmakers.list({ query: { company_id: company.id, has_guests: true } })
      expect(withGuests.list.map((m) => m.id).sort()).toEqual([m1.id, m2.id].sort())
      yield* client.guests.batchUpdate({ payload: { guests: [{ id: g.id, matchmaker_id: null }] } })
      const now = yield* client.matchmakers.list({ query: { company_id: company.id, has_guests: false } })
      expect(now.list.map((m) => m.id)).toEqual([m2.id])
    }))

  it.effect("concurrent batches on the same matchmakers keep guest_count exact", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const m1 = yield* client.matchmakers.create({ payload: { name: "并发计数甲", company_id: company.id } })
      const m2 = yield* client.matchmakers.create({ payload: { name: "并发计数乙", company_id: company.id } })
      const batch = (first: number, second: number) =>
        client.guests.batchCreate({
          payload: {
            guests: Array.from(
              { length: 10 },
              (_, i) => ({ name: `并发${i}`, gender: "male", company_id: company.id, matchmaker_id: i % 2 ? first : second })
            )
          }
        })
      yield* Effect.all([batch(m1.id, m2.id), batch(m2.id, m1.id), batch(m1.id, m2.id), batch(m2.id, m1.id)], { concurrency: "unbounded" })
      expect((yield* client.matchmakers.get({ params: { id: m1.id } })).guest_count).toBe(20)
      expect((yield* client.matchmakers.get({ params: { id: m2.id } })).guest_count).toBe(20)
    }))

  it.effect(
    "concurrent PUTs of one guest each land once and keep guest_count exact: one whose guest changed after it was read is made again under the row's lock",
    () =>
      Effect.gen(function*() {
        const { client, company } = yield* setup
        const outbox = yield* OutboxRepo
        const m1 = yield* client.matchmakers.create({ payload: { name: "并发改甲", company_id: company.id } })
        const m2 = yield* client.matchmakers.create({ payload: { name: "并发改乙", company_id: company.id } })
        const g = yield* client.guests.create({
          payload: { name: "并发改", gender: "female", company_id: company.id, matchmaker_id: m1.id }
        })
        const before = (yield* outbox.after(0, 100000)).length
        const answers = yield* Effect.all(
          Array.from(
            { length: 12 },
            (_, i) => client.guests.update({ params: { id: g.id }, payload: { age: 20 + i, matchmaker_id: i % 2 === 0 ? m2.id : m1.id } })
          ),
          { concurrency: "unbounded" }
        )
        expect(answers.map((a) => a.id)).toEqual(Array.from({ length: 12 }, () => g.id))
        const final = yield* client.guests.get({ params: { id: g.id } })
        const counts = [
          (yield* client.matchmakers.get({ params: { id: m1.id } })).guest_count,
          (yield* client.matchmakers.get({ params: { id: m2.id } })).guest_count
        ]
        expect(counts).toEqual(final.matchmaker_id === m1.id ? [1, 0] : [0, 1])
        const events = (yield* outbox.after(0, 100000)).slice(before)
        const updated = events.filter((e) => e.type === "guest.updated" && (e.data as { id: number }).id === g.id)
        expect(updated.length).toBe(12)
        // The feed's last event of the guest, and of each matchmaker, shows it as it was committed last.
        expect(updated.at(-1)!.data).toMatchObject({ age: final.age, matchmaker_id: final.matchmaker_id })
        const lastCount = (id: number) =>
          (events.filter((e) => e.type === "matchmaker.updated" && (e.data as { id: number }).id === id).at(-1)!.data as {
            guest_count: number
          }).guest_count
        expect([lastCount(m1.id), lastCount(m2.id)]).toEqual(counts)
      })
  )

  it.effect("guest.created and guest.updated are recorded in the outbox", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const outbox = yield* OutboxRepo
      const before = (yield* outbox.after(0, 100000)).length
      const g = yield* client.guests.create({ payload: { name: "事件", gender: "male", company_id: company.id } })
      yield* client.guests.update({ params: { id: g.id }, payload: { age: 33 } })
      const events = (yield* outbox.after(0, 100000)).slice(before)
      expect(events.map((e) => [e.type, (e.data as { id: number }).id])).toEqual([["guest.created", g.id], [
        "guest.updated",
        g.id
      ]])
      expect(events[1]!.data).toMatchObject({ changed_fields: ["age"] })
    }))
})
