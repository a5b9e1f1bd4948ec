// WeChat groups end to end (SPEC §4.4, §2.5; DECISIONS §5), and the matchmaker reach filters
// that combine associations and groups (SPEC §4.1).
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { signedClient, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const BASE = "/api/open/v1/work-groups"
let seq = 0
const uniq = () => `${Date.now().toString(36)}${(seq++).toString(36)}`
const phone = () => `137${String(Math.floor(Math.random() * 1e8)).padStart(8, "0")}`

layer(testServerLayer())("WeChat groups", (it) => {
  it.effect("create, read, update and list with keyword and filters; counts computed at read", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const tag = uniq()
      const { id } = yield* client.workGroups.create({ payload: { name: `相亲群${tag}`, group_no: `g_${tag}`, remark: "周末活动" } })
      expect(yield* client.workGroups.get({ params: { id } })).toMatchObject({
        name: `相亲群${tag}`,
        group_no: `g_${tag}`,
        status: "active",
        matchmaker_count: 0,
        work_wechat_count: 0
      })
      yield* client.workGroups.update({ params: { id }, payload: { remark: "工作日活动" } })
      expect((yield* client.workGroups.get({ params: { id } })).remark).toBe("工作日活动")
      for (const keyword of [tag, `G_${tag}`, "工作日"]) {
        expect((yield* client.workGroups.list({ query: { keyword } })).list.map((g) => g.id), keyword).toContain(id)
      }
      const empty = yield* client.workGroups.create({ payload: { name: `空号群${tag}` } })
      expect((yield* client.workGroups.get({ params: { id: empty.id } })).group_no).toBe("")
      const m = yield* client.matchmakers.create({ payload: { name: "群成员" } })
      yield* client.workGroups.addMatchmaker({ params: { id }, payload: { matchmaker_id: m.id } })
      const withMm = yield* client.workGroups.list({ query: { keyword: tag, has_matchmaker: true } })
      expect(withMm.list.map((g) => g.id)).toEqual([id])
      expect((yield* client.workGroups.list({ query: { keyword: tag, has_matchmaker: false } })).list.map((g) => g.id)).toEqual([
        empty.id
      ])
      expect((yield* client.workGroups.list({ query: { matchmaker_id: m.id } })).list.map((g) => g.id)).toEqual([id])
      expect((yield* client.workGroups.get({ params: { id } })).matchmaker_count).toBe(1)
    }))

  it.effect("a non-empty duplicate group_no is 400 duplicate_group_no; empty group_nos may repeat; delete releases it", () =>
    Effect.gen(function*() {
      const { client, baseUrl, credentials } = yield* signedClient()
      const tag = uniq()
      const { id } = yield* client.workGroups.create({ payload: { name: "一", group_no: `dup_${tag}` } })
      const post = (body: object) => rawRequest(baseUrl, { method: "POST", path: BASE, body: JSON.stringify(body), credentials })
      expect((yield* post({ name: "二", group_no: `dup_${tag}` })).json.data.error).toBe("duplicate_group_no")
      expect((yield* post({ name: "三", group_no: "" })).status).toBe(200)
      expect((yield* post({ name: "四", group_no: "" })).status).toBe(200)
      yield* client.workGroups.remove({ params: { id } })
      expect((yield* post({ name: "五", group_no: `dup_${tag}` })).status).toBe(200)
    }))

  it.effect("the logs of a soft-deleted group stay readable, its delete entry first; an id never used is 404", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { id } = yield* client.workGroups.create({ payload: { name: `散群${uniq()}` } })
      yield* client.workGroups.remove({ params: { id } })
      expect((yield* client.workGroups.logs({ params: { id }, query: {} })).list.map((l) => l.action)).toEqual(["delete", "create"])
      expect(yield* Effect.flip(client.workGroups.get({ params: { id } }))).toMatchObject({ _tag: "NotFound", resource: "work_group" })
      expect(yield* Effect.flip(client.workGroups.logs({ params: { id: 2_000_000_000 }, query: {} }))).toMatchObject({
        _tag: "NotFound",
        resource: "work_group"
      })
    }))

  it.effect("two concurrent creates of one group_no give one 200 and one 400", () =>
    Effect.gen(function*() {
      const { baseUrl, credentials } = yield* signedClient()
      const tag = uniq()
      const results = yield* Effect.all(
        Array.from({ length: 4 }, () =>
          rawRequest(baseUrl, {
            method: "POST",
            path: BASE,
            body: JSON.stringify({ name: "竞争", group_no: `race_${tag}` }),
            credentials
          })),
        { concurrency: "unbounded" }
      )
      expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400, 400])
    }))

  it.effect("members: add (400 already_member), batch add (skips), remove (404 when absent), lists with member fields", () =>
    Effect.gen(function*() {
      const { client, baseUrl, credentials } = yield* signedClient()
      const { id } = yield* client.workGroups.create({ payload: { name: `成员群${uniq()}` } })
      const m1 = yield* client.matchmakers.create({ payload: { name: "成员甲", wechat: "wx_a", wechat_id: "wxid_a" } })
      const m2 = yield* client.matchmakers.create({ payload: { name: "成员乙" } })
      const acc = yield* client.workWechats.create({ payload: { wechat_number: `gw_${uniq()}`, phone: phone(), wechat_nickname: "助手" } })
      yield* client.workGroups.addMatchmaker({ params: { id }, payload: { matchmaker_id: m1.id, remark: "群主" } })
      const again = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/${id}/matchmakers`,
        credentials,
        body: JSON.stringify({ matchmaker_id: m1.id })
      })
      expect(again.json.data.error).toBe("already_member")
      expect(yield* client.workGroups.addMatchmakersBatch({ params: { id }, payload: { matchmaker_ids: [m1.id, m2.id, m2.id] } })).toEqual({
        success_count: 1,
        skip_count: 1
      })
      const unknown = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/${id}/matchmakers/batch`,
        credentials,
        body: JSON.stringify({ matchmaker_ids: [m1.id, 999999] })
      })
      expect(unknown.json.data).toMatchObject({ error: "not_found", resource: "matchmaker", missing_ids: [999999] })
      yield* client.workGroups.addWorkWechat({ params: { id }, payload: { work_wechat_id: acc.id } })
      expect(yield* client.workGroups.addWorkWechatsBatch({ params: { id }, payload: { work_wechat_ids: [acc.id] } })).toEqual({
        success_count: 0,
        skip_count: 1
      })
      const mms = yield* client.workGroups.matchmakers({ params: { id }, query: {} })
      expect(mms.total).toBe(2)
      expect(mms.list.find((x) => x.matchmaker_id === m1.id)).toMatchObject({
        work_group_id: id,
        matchmaker_name: "成员甲",
        matchmaker_wechat: "wx_a",
        matchmaker_wechat_id: "wxid_a",
        remark: "群主"
      })
      const masked = yield* signedClient(undefined, { masking: true })
      const seen = (yield* masked.client.workGroups.matchmakers({ params: { id }, query: {} })).list.find((x) => x.matchmaker_id === m1.id)
      expect(seen).toMatchObject({ matchmaker_name: "成员甲", matchmaker_wechat: "***", matchmaker_wechat_id: "***" })
      const seenAccounts = (yield* masked.client.workGroups.workWechats({ params: { id }, query: {} })).list
      expect(seenAccounts[0]!.phone).toMatch(/^137\*{4}\d{4}$/)
      const accs = yield* client.workGroups.workWechats({ params: { id }, query: {} })
      expect(accs.list[0]).toMatchObject({
        work_wechat_id: acc.id,
        wechat_number: acc.id ? expect.any(String) : "",
        wechat_nickname: "助手"
      })
      yield* client.workGroups.removeMatchmaker({ params: { id, matchmaker_id: m2.id } })
      expect(yield* Effect.flip(client.workGroups.removeMatchmaker({ params: { id, matchmaker_id: m2.id } }))).toMatchObject({
        _tag: "NotFound",
        resource: "matchmaker"
      })
      expect(yield* Effect.flip(client.workGroups.removeWorkWechat({ params: { id, work_wechat_id: 999999 } }))).toMatchObject({
        _tag: "NotFound",
        resource: "work_wechat"
      })
      const logs = (yield* client.workGroups.logs({ params: { id }, query: {} })).list
      expect(logs.map((l) => [l.action, l.target_type])).toEqual([
        ["disassociate", "matchmaker"],
        ["associate", "work_wechat"],
        ["associate", "matchmaker"],
        ["associate", "matchmaker"],
        ["create", null]
      ])
      expect(logs[0]).toMatchObject({ work_group_id: id, operator_id: 0, operator_name: "Open API" })
    }))

  it.effect("a batch add racing single adds never duplicates a membership", () =>
    Effect.gen(function*() {
      const { client, baseUrl, credentials } = yield* signedClient()
      const { id } = yield* client.workGroups.create({ payload: { name: `并发群${uniq()}` } })
      const ms = yield* Effect.all(Array.from({ length: 5 }, (_, i) => client.matchmakers.create({ payload: { name: `并发${i}` } })))
      const ids = ms.map((m) => m.id)
      const calls = [
        rawRequest(baseUrl, {
          method: "POST",
          path: `${BASE}/${id}/matchmakers/batch`,
          credentials,
          body: JSON.stringify({ matchmaker_ids: ids })
        }),
        ...ids.map((mid) =>
          rawRequest(baseUrl, {
            method: "POST",
            path: `${BASE}/${id}/matchmakers`,
            credentials,
            body: JSON.stringify({ matchmaker_id: mid })
          })
        )
      ]
      const results = yield* Effect.all(calls, { concurrency: "unbounded" })
      expect(results.every((r) => r.status === 200 || r.json.data.error === "already_member")).toBe(true)
      const batch = results[0]!.json.data as { success_count: number; skip_count: number }
      const singlesOk = results.slice(1).filter((r) => r.status === 200).length
      expect(batch.success_count + singlesOk).toBe(5)
      expect((yield* client.workGroups.matchmakers({ params: { id }, query: {} })).total).toBe(5)
    }))

  it.effect("status: setting the current status is a no-op without a log; delete refused while members remain", () =>
    Effect.gen(function*() {
      const { client, baseUrl, credentials } = yield* signedClient()
      const tag = uniq()
      const { id } = yield* client.workGroups.create({ payload: { name: "状态群", group_no: `st_${tag}` } })
      yield* client.workGroups.setStatus({ params: { id }, query: { status: "active" } })
      yield* client.workGroups.setStatus({ params: { id }, query: { status: "disabled" } })
      expect((yield* client.workGroups.get({ params: { id } })).status).toBe("disabled")
      const m = yield* client.matchmakers.create({ payload: { name: "留守" } })
      yield* client.workGroups.addMatchmaker({ params: { id }, payload: { matchmaker_id: m.id } })
      const del = () => rawRequest(baseUrl, { method: "DELETE", path: `${BASE}/${id}`, credentials })
      expect((yield* del()).json.data.error).toBe("has_members")
      yield* client.workGroups.removeMatchmaker({ params: { id, matchmaker_id: m.id } })
      expect((yield* del()).status).toBe(200)
      expect(yield* Effect.flip(client.workGroups.get({ params: { id } }))).toMatchObject({ _tag: "NotFound", resource: "work_group" })
      // The audit trail outlives the group (DECISIONS §5).
      const logs = yield* rawRequest(baseUrl, { path: `${BASE}/${id}/logs`, credentials })
      expect(logs.json.data.list[0].action).toBe("delete")
    }))
})

