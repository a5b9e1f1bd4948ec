// Memberships end to end (SPEC §4.10; DECISIONS §3, §5, §9): create-or-renew, 404s, list filters,
// the operator's plans and cancel, and expiry by the daemon with its membership.expired events.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as SqlClient from "effect/sql/SqlClient"

import { moveByTimeOnce } from "../jobs/TimeMoves.js"
import { runAdmin } from "../src/admin/commands.js"
import { parseTimestamp } from "../src/domain/time.js"
import { signedClient, testServerLayer } from "./support/harness.js"

const TZ = "Asia/Shanghai"
const DAY = 86_400_000

const admin = (...argv: Array<string>) => runAdmin(argv)
const adminFailure = (...argv: Array<string>) =>
  Effect.map(Effect.result(runAdmin(argv)), (e) => (Result.isFailure(e) ? (e.failure as { message: string }).message : "succeeded"))

const newUser = (name = "会员用户") => Effect.map(admin("users", "create", "--name", name), (u) => (u as { id: number }).id)

const instant = (text: string) => parseTimestamp(text, TZ).getTime()

type Client = Effect.Success<ReturnType<typeof signedClient>>["client"]

const newGuest = (client: Client) =>
  Effect.gen(function*() {
    const company = yield* client.companies.create({ payload: { name: `会员婚介${Math.random().toString(36).slice(2, 8)}` } })
    const guest = yield* client.guests.create({ payload: { name: "会员嘉宾", gender: "female", company_id: company.id } })
    return { company, guest }
  })

