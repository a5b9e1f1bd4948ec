// Work WeChat accounts end to end (SPEC §4.3, §2.4; DECISIONS §5): uniqueness and its release by
// soft delete, associations and their rules, transfers with skips, logs per action, counts.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { runAdmin } from "../src/admin/commands.js"
import { signedClient, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const BASE = "/api/open/v1/work-wechats"
let seq = 0
const uniq = () => `${Date.now().toString(36)}${(seq++).toString(36)}`
const phone = () => `139${String(Math.floor(Math.random() * 1e8)).padStart(8, "0")}`

layer(testServerLayer())("work WeChat accounts", (it) => {
  it.effect("create, read and list with keyword and status; counts start at 0", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const tag = uniq()
      const { id } = yield* client.workWechats.create({
        payload: { wechat_number: `wx_${tag}`, phone: phone(), device_id: `dev_${tag}`, wechat_nickname: `小助手${tag}` }
      })
      const acc = yield* client.workWechats.get({ params: { id } })
      expect(acc).toMatchObject({ id, wechat_number: `wx_${tag}`, status: "active", admin_id: null, association_count: 0, user_count: 0 })
      for (const keyword of [`WX_${tag}`, `dev_${tag}`, `助手${tag}`, acc.phone.slice(2, 9)]) {
        const page = yield* client.workWechats.list({ query: { keyword } })
        expect(page.list.map((a) => a.id), keyword).toEqual([id])
      }
      expect((yield* client.workWechats.list({ query: { keyword: tag, status: "disabled" } })).total).toBe(0)
    }))

  it.effect("a duplicate wechat_number, phone or device_id is 400 duplicate_*; soft delete releases them", () =>
    Effect.gen(function*() {
      const { client, baseUrl, credentials } = yield* signedClient()
      const tag = uniq()
      const p = phone()
      const { id } = yield* client.workWechats.create({ payload: { wechat_number: `dup_${tag}`, phone: p, device_id: `d_${tag}` } })
      const post = (body: object) => rawRequest(baseUrl, { method: "POST", path: BASE, body: JSON.stringify(body), credentials })
      expect((yield* post({ wechat_number: `dup_${tag}`, phone: phone() })).json.data.error).toBe("duplicate_wechat_number")
      expect((yield* post({ wechat_number: `other_${tag}`, phone: p })).json.data.error).toBe("duplicate_phone")
      expect((yield* post({ wechat_number: `third_${tag}`, phone: phone(), device_id: `d_${tag}` })).json.data.error).toBe(
        "duplicate_device_id"
      )
      const other = yield* client.workWechats.create({ payload: { wechat_number: `x_${tag}`, phone: phone() } })
      const put = yield* rawRequest(baseUrl, {
        method: "PUT",
        path: `${BASE}/${other.id}`,
        body: JSON.stringify({ wechat_number: `dup_${tag}` }),
        credentials
      })
      expect(put.json.data.error).toBe("duplicate_wechat_number")
      yield* client.workWechats.remove({ params: { id } })
      expect(yield* Effect.flip(client.workWechats.get({ params: { id } }))).toMatchObject({ _tag: "NotFound", resource: "work_wechat" })
      const again = yield* client.workWechats.create({ payload: { wechat_number: `dup_${tag}`, phone: p, device_id: `d_${tag}` } })
      expect(again.id).not.toBe(id)
    }))

  it.effect("the logs of a soft-deleted account stay readable, its delete entry first; an id never used is 404", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const tag = uniq()
      const { id } = yield* client.workWechats.create({ payload: { wechat_number: `gone_${tag}`, phone: phone() } })
      yield* client.workWechats.remove({ params: { id } })
      const logs = yield* client.workWechats.logs({ params: { id }, query: {} })
      expect(logs.list.map((l) => l.action)).toEqual(["delete", "create"])
      expect(yield* Effect.flip(client.workWechats.logs({ params: { id: 2_000_000_000 }, query: {} }))).toMatchObject({
        _tag: "NotFound",
        resource: "work_wechat"
      })
    }))

  it.effect("two concurrent creates of one wechat_number give one 200 and one 400, never two rows", () =>
    Effect.gen(function*() {
      const { baseUrl, credentials, client } = yield* signedClient()
      const tag = uniq()
      const body = (i: number) => JSON.stringify({ wechat_number: `race_${tag}`, phone: phone() + String(i).slice(0, 0) })
      const results = yield* Effect.all(
        Array.from({ length: 6 }, (_, i) => rawRequest(baseUrl, { method: "POST", path: BASE, body: body(i), credentials })),
        { concurrency: "unbounded" }
      )
      expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400])
      expect(results.filter((r) => r.status === 400).every((r) => r.json.data.error === "duplicate_wechat_number")).toBe(true)
      expect((yield* client.workWechats.list({ query: { keyword: `race_${tag}` } })).total).toBe(1)
    }))

  it.effect("update logs a JSON of the changed fields; status changes log enable/disable, a repeat logs nothing", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const tag = uniq()
      const { id } = yield* client.workWechats.create({ payload: { wechat_number: `log_${tag}`, phone: phone(), remark: "旧" } })
      expect(yield* client.workWechats.update({ params: { id }, payload: { remark: "新", wechat_nickname: "小王" } })).toBeNull()
      yield* client.workWechats.setStatus({ params: { id }, query: { status: "disabled" } })
      yield* client.workWechats.setStatus({ params: { id }, query: { status: "disabled" } })
      yield* client.workWechats.setStatus({ params: { id }, query: { status: "active" } })
      const logs = (yield* client.workWechats.logs({ params: { id }, query: {} })).list
      expect(logs.map((l) => l.action)).toEqual(["enable", "disable", "update", "create"])
      expect(logs[2]!.from_value).toEqual({ remark: "旧", wechat_nickname: null })
      expect(logs[2]!.to_value).toEqual({ remark: "新", wechat_nickname: "小王" })
      expect(logs[2]).toMatchObject({
        operator_id: 0,
        operator_name: "Open API",
        work_wechat_id: id
      })
      expect(logs[1]).toMatchObject({ from_value: "active", to_value: "disabled" })
    }))

  it.effect("associate matchmakers, companies and franchisees with their rules", () =>
    Effect.gen(function*() {
      const { client, baseUrl, credentials } = yield* signedClient()
      const tag = uniq()
      const { id } = yield* client.workWechats.create({ payload: { wechat_number: `as_${tag}`, phone: phone() } })
      const m = yield* client.matchmakers.create({ payload: { name: "关联红娘" } })
      const c = yield* client.companies.create({ payload: { name: "普通公司" } })
      const f = yield* client.companies.create({ payload: { name: "加盟公司", company_type: "franchisee" } })
      yield* client.workWechats.associate({ params: { id }, payload: { target_type: "matchmaker", target_id: m.id, remark: "加了好友" } })
      yield* client.workWechats.associate({ params: { id }, payload: { target_type: "company", target_id: c.id } })
      yield* client.workWechats.associate({ params: { id }, payload: { target_type: "franchisee", target_id: f.id } })
      const assoc = (body: object) =>
        rawRequest(baseUrl, { method: "POST", path: `${BASE}/${id}/associate`, body: JSON.stringify(body), credentials })
      expect((yield* assoc({ target_type: "matchmaker", target_id: m.id })).json.data.error).toBe("already_associated")
      expect((yield* assoc({ target_type: "company", target_id: f.id })).json.data.error).toBe("invalid_parameter")
      expect((yield* assoc({ target_type: "franchisee", target_id: c.id })).json.data.error).toBe("invalid_parameter")
      const missing = yield* assoc({ target_type: "matchmaker", target_id: 987654 })
      expect(missing.status).toBe(404)
      expect(missing.json.data).toMatchObject({ error: "not_found", resource: "matchmaker", missing_ids: [987654] })
      const list = yield* client.workWechats.associations({ params: { id }, query: {} })
      expect(list.total).toBe(3)
      expect(list.list.map((a) => [a.target_type, a.target_name])).toEqual([["franchisee", "加盟公司"], ["company", "普通公司"], [
        "matchmaker",
        "关联红娘"
      ]])
      expect((yield* client.workWechats.associations({ params: { id }, query: { target_type: "company" } })).list.map((a) => a.target_id))
        .toEqual([c.id])
      expect((yield* client.workWechats.get({ params: { id } })).association_count).toBe(3)
    }))

  it.effect("batch-associate skips existing and repeated ids; unknown ids are 404 missing_ids and change nothing", () =>
    Effect.gen(function*() {
      const { client, baseUrl, credentials } = yield* signedClient()
      const { id } = yield* client.workWechats.create({ payload: { wechat_number: `ba_${uniq()}`, phone: phone() } })
      const ms = yield* Effect.all([1, 2, 3].map((i) => client.matchmakers.create({ payload: { name: `批量${i}` } })))
      yield* client.workWechats.associate({ params: { id }, payload: { target_type: "matchmaker", target_id: ms[0]!.id } })
      const r = yield* client.workWechats.batchAssociate({
        params: { id },
        payload: { target_type: "matchmaker", target_ids: [ms[0]!.id, ms[1]!.id, ms[2]!.id, ms[2]!.id] }
      })
      expect(r).toEqual({ success_count: 2, skip_count: 1 })
      const bad = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/${id}/batch-associate`,
        credentials,
        body: JSON.stringify({ target_type: "company", target_ids: [999991, 999992] })
      })
      expect(bad.json.data).toMatchObject({ error: "not_found", resource: "company", missing_ids: [999991, 999992] })
      expect((yield* client.workWechats.get({ params: { id } })).association_count).toBe(3)
      const logs = (yield* client.workWechats.logs({ params: { id }, query: {} })).list.filter((l) => l.action === "associate")
      expect(logs).toHaveLength(3)
    }))

  it.effect("a disabled account refuses associations with 400 account_disabled", () =>
    Effect.gen(function*() {
      const { client, baseUrl, credentials } = yield* signedClient()
      const { id } = yield* client.workWechats.create({ payload: { wechat_number: `dis_${uniq()}`, phone: phone() } })
      const m = yield* client.matchmakers.create({ payload: { name: "禁用" } })
      yield* client.workWechats.setStatus({ params: { id }, query: { status: "disabled" } })
      const res = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/${id}/associate`,
        credentials,
        body: JSON.stringify({ target_type: "matchmaker", target_id: m.id })
      })
      expect(res.json.data.error).toBe("account_disabled")
    }))

  it.effect("disassociate removes and logs; an absent association is 404", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { id } = yield* client.workWechats.create({ payload: { wechat_number: `da_${uniq()}`, phone: phone() } })
      const m = yield* client.matchmakers.create({ payload: { name: "解除" } })
      yield* client.workWechats.associate({ params: { id }, payload: { target_type: "matchmaker", target_id: m.id } })
      yield* client.workWechats.disassociate({
        params: { id },
        payload: { target_type: "matchmaker", target_id: m.id, remark: "删除好友" }
      })
      expect(
        yield* Effect.flip(client.workWechats.disassociate({ params: { id }, payload: { target_type: "matchmaker", target_id: m.id } }))
      )
        .toMatchObject({ _tag: "NotFound" })
      const logs = (yield* client.workWechats.logs({ params: { id }, query: {} })).list
      expect(logs[0]).toMatchObject({ action: "disassociate", target_type: "matchmaker", target_id: m.id, remark: "删除好友" })
    }))

  it.effect("delete is refused while associations or users remain (400 has_associations)", () =>
    Effect.gen(function*() {
      const { client, baseUrl, credentials } = yield* signedClient()
      const { id } = yield* client.workWechats.create({ payload: { wechat_number: `del_${uniq()}`, phone: phone() } })
      const m = yield* client.matchmakers.create({ payload: { name: "删除" } })
      yield* client.workWechats.associate({ params: { id }, payload: { target_type: "matchmaker", target_id: m.id } })
      const del = () => rawRequest(baseUrl, { method: "DELETE", path: `${BASE}/${id}`, credentials })
      expect((yield* del()).json.data.error).toBe("has_associations")
      yield* client.workWechats.disassociate({ params: { id }, payload: { target_type: "matchmaker", target_id: m.id } })
      const user = (yield* runAdmin(["users", "create", "--name", "用户", "--work-wechat-id", String(id)])) as { id: number }
      expect((yield* client.workWechats.get({ params: { id } })).user_count).toBe(1)
      expect((yield* del()).json.data.error).toBe("has_associations")
      yield* runAdmin(["users", "update", String(user.id), "--work-wechat-id", "none"])
      expect((yield* del()).status).toBe(200)
      expect((yield* del()).status).toBe(404)
    }))

  it.effect("transfer moves associations of one type, skipping those the destination has or the source lacks", () =>
    Effect.gen(function*() {
      const { client, baseUrl, credentials } = yield* signedClient()
      const src = (yield* client.workWechats.create({ payload: { wechat_number: `src_${uniq()}`, phone: phone() } })).id
      const dst = (yield* client.workWechats.create({ payload: { wechat_number: `dst_${uniq()}`, phone: phone() } })).id
      const ms = yield* Effect.all([1, 2, 3, 4].map((i) => client.matchmakers.create({ payload: { name: `转移${i}` } })))
      const [a, b, c, d] = ms.map((m) => m.id) as [number, number, number, number]
      yield* client.workWechats.batchAssociate({ params: { id: src }, payload: { target_type: "matchmaker", target_ids: [a, b, c] } })
      yield* client.workWechats.associate({ params: { id: dst }, payload: { target_type: "matchmaker", target_id: b } })
      const r = yield* client.workWechats.transfer({
        params: { id: src },
        payload: { target_type: "matchmaker", target_ids: [a, b, d], target_work_wechat_id: dst }
      })
      expect(r).toEqual({
        success_count: 1,
        skip_count: 2,
        details: [{ target_id: a, status: "transferred" }, { target_id: b, status: "skipped" }, { target_id: d, status: "skipped" }]
      })
      const all = yield* client.workWechats.transfer({
        params: { id: src },
        payload: { target_type: "matchmaker", target_work_wechat_id: dst }
      })
      expect(all.details).toEqual([{ target_id: b, status: "skipped" }, { target_id: c, status: "transferred" }])
      const srcLogs = (yield* client.workWechats.logs({ params: { id: src }, query: {} })).list.filter((l) => l.action === "transfer_out")
      const dstLogs = (yield* client.workWechats.logs({ params: { id: dst }, query: {} })).list.filter((l) => l.action === "transfer_in")
      expect(srcLogs.map((l) => l.target_id).sort()).toEqual([a, c].sort())
      expect(dstLogs.map((l) => [l.target_id, l.from_value, l.to_value])).toContainEqual([a, String(src), String(dst)])
      const self = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/${src}/transfer`,
        credentials,
        body: JSON.stringify({ target_type: "matchmaker", target_work_wechat_id: src })
      })
      expect(self.json.data.error).toBe("invalid_parameter")
      yield* client.workWechats.setStatus({ params: { id: dst }, query: { status: "disabled" } })
      const toDisabled = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/${src}/transfer`,
        credentials,
        body: JSON.stringify({ target_type: "matchmaker", target_work_wechat_id: dst })
      })
      expect(toDisabled.json.data.error).toBe("account_disabled")
      const toMissing = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/${src}/transfer`,
        credentials,
        body: JSON.stringify({ target_type: "matchmaker", target_work_wechat_id: 999999 })
      })
      expect(toMissing.json.data).toMatchObject({ error: "not_found", resource: "work_wechat" })
    }))

  it.effect("transfer-admin sets admin_id and logs old and new admin ids", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { id } = yield* client.workWechats.create({ payload: { wechat_number: `adm_${uniq()}`, phone: phone() } })
      yield* client.workWechats.transferAdmin({ params: { id }, payload: { target_admin_id: 7 } })
      yield* client.workWechats.transferAdmin({ params: { id }, payload: { target_admin_id: 9, remark: "交接" } })
      expect((yield* client.workWechats.get({ params: { id } })).admin_id).toBe(9)
      const logs = (yield* client.workWechats.logs({ params: { id }, query: {} })).list.filter((l) => l.action === "transfer_admin")
      expect(logs.map((l) => [l.from_value, l.to_value])).toEqual([["7", "9"], [null, "7"]])
    }))

  it.effect("unknown accounts are 404 on every endpoint with an id", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const id = 987654
      const calls: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
        client.workWechats.get({ params: { id } }),
        client.workWechats.update({ params: { id }, payload: { remark: "x" } }),
        client.workWechats.setStatus({ params: { id }, query: { status: "active" } }),
        client.workWechats.remove({ params: { id } }),
        client.workWechats.associations({ params: { id }, query: {} }),
        client.workWechats.logs({ params: { id }, query: {} })
      ]
      for (const e of calls) {
        expect(yield* Effect.flip(e)).toMatchObject({ _tag: "NotFound", resource: "work_wechat" })
      }
    }))
})