layer(testServerLayer())("matchmaker reach over accounts and groups", (it) => {
  // The graph: account A is associated with M1 and shares group G1 with M2; M3 is associated
  // with A and also in G1 with A; M4 is in group G2 with account B only; M5 is reached by nobody.
  const graph = Effect.gen(function*() {
    const ctx = yield* signedClient()
    const { client } = ctx
    const company = yield* client.companies.create({ payload: { name: `触达${uniq()}` } })
    const mk = (name: string) =>
      client.matchmakers.create({ payload: { name, company_id: company.id, wechat_id: `wxid_${name}_${uniq()}` } })
    const [m1, m2, m3, m4, m5] = yield* Effect.all([mk("M1"), mk("M2"), mk("M3"), mk("M4"), mk("M5")])
    const a = (yield* client.workWechats.create({ payload: { wechat_number: `A_${uniq()}`, phone: phone() } })).id
    const b = (yield* client.workWechats.create({ payload: { wechat_number: `B_${uniq()}`, phone: phone() } })).id
    const tag = uniq()
    const g1 = (yield* client.workGroups.create({ payload: { name: "G1", group_no: `G1_${tag}` } })).id
    const g2 = (yield* client.workGroups.create({ payload: { name: "G2", group_no: `G2_${tag}` } })).id
    yield* client.workWechats.batchAssociate({ params: { id: a }, payload: { target_type: "matchmaker", target_ids: [m1!.id, m3!.id] } })
    yield* client.workGroups.addMatchmakersBatch({ params: { id: g1 }, payload: { matchmaker_ids: [m2!.id, m3!.id] } })
    yield* client.workGroups.addWorkWechat({ params: { id: g1 }, payload: { work_wechat_id: a } })
    yield* client.workGroups.addMatchmaker({ params: { id: g2 }, payload: { matchmaker_id: m4!.id } })
    yield* client.workGroups.addWorkWechat({ params: { id: g2 }, payload: { work_wechat_id: b } })
    return { ...ctx, company, m: [m1!, m2!, m3!, m4!, m5!] as const, a, b, g1No: `G1_${tag}`, g2No: `G2_${tag}` }
  })

  it.effect("work_wechat_scope direct, group and all each give their own answer", () =>
    Effect.gen(function*() {
      const { client, company, m, a, b } = yield* graph
      const ids = (r: { list: ReadonlyArray<{ id: number }> }) => r.list.map((x) => x.id).sort((x, y) => x - y)
      const list = (query: object) => client.matchmakers.list({ query: { company_id: company.id, ...query } })
      expect(ids(yield* list({ work_wechat_id: a, work_wechat_scope: "direct" }))).toEqual([m[0].id, m[2].id])
      expect(ids(yield* list({ work_wechat_id: a, work_wechat_scope: "group" }))).toEqual([m[1].id, m[2].id])
      expect(ids(yield* list({ work_wechat_id: a }))).toEqual([m[0].id, m[1].id, m[2].id])
      expect(ids(yield* list({ work_wechat_id: b, work_wechat_scope: "direct" }))).toEqual([])
      expect(ids(yield* list({ work_wechat_id: b, work_wechat_scope: "group" }))).toEqual([m[3].id])
      expect(ids(yield* list({ work_wechat_filter: "empty" }))).toEqual([m[4].id])
      expect(ids(yield* list({ work_wechat_filter: "has", work_wechat_scope: "direct" }))).toEqual([m[0].id, m[2].id])
      expect(ids(yield* list({ work_wechat_filter: "empty", work_wechat_scope: "direct" }))).toEqual([m[1].id, m[3].id, m[4].id])
    }))

  it.effect("group_nos accepts repeated keys and comma lists", () =>
    Effect.gen(function*() {
      const { baseUrl, credentials, company, m, g1No, g2No } = yield* graph
      const res = yield* rawRequest(baseUrl, {
        path: "/api/open/v1/matchmakers",
        query: `company_id=${company.id}&group_nos=${g2No}`,
        credentials
      })
      expect(res.json.data.list.map((x: { id: number }) => x.id)).toEqual([m[3].id])
      const both = yield* rawRequest(baseUrl, {
        path: "/api/open/v1/matchmakers",
        query: `company_id=${company.id}&group_nos=${g1No},${g2No}`,
        credentials
      })
      expect(both.json.data.total).toBe(3)
      const repeated = yield* rawRequest(baseUrl, {
        path: "/api/open/v1/matchmakers",
        query: `company_id=${company.id}&group_nos=${g1No}&group_nos=${g2No}`,
        credentials
      })
      expect(repeated.json.data.total).toBe(3)
    }))

  it.effect("/matchmakers/ids builds the reach map: group_nos and the accounts reaching each matchmaker under the scope", () =>
    Effect.gen(function*() {
      const { client, company, m, a, b, g1No, g2No } = yield* graph
      const map = (r: { list: ReadonlyArray<{ id: number; group_nos: ReadonlyArray<string>; work_wechat_ids: ReadonlyArray<number> }> }) =>
        Object.fromEntries(r.list.map((x) => [x.id, { groups: x.group_nos, accounts: x.work_wechat_ids }]))
      const direct = map(yield* client.matchmakers.ids({ query: { company_id: company.id, work_wechat_scope: "direct" } }))
      expect(direct[m[0].id]).toEqual({ groups: [], accounts: [a] })
      expect(direct[m[1].id]).toEqual({ groups: [g1No], accounts: [] })
      expect(direct[m[3].id]).toEqual({ groups: [g2No], accounts: [] })
      const group = map(yield* client.matchmakers.ids({ query: { company_id: company.id, work_wechat_scope: "group" } }))
      expect(group[m[1].id]).toEqual({ groups: [g1No], accounts: [a] })
      expect(group[m[3].id]).toEqual({ groups: [g2No], accounts: [b] })
      expect(group[m[0].id]).toEqual({ groups: [], accounts: [] })
      const all = yield* client.matchmakers.ids({ query: { company_id: company.id } })
      expect(all.total).toBe(5)
      expect(map(all)[m[2].id]).toEqual({ groups: [g1No], accounts: [a] })
      const onlyA = yield* client.matchmakers.ids({ query: { company_id: company.id, work_wechat_id: a, work_wechat_scope: "direct" } })
      expect(onlyA.list.map((x) => x.id).sort((x, y) => x - y)).toEqual([m[0].id, m[2].id])
    }))

  it.effect("a deleted account or group stops counting; a disabled one still counts", () =>
    Effect.gen(function*() {
      const { client, company, m, b } = yield* graph
      yield* client.workWechats.setStatus({ params: { id: b }, query: { status: "disabled" } })
      const ids = (r: { list: ReadonlyArray<{ id: number }> }) => r.list.map((x) => x.id)
      expect(ids(yield* client.matchmakers.list({ query: { company_id: company.id, work_wechat_id: b } }))).toEqual([m[3].id])
      yield* client.workWechats.remove({ params: { id: b } })
      expect(ids(yield* client.matchmakers.list({ query: { company_id: company.id, work_wechat_id: b } }))).toEqual([])
    }))
})
