// Activities end to end (SPEC §4.8; DECISIONS §3, §4, §5): create and list, the operator's audit
// and opening, registration with per-gender quotas (exact under a burst of concurrent
// registrations), and the daemon's moves by time.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as SqlClient from "effect/sql/SqlClient"

import { moveByTimeOnce } from "../jobs/TimeMoves.js"
import { runAdmin } from "../src/admin/commands.js"
import { formatTimestamp } from "../src/domain/time.js"
import { signedClient, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const PATH = "/api/open/v1/activities"
const TZ = "Asia/Shanghai"

/** Wall time in the platform zone, `minutes` from now. */
const at = (minutes: number) => formatTimestamp(new Date(Date.now() + minutes * 60_000), TZ)

type Client = Effect.Success<ReturnType<typeof signedClient>>["client"]

const setup = (client: Client) =>
  Effect.gen(function*() {
    const company = yield* client.companies.create({ payload: { name: `活动婚介${Math.random().toString(36).slice(2, 8)}` } })
    const guest = (gender: "male" | "female", name = gender === "male" ? "张伟" : "李娜") =>
      client.guests.create({ payload: { name, gender, company_id: company.id, phone: "13800000000" } })
    const activity = (extra: Record<string, unknown> = {}) =>
      client.activities.create({
        payload: {
          title: "周末户外联谊",
          address: "长沙市岳麓山",
          start_time: at(60 * 24),
          end_time: at(60 * 28),
          company_id: company.id,
          ...extra
        }
      })
    return { company, guest, activity }
  })

const admin = (...argv: Array<string>) => runAdmin(argv)
const adminFailure = (...argv: Array<string>) =>
  Effect.map(Effect.result(runAdmin(argv)), (e) => (Result.isFailure(e) ? (e.failure as { message: string }).message : "succeeded"))

/** Approves and opens an activity, as the operator does. */
const openForRegistration = (id: number) =>
  Effect.gen(function*() {
    yield* admin("activities", "approve", String(id))
    return yield* admin("activities", "open", String(id))
  })

// A generous burst: the concurrency tests send more calls at once than the default bucket holds.
layer(testServerLayer({ rateLimitBurst: 1_000_000 }))("activities", (it) => {
  it.effect("create answers id, status draft, audit_status pending and created_at; the list shows the whole record", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { activity, company } = yield* setup(client)
      const start = at(60 * 24)
      const end = at(60 * 27)
      const created = yield* activity({ start_time: start, end_time: end, description: "徒步+烧烤", male_quota: 10, female_fee: 49.9 })
      expect(Object.keys(created).sort()).toEqual(["audit_status", "created_at", "id", "status"])
      expect(created).toMatchObject({ status: "draft", audit_status: "pending" })
      expect(created.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      const page = yield* client.activities.list({ query: { company_id: company.id } })
      expect(page.total).toBe(1)
      expect(page.list[0]).toEqual({
        id: created.id,
        title: "周末户外联谊",
        description: "徒步+烧烤",
        cover_url: null,
        address: "长沙市岳麓山",
        start_time: start,
        end_time: end,
        male_quota: 10,
        female_quota: null,
        male_fee: 0,
        female_fee: 49.9,
        status: "draft",
        audit_status: "pending",
        company_id: company.id,
        created_at: created.created_at
      })
    }))

  it.effect("end_time must be after start_time; quotas and fees are checked, every issue reported", () =>
    Effect.gen(function*() {
      const { baseUrl, client, credentials } = yield* signedClient()
      const { company } = yield* setup(client)
      const post = (body: object) => rawRequest(baseUrl, { method: "POST", path: PATH, body: JSON.stringify(body), credentials })
      const base = { title: "相亲会", address: "五一广场", company_id: company.id }
      const same = yield* post({ ...base, start_time: "2030-05-01 14:00:00", end_time: "2030-05-01 14:00:00" })
      expect(same.status).toBe(400)
      expect(same.json.data).toMatchObject({
        error: "invalid_parameter",
        issues: [{ path: "end_time", message: "must be after start_time" }]
      })
      const bad = yield* post({
        ...base,
        start_time: "2030-02-30 14:00:00",
        end_time: "2030-05-01 25:00:00",
        male_quota: -1,
        female_quota: 1.5,
        male_fee: -5,
        female_fee: 9.999
      })
      expect(bad.status).toBe(400)
      expect(bad.json.data.issues.map((i: { path: string }) => i.path).sort()).toEqual(
        ["end_time", "female_fee", "female_quota", "male_fee", "male_quota", "start_time"]
      )
      const missing = yield* post({})
      expect(missing.json.data.issues.map((i: { path: string }) => i.path).sort()).toEqual(
        ["address", "company_id", "end_time", "start_time", "title"]
      )
      // Quota 0 (no places) and null (unlimited) are both valid; fee 0 is free.
      const ok = yield* post({
        ...base,
        start_time: "2030-05-01 14:00:00",
        end_time: "2030-05-01 18:00:00",
        male_quota: 0,
        female_quota: null,
        male_fee: 0
      })
      expect(ok.status).toBe(200)
    }))

  it.effect("an unknown company_id is 404 company", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const error = yield* Effect.flip(client.activities.create({
        payload: { title: "无主活动", address: "某地", start_time: at(60), end_time: at(120), company_id: 2_000_000 }
      }))
      expect(error).toMatchObject({ _tag: "NotFound", resource: "company" })
    }))

  it.effect("the list filters by status and company_id, newest first; page_size is clamped to 100", () =>
    Effect.gen(function*() {
      const { baseUrl, client, credentials } = yield* signedClient()
      const { activity, company } = yield* setup(client)
      const first = yield* activity()
      const second = yield* activity()
      yield* openForRegistration(second.id)
      const all = yield* client.activities.list({ query: { company_id: company.id } })
      expect(all.list.map((a) => a.id)).toEqual([second.id, first.id])
      const open = yield* client.activities.list({ query: { company_id: company.id, status: "registering" } })
      expect(open.list.map((a) => a.id)).toEqual([second.id])
      expect((yield* client.activities.list({ query: { company_id: 2_000_000 } })).total).toBe(0)
      const clamped = yield* rawRequest(baseUrl, { path: PATH, query: `company_id=${company.id}&page_size=1000`, credentials })
      expect(clamped.status).toBe(200)
      expect((yield* rawRequest(baseUrl, { path: PATH, query: "status=closed", credentials })).status).toBe(400)
    }))

  it.effect("operator: open needs an approved audit; approve, reject and open answer the activity; repeats are no-ops", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { activity } = yield* setup(client)
      const a = yield* activity()
      expect(yield* adminFailure("activities", "open", String(a.id))).toMatch(/audit is pending, not approved/)
      expect(yield* admin("activities", "reject", String(a.id))).toMatchObject({ id: a.id, status: "draft", audit_status: "rejected" })
      expect(yield* adminFailure("activities", "open", String(a.id))).toMatch(/rejected/)
      expect(yield* admin("activities", "approve", String(a.id))).toMatchObject({ status: "draft", audit_status: "approved" })
      expect(yield* admin("activities", "open", String(a.id))).toMatchObject({ status: "registering", audit_status: "approved" })
      expect(yield* admin("activities", "open", String(a.id))).toMatchObject({ status: "registering" })
      // Once open, the audit is settled.
      expect(yield* adminFailure("activities", "reject", String(a.id))).toMatch(/no longer audited/)
      expect(yield* adminFailure("activities", "approve", "2000000")).toMatch(/activity 2000000 not found/)
      expect(yield* adminFailure("activities", "close", String(a.id))).toMatch(/^Unknown subcommand "close" for "admin activities"/)
    }))

  it.effect("registration needs a registering activity: a draft is 400 activity_not_open", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { activity, guest } = yield* setup(client)
      const a = yield* activity()
      const g = yield* guest("male")
      const error = yield* Effect.flip(client.activities.register({ params: { id: a.id }, payload: { guest_id: g.id } }))
      expect(error).toMatchObject({ _tag: "ActivityNotOpen" })
    }))

  it.effect("register answers the registration record: name and phone default to the guest's, the fee is the gender's", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { activity, guest } = yield* setup(client)
      const a = yield* activity({ male_fee: 99, female_fee: 19.5 })
      yield* openForRegistration(a.id)
      const he = yield* guest("male")
      const she = yield* guest("female")
      const r1 = yield* client.activities.register({ params: { id: a.id }, payload: { guest_id: he.id } })
      expect(r1).toMatchObject({ activity_id: a.id, guest_id: he.id, name: "张伟", phone: "13800000000", remark: null, fee: 99 })
      expect(Object.keys(r1).sort()).toEqual([
        "activity_id",
        "fee",
        "guest_id",
        "name",
        "phone",
        "registered_at",
        "registration_id",
        "remark"
      ])
      expect(r1.registered_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      const r2 = yield* client.activities.register({
        params: { id: a.id },
        payload: { guest_id: she.id, name: "李娜娜", phone: "13900000000", remark: "素食" }
      })
      expect(r2).toMatchObject({ guest_id: she.id, name: "李娜娜", phone: "13900000000", remark: "素食", fee: 19.5 })
      expect(r2.registration_id).toBeGreaterThan(r1.registration_id)
    }))

  it.effect("a guest registers once (400 already_registered); quota 0 is no places (400 quota_full); unknown ids are 404", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { activity, guest } = yield* setup(client)
      const a = yield* activity({ female_quota: 0, male_quota: 1 })
      yield* openForRegistration(a.id)
      const he = yield* guest("male")
      yield* client.activities.register({ params: { id: a.id }, payload: { guest_id: he.id } })
      expect(yield* Effect.flip(client.activities.register({ params: { id: a.id }, payload: { guest_id: he.id } }))).toMatchObject({
        _tag: "AlreadyRegistered"
      })
      const she = yield* guest("female")
      expect(yield* Effect.flip(client.activities.register({ params: { id: a.id }, payload: { guest_id: she.id } }))).toMatchObject({
        _tag: "QuotaFull"
      })
      const other = yield* guest("male", "王强")
      expect(yield* Effect.flip(client.activities.register({ params: { id: a.id }, payload: { guest_id: other.id } }))).toMatchObject({
        _tag: "QuotaFull"
      })
      expect(yield* Effect.flip(client.activities.register({ params: { id: a.id }, payload: { guest_id: 2_000_000 } }))).toMatchObject({
        _tag: "NotFound",
        resource: "guest"
      })
      expect(yield* Effect.flip(client.activities.register({ params: { id: 2_000_000 }, payload: { guest_id: he.id } }))).toMatchObject({
        _tag: "NotFound",
        resource: "activity"
      })
      // The refused registrations took no place: the counters are what the registrations say.
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ male_registered: number; female_registered: number }>`
        SELECT male_registered, female_registered FROM activities WHERE id = ${a.id}`
      expect(row).toEqual({ male_registered: 1, female_registered: 0 })
    }))

  it.effect(
    "50 concurrent registrations for 10 places give exactly 10 (and the duplicates of one guest only one)",
    () =>
      Effect.gen(function*() {
        const { client } = yield* signedClient()
        const { activity, guest } = yield* setup(client)
        const a = yield* activity({ male_quota: 10 })
        yield* openForRegistration(a.id)
        const guests = yield* Effect.all(Array.from({ length: 50 }, (_, i) => guest("male", `男嘉宾${i}`)), { concurrency: 8 })
        const outcomes = yield* Effect.all(
          guests.map((g) =>
            client.activities.register({ params: { id: a.id }, payload: { guest_id: g.id } }).pipe(
              Effect.as("registered"),
              Effect.catchTags({
                QuotaFull: () => Effect.succeed("quota_full"),
                AlreadyRegistered: () => Effect.succeed("already_registered")
              })
            )
          ),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((o) => o === "registered")).toHaveLength(10)
        expect(outcomes.filter((o) => o === "quota_full")).toHaveLength(40)
        const sql = yield* SqlClient.SqlClient
        const [{ n }] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM activity_registrations WHERE activity_id = ${a.id}`
        expect(n).toBe(10)
        const [{ male_registered }] = yield* sql<{ male_registered: number }>`SELECT male_registered FROM activities WHERE id = ${a.id}`
        expect(male_registered).toBe(10)

        // One guest racing itself on an unlimited activity registers once.
        const b = yield* activity()
        yield* openForRegistration(b.id)
        const same = yield* Effect.all(
          Array.from({ length: 10 }, () =>
            client.activities.register({ params: { id: b.id }, payload: { guest_id: guests[0]!.id } }).pipe(
              Effect.as("registered"),
              Effect.catchTags({
                QuotaFull: () => Effect.succeed("quota_full"),
                AlreadyRegistered: () => Effect.succeed("already_registered")
              })
            )),
          { concurrency: "unbounded" }
        )
        expect(same.filter((o) => o === "registered")).toHaveLength(1)
        expect(same.filter((o) => o === "already_registered")).toHaveLength(9)
        const [{ male_registered: counted }] = yield* sql<
          { male_registered: number }
        >`SELECT male_registered FROM activities WHERE id = ${b.id}`
        expect(counted).toBe(1)
      }),
    { timeout: 60_000 }
  )

  it.effect("by time: registering → ongoing at start_time, → ended at end_time, past both straight to ended; drafts stay", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { activity, guest } = yield* setup(client)
      const started = yield* activity({ start_time: at(-10), end_time: at(60) })
      const over = yield* activity({ start_time: at(-120), end_time: at(-60) })
      const future = yield* activity({ start_time: at(60), end_time: at(120) })
      const draft = yield* activity({ start_time: at(-120), end_time: at(-60) })
      for (const a of [started, over, future]) yield* openForRegistration(a.id)
      const moved = yield* moveByTimeOnce
      expect(moved.activitiesStarted).toBeGreaterThanOrEqual(2)
      const sql = yield* SqlClient.SqlClient
      const statusOf = (id: number) =>
        Effect.map(sql<{ status: string }>`SELECT status FROM activities WHERE id = ${id}`, (rows) => rows[0]!.status)
      expect(yield* statusOf(started.id)).toBe("ongoing")
      expect(yield* statusOf(over.id)).toBe("ended")
      expect(yield* statusOf(future.id)).toBe("registering")
      expect(yield* statusOf(draft.id)).toBe("draft")
      // An ongoing one whose end has passed ends on the next pass; a second pass moves nothing more.
      yield* sql`UPDATE activities SET start_time = now() - interval '2 hours', end_time = now() - interval '1 second' WHERE id = ${started.id}`
      yield* moveByTimeOnce
      expect(yield* statusOf(started.id)).toBe("ended")
      const again = yield* moveByTimeOnce
      expect(again.activitiesEnded).toBe(0)
      // A registration on an ended activity is refused.
      const g = yield* guest("male", "迟到")
      expect(yield* Effect.flip(client.activities.register({ params: { id: over.id }, payload: { guest_id: g.id } }))).toMatchObject({
        _tag: "ActivityNotOpen"
      })
    }))

  it.effect("reads need open:activity:read, writes open:activity:write", () =>
    Effect.gen(function*() {
      const { client: writer } = yield* signedClient()
      const { activity, company } = yield* setup(writer)
      const created = yield* activity()
      const { client } = yield* signedClient(["open:activity:read"])
      const page = yield* client.activities.list({ query: { company_id: company.id } })
      expect([page.total, page.list.map((a) => a.id)]).toEqual([1, [created.id]])
      const error = yield* Effect.flip(client.activities.create({
        payload: { title: "无权", address: "某地", start_time: at(60), end_time: at(120), company_id: 1 }
      }))
      expect(error).toMatchObject({ _tag: "Forbidden", required: "open:activity:write" })
    }))
})