layer(testServerLayer())("memberships", (it) => {
  it.effect("create starts an active membership from now for the plan's days; the list shows the whole record", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const userId = yield* newUser()
      const { guest } = yield* newGuest(client)
      const before = Date.now()
      const saved = yield* client.memberships.create({ payload: { user_id: userId, plan_id: 1, guest_id: guest.id } })
      expect(Object.keys(saved).sort()).toEqual(["expire_at", "id", "status"])
      expect(saved.status).toBe("active")
      const expires = instant(saved.expire_at)
      expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 30 * DAY - 1000)
      expect(expires).toBeLessThanOrEqual(Date.now() + 30 * DAY)
      const page = yield* client.memberships.list({ query: { user_id: userId } })
      expect(page.total).toBe(1)
      const record = page.list[0]!
      expect(record).toMatchObject({
        id: saved.id,
        user_id: userId,
        guest_id: guest.id,
        plan_id: 1,
        plan_name: "月度会员",
        status: "active",
        expire_at: saved.expire_at
      })
      expect(instant(record.expire_at) - instant(record.started_at)).toBe(30 * DAY)
      expect(record.created_at).toBe(record.started_at)
    }))

  it.effect("an active membership of the same user and plan is renewed in place: same id, expire_at + the plan's days", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const userId = yield* newUser()
      const first = yield* client.memberships.create({ payload: { user_id: userId, plan_id: 2 } })
      const renewed = yield* client.memberships.create({ payload: { user_id: userId, plan_id: 2 } })
      expect(renewed.id).toBe(first.id)
      expect(instant(renewed.expire_at) - instant(first.expire_at)).toBe(90 * DAY)
      // Another plan is another membership.
      const yearly = yield* client.memberships.create({ payload: { user_id: userId, plan_id: 3 } })
      expect(yearly.id).not.toBe(first.id)
      expect((yield* client.memberships.list({ query: { user_id: userId } })).total).toBe(2)
    }))

  it.effect("concurrent purchases of one plan by one user make one membership extended by each", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const userId = yield* newUser()
      const results = yield* Effect.all(
        Array.from({ length: 6 }, () => client.memberships.create({ payload: { user_id: userId, plan_id: 1 } })),
        { concurrency: "unbounded" }
      )
      expect(new Set(results.map((r) => r.id)).size).toBe(1)
      const [record] = (yield* client.memberships.list({ query: { user_id: userId } })).list
      expect(instant(record!.expire_at) - instant(record!.started_at)).toBe(6 * 30 * DAY)
    }))

  it.effect("unknown user, plan or guest is 404 naming it", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const userId = yield* newUser()
      expect(yield* Effect.flip(client.memberships.create({ payload: { user_id: 2_000_000, plan_id: 1 } }))).toMatchObject({
        _tag: "NotFound",
        resource: "user"
      })
      expect(yield* Effect.flip(client.memberships.create({ payload: { user_id: userId, plan_id: 999 } }))).toMatchObject({
        _tag: "NotFound",
        resource: "plan"
      })
      expect(yield* Effect.flip(client.memberships.create({ payload: { user_id: userId, plan_id: 1, guest_id: 2_000_000 } })))
        .toMatchObject({ _tag: "NotFound", resource: "guest" })
    }))

  it.effect("operator: memberships cancel ID moves active → cancelled (again is a no-op); a renewal then starts a new one", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const userId = yield* newUser()
      const first = yield* client.memberships.create({ payload: { user_id: userId, plan_id: 1 } })
      expect(yield* admin("memberships", "cancel", String(first.id))).toMatchObject({ id: first.id, status: "cancelled" })
      expect(yield* admin("memberships", "cancel", String(first.id))).toMatchObject({ id: first.id, status: "cancelled" })
      expect(yield* adminFailure("memberships", "cancel", "2000000")).toMatch(/membership 2000000 not found/)
      const next = yield* client.memberships.create({ payload: { user_id: userId, plan_id: 1 } })
      expect(next.id).not.toBe(first.id)
      const statuses = (yield* client.memberships.list({ query: { user_id: userId } })).list.map((m) => [m.id, m.status])
      expect(statuses).toEqual([[next.id, "active"], [first.id, "cancelled"]])
    }))

  it.effect("operator: membership-plans create and list; a new plan is usable at once", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const plans = (yield* admin("membership-plans", "list")) as ReadonlyArray<{ id: number; name: string; days: number }>
      expect(plans.slice(0, 3)).toEqual([
        { id: 1, name: "月度会员", days: 30 },
        { id: 2, name: "季度会员", days: 90 },
        { id: 3, name: "年度会员", days: 365 }
      ])
      const created = (yield* admin("membership-plans", "create", "--name", "周卡", "--days", "7")) as { id: number; days: number }
      expect(created).toMatchObject({ name: "周卡", days: 7 })
      expect(created.id).toBeGreaterThan(3)
      expect(yield* adminFailure("membership-plans", "create", "--name", "坏卡", "--days", "0")).toMatch(/--days/)
      expect(yield* adminFailure("membership-plans", "create", "--days", "7")).toMatch(/--name/)
      const userId = yield* newUser()
      const saved = yield* client.memberships.create({ payload: { user_id: userId, plan_id: created.id } })
      const [record] = (yield* client.memberships.list({ query: { user_id: userId } })).list
      expect(record).toMatchObject({ id: saved.id, plan_name: "周卡" })
      expect(instant(record!.expire_at) - instant(record!.started_at)).toBe(7 * DAY)
    }))

  it.effect("the list filters by user_id, status and company_id (the linked guest's company), newest first", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { company, guest } = yield* newGuest(client)
      const u1 = yield* newUser()
      const u2 = yield* newUser()
      const a = yield* client.memberships.create({ payload: { user_id: u1, plan_id: 1, guest_id: guest.id } })
      const b = yield* client.memberships.create({ payload: { user_id: u2, plan_id: 2, guest_id: guest.id } })
      const c = yield* client.memberships.create({ payload: { user_id: u2, plan_id: 3 } })
      yield* admin("memberships", "cancel", String(b.id))
      const ids = (params: Parameters<Client["memberships"]["list"]>[0]["query"]) =>
        Effect.map(client.memberships.list({ query: params }), (p) => p.list.map((m) => m.id))
      expect(yield* ids({ company_id: company.id })).toEqual([b.id, a.id])
      expect(yield* ids({ user_id: u2 })).toEqual([c.id, b.id])
      expect(yield* ids({ user_id: u2, status: "cancelled" })).toEqual([b.id])
      expect(yield* ids({ company_id: 2_000_000 })).toEqual([])
    }))

  it.effect("the daemon expires memberships at expire_at with one membership.expired event each, even when passes race", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const userId = yield* newUser()
      const due = yield* Effect.all([1, 2, 3].map((plan) => client.memberships.create({ payload: { user_id: userId, plan_id: plan } })))
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE memberships SET expire_at = now() - interval '1 second' WHERE id IN ${sql.in(due.slice(0, 2).map((m) => m.id))}`
      // Several daemons at once: each row moves once and gets one event.
      yield* Effect.all(Array.from({ length: 4 }, () => moveByTimeOnce), { concurrency: "unbounded" })
      const statuses = (yield* client.memberships.list({ query: { user_id: userId } })).list.map((m) => [m.id, m.status])
      expect(statuses).toEqual([[due[2]!.id, "active"], [due[1]!.id, "expired"], [due[0]!.id, "expired"]])
      const events = yield* sql<{ event_id: string; permission: string; data: Record<string, unknown> }>`
        SELECT event_id, permission, data FROM events WHERE type = 'membership.expired' AND (data->>'user_id')::int = ${userId}
        ORDER BY id`
      expect(events.map((e) => e.data.id)).toEqual([due[0]!.id, due[1]!.id])
      expect(events[0]!.event_id).toMatch(/^evt_[0-9a-f]{24}$/)
      expect(events[0]!.permission).toBe("open:membership:read")
      expect(events[0]!.data).toMatchObject({ user_id: userId, plan_id: 1, plan_name: "月度会员", guest_id: null, status: "expired" })
      expect(events[0]!.data.expire_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      // An expired membership cannot be cancelled; a renewal of its plan starts a new one.
      expect(yield* adminFailure("memberships", "cancel", String(due[0]!.id))).toMatch(/expired; it cannot be cancelled/)
      const renewed = yield* client.memberships.create({ payload: { user_id: userId, plan_id: 1 } })
      expect(renewed.id).not.toBe(due[0]!.id)
    }))

  it.effect("an active membership past expire_at that the daemon has not reached is expired, not extended, by a renewal", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const userId = yield* newUser()
      const stale = yield* client.memberships.create({ payload: { user_id: userId, plan_id: 1 } })
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE memberships SET expire_at = now() - interval '1 day' WHERE id = ${stale.id}`
      const fresh = yield* client.memberships.create({ payload: { user_id: userId, plan_id: 1 } })
      expect(fresh.id).not.toBe(stale.id)
      const statuses = (yield* client.memberships.list({ query: { user_id: userId } })).list.map((m) => [m.id, m.status])
      expect(statuses).toEqual([[fresh.id, "active"], [stale.id, "expired"]])
      const [{ n }] = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM events WHERE type = 'membership.expired' AND (data->>'id')::int = ${stale.id}`
      expect(n).toBe(1)
    }))

  it.effect("reads need open:membership:read, writes open:membership:write", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient(["open:membership:read"])
      yield* client.memberships.list({ query: {} })
      expect(yield* Effect.flip(client.memberships.create({ payload: { user_id: 1, plan_id: 1 } }))).toMatchObject({
        _tag: "Forbidden",
        required: "open:membership:write"
      })
    }))
})
