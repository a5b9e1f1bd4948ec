// The events feed (DECISIONS §9) over HTTP: what each source emits in its own transaction (guest
// create and update, single and batch, card import), permission filtering per event, types,
// cursor paging that skips nothing while events are being written, the 30 days and masking
// (the outbox's retention by partition: test/partitions.test.ts).
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as SqlClient from "effect/sql/SqlClient"

import { moveByTimeOnce } from "../jobs/TimeMoves.js"
import type { EventType } from "../schema/Events.js"
import { type Permission } from "../schema/Permissions.js"
import { runAdmin } from "../src/admin/commands.js"
import { CardTasksRepo } from "../src/repos/CardTasksRepo.js"
import { OutboxRepo } from "../src/repos/OutboxRepo.js"
import { Transaction } from "../src/repos/sqlHelpers.js"
import { CardImport } from "../src/services/CardImport.js"
import { cardForm } from "./support/forms.js"
import { signedClient, TestServer, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

type Api = Effect.Success<ReturnType<typeof signedClient>>["client"]

const emit = (data: Record<string, unknown>, type: EventType = "guest.created", permission: Permission = "open:guest:read") =>
  Effect.gen(function*() {
    const tx = yield* Transaction
    const outbox = yield* OutboxRepo
    return yield* Effect.orDie(tx.run(outbox.record(type, permission, data)))
  })

/** Every event the client can read after `after`, page by page. */
const readAll = (client: Api, after?: string, pageSize = 1000, types?: ReadonlyArray<EventType>) =>
  Effect.gen(function*() {
    const out: Array<{ id: string; type: string; created_at: string; data: Record<string, unknown> }> = []
    let cursor = after
    for (;;) {
      const page = yield* client.events.list({
        query: { page_size: pageSize, ...(cursor === undefined ? {} : { after: cursor }), ...(types ? { types } : {}) }
      })
      out.push(...page.list)
      if (page.list.length === 0) return { events: out, next: page.next_after }
      cursor = page.next_after!
    }
  })

/** The id of the newest event now, to read only what comes after it. */
const mark = (client: Api) => Effect.map(readAll(client), (r) => r.next ?? undefined)

layer(testServerLayer({ rateLimitBurst: 1_000_000 }), { timeout: 60_000 })("events feed", (it) => {
  const setup = Effect.gen(function*() {
    const { client, credentials } = yield* signedClient()
    const company = yield* client.companies.create({ payload: { name: "事件婚介" } })
    const matchmaker = yield* client.matchmakers.create({ payload: { name: "事件红娘", company_id: company.id } })
    return { client, credentials, company, matchmaker }
  })

  it.effect("POST /guests and POST /guests/batch emit guest.created for each guest created (the record, guest_id beside it), none for a failed item", () =>
    Effect.gen(function*() {
      const { client, company, matchmaker } = yield* setup
      const start = yield* mark(client)
      const one = yield* client.guests.create({
        payload: { name: "王芳", gender: "female", company_id: company.id, matchmaker_id: matchmaker.id }
      })
      const batch = yield* client.guests.batchCreate({
        payload: {
          guests: [
            { name: "赵一", gender: "male", company_id: company.id },
            { name: "", gender: "male", company_id: company.id },
            { name: "钱二", gender: "female", company_id: company.id }
          ]
        }
      })
      const ids = batch.results.filter((r) => r.status === "success").map((r) => r.id)
      expect(ids).toHaveLength(2)
      const { events } = yield* readAll(client, start)
      expect(events.map((e) => [e.type, e.data.id])).toEqual([
        ["guest.created", one.id],
        ["matchmaker.updated", matchmaker.id],
        ["guest.created", ids[0]],
        ["guest.created", ids[1]]
      ])
      // The record as GET /guests/{id} shows it and guest_id, the key it carried before (a payload
      // only grows); the matchmaker's as GET /matchmakers/{id}, with what moved.
      expect(events[0]!.data).toEqual({ ...(yield* client.guests.get({ params: { id: one.id } })), guest_id: one.id })
      expect(events.filter((e) => e.type === "guest.created").map((e) => e.data.guest_id)).toEqual([one.id, ...ids])
      expect(events[1]!.data).toEqual({
        ...(yield* client.matchmakers.get({ params: { id: matchmaker.id } })),
        changed_fields: ["guest_count"]
      })
      expect(events[1]!.data).toMatchObject({ guest_count: 1 })
      expect(events[0]!.id).toMatch(/^evt_[0-9a-f]{24}$/)
      expect(events[0]!.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)
    }))

  it.effect("PUT /guests/{id} and PUT /guests/batch emit guest.updated with guest_id and the changed fields; a refused update emits nothing", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const a = yield* client.guests.create({ payload: { name: "孙三", gender: "male", company_id: company.id } })
      const b = yield* client.guests.create({ payload: { name: "李四", gender: "female", company_id: company.id } })
      const start = yield* mark(client)
      yield* client.guests.update({ params: { id: a.id }, payload: { age: 30, occupation: "工程师" } })
      yield* Effect.flip(client.guests.update({ params: { id: a.id }, payload: { company_id: 999_999 } }))
      yield* client.guests.batchUpdate({
        payload: { guests: [{ id: a.id, status: "available" }, { id: 999_999, age: 31 }, { id: b.id, height: 165 }] }
      })
      const { events } = yield* readAll(client, start)
      expect(events.map((e) => [e.type, e.data.id, e.data.guest_id, e.data.changed_fields])).toEqual([
        ["guest.updated", a.id, a.id, ["age", "occupation"]],
        ["guest.updated", a.id, a.id, ["status"]],
        ["guest.updated", b.id, b.id, ["height"]]
      ])
      // Each carries the record as it was committed: the first before the batch, the last as it is now.
      expect(events[0]!.data).toMatchObject({ age: 30, occupation: "工程师", status: "incomplete" })
      const { changed_fields: _, guest_id: __, ...last } = events[2]!.data
      expect(last).toEqual(yield* client.guests.get({ params: { id: b.id } }))
    }))

  it.effect("a card task that creates its guest emits guest.created and guest.card_created in that transaction", () =>
    Effect.gen(function*() {
      const { client, matchmaker } = yield* setup
      const start = yield* mark(client)
      const png = new Uint8Array([
        ...new Uint8Array(
          Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64")
        )
      ])
      const accepted = yield* client.guests.createFromCard({ payload: cardForm(png, { matchmaker_id: String(matchmaker.id) }) })
      const taskId = (accepted as { task_id: string }).task_id
      const tasks = yield* CardTasksRepo
      const cards = yield* CardImport
      const task = yield* Effect.orDie(tasks.claim("test-worker", yield* Clock.currentTimeMillis, 60_000))
      expect(Option.isSome(task)).toBe(true)
      expect(yield* Effect.orDie(cards.processTask(Option.getOrThrow(task), "test-worker"))).toBe("done")
      const done = yield* client.guests.cardTask({ params: { task_id: taskId } })
      const { events } = yield* readAll(client, start)
      expect(events.map((e) => e.type)).toEqual(["guest.created", "matchmaker.updated", "guest.card_created"])
      expect(events[2]!.data).toEqual({
        task_id: taskId,
        guest_id: done.result!.guest_id,
        name: "卡片嘉宾",
        matchmaker_id: matchmaker.id,
        completeness: done.result!.completeness
      })
    }))

  it.effect("POST /matches emits match.created and PUT /matches/{id}/status emits match.status_changed (with match_id and previous_status), in their transactions", () =>
    Effect.gen(function*() {
      const { client, company, matchmaker } = yield* setup
      const a = yield* client.guests.create({
        payload: { name: "配对甲", gender: "male", company_id: company.id, matchmaker_id: matchmaker.id }
      })
      const b = yield* client.guests.create({ payload: { name: "配对乙", gender: "female", company_id: company.id } })
      const start = yield* mark(client)
      const match = yield* client.matches.create({ payload: { guest_a_id: a.id, guest_b_id: b.id } })
      // Refused (an open match exists): nothing is emitted.
      yield* Effect.flip(client.matches.create({ payload: { guest_a_id: b.id, guest_b_id: a.id } }))
      yield* client.matches.updateStatus({ params: { id: match.id }, payload: { status: "pending_date" } })
      const { events } = yield* readAll(client, start, 1000, ["match.created", "match.status_changed", "matchmaker.updated"])
      expect(events.map((e) => [e.type, e.data.id])).toEqual([
        ["match.created", match.id],
        ["matchmaker.updated", matchmaker.id],
        ["match.status_changed", match.id]
      ])
      expect(events[0]!.data).toMatchObject({
        match_id: match.id,
        guest_a_id: a.id,
        guest_b_id: b.id,
        guest_a_matchmaker_id: matchmaker.id,
        status: "pending"
      })
      expect(events[1]!.data).toMatchObject({ match_count: 1, changed_fields: ["match_count", "success_rate"] })
      // The record as the list shows it, and beside it match_id and the status it left (read in
      // the transaction of the change: the record cannot give it back).
      const listed = (yield* client.matches.list({ query: { guest_id: a.id } })).list
      expect(events[2]!.data).toEqual({ ...listed.find((m) => m.id === match.id), match_id: match.id, previous_status: "pending" })
      const guestOnly = (yield* signedClient(["open:guest:read"])).client
      expect((yield* readAll(guestOnly, start, 1000, ["match.created", "match.status_changed"])).events).toEqual([])
    }))

  it.effect("a follow-up task's generation, dispatch and completion emit task_created, task_dispatched, task_completed with the task record (and the completion's old keys)", () =>
    Effect.gen(function*() {
      const { client, company, credentials, matchmaker } = yield* setup
      const guest = yield* client.guests.create({
        payload: { name: "跟进嘉宾", gender: "female", company_id: company.id, matchmaker_id: matchmaker.id }
      })
      const other = yield* client.guests.create({ payload: { name: "推荐对象", gender: "male", company_id: company.id } })
      yield* Effect.orDie(runAdmin(["follow-up", "plans", "create", "--guest", String(guest.id), "--days", "1", "--type", "recommend"]))
      yield* Effect.orDie(runAdmin(["follow-up", "generate"]))
      const tasks = yield* client.followUps.list({ query: { company_id: company.id } })
      const task = tasks.list.find((t) => t.guest_id === guest.id)!
      const created = (yield* readAll(client, undefined, 1000, ["follow_up.task_created"])).events
      expect(created.filter((e) => e.data.guest_id === guest.id).map((e) => e.data)).toEqual([
        expect.objectContaining({ id: task.id, status: "pending", dispatched_to: null })
      ])
      const start = yield* mark(client)
      yield* client.followUps.dispatch({ params: { task_id: task.id } })
      yield* client.followUps.complete({ params: { task_id: task.id }, payload: { matched_guest_id: other.id, match_score: 88 } })
      const { events } = yield* readAll(client, start, 1000, ["follow_up.task_dispatched", "follow_up.task_completed"])
      expect(events.map((e) => [e.type, e.data.id, e.data.status])).toEqual([
        ["follow_up.task_dispatched", task.id, "dispatched"],
        ["follow_up.task_completed", task.id, "completed"]
      ])
      // The task record, and beside it the keys task_completed carried before: task_id, the result's
      // fields at the top level, completed_by (the app_key that held it) and completed_at (ISO).
      const record = (yield* client.followUps.get({ params: { task_id: task.id } })).task
      expect(events[1]!.data).toEqual({
        ...record,
        task_id: task.id,
        matched_guest_id: other.id,
        match_score: 88,
        share_link: null,
        share_channel: null,
        extra: null,
        completed_by: credentials.appKey,
        completed_at: record.finished_at
      })
      expect(events[1]!.data).toMatchObject({ result: { matched_guest_id: other.id, match_score: 88 } })
      expect(events[1]!.data.completed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)
    }))

  it.effect("the daemon's expiry of a membership emits membership.expired: the record and membership_id", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const user = (yield* Effect.orDie(runAdmin(["users", "create", "--name", "会员用户"]))) as unknown as { id: number }
      const membership = yield* client.memberships.create({ payload: { user_id: user.id, plan_id: 1 } })
      const start = yield* mark(client)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE memberships SET expire_at = now() - interval '1 minute' WHERE id = ${membership.id}`
      yield* Effect.orDie(moveByTimeOnce)
      const { events } = yield* readAll(client, start, 1000, ["membership.expired"])
      const listed = (yield* client.memberships.list({ query: { user_id: user.id } })).list
      expect(events.map((e) => e.data)).toEqual(listed.map((m) => ({ ...m, membership_id: m.id })))
      expect(listed).toMatchObject([{ id: membership.id, status: "expired" }])
    }))

  it.effect("every resource's writes emit their catalogue events, each with the record as the read endpoint shows it (masked for a masking client)", () =>
    Effect.gen(function*() {
      const { client, company, matchmaker } = yield* setup
      const start = yield* mark(client)
      yield* client.companies.update({ params: { id: company.id }, payload: { city: "长沙" } })
      yield* client.matchmakers.update({ params: { id: matchmaker.id }, payload: { phone: "13912345678" } })
      const account = yield* client.workWechats.create({ payload: { wechat_number: "wx_evt_1", phone: "13700001111" } })
      yield* client.workWechats.update({ params: { id: account.id }, payload: { remark: "备注" } })
      yield* client.workWechats.associate({ params: { id: account.id }, payload: { target_type: "matchmaker", target_id: matchmaker.id } })
      const group = yield* client.workGroups.create({ payload: { name: "事件群" } })
      yield* client.workGroups.addMatchmaker({ params: { id: group.id }, payload: { matchmaker_id: matchmaker.id } })
      yield* client.workGroups.setStatus({ params: { id: group.id }, query: { status: "disabled" } })
      yield* client.workWechats.disassociate({
        params: { id: account.id },
        payload: { target_type: "matchmaker", target_id: matchmaker.id }
      })
      yield* client.workWechats.remove({ params: { id: account.id } })
      const activity = yield* client.activities.create({
        payload: {
          title: "事件活动",
          address: "长沙",
          start_time: "2030-01-01 10:00:00",
          end_time: "2030-01-01 12:00:00",
          company_id: company.id
        }
      })
      const { events } = yield* readAll(client, start)
      expect(events.map((e) => [e.type, e.data.id])).toEqual([
        ["company.updated", company.id],
        ["matchmaker.updated", matchmaker.id],
        ["work_wechat.created", account.id],
        ["work_wechat.updated", account.id],
        ["work_wechat.associations_changed", account.id],
        ["work_group.created", group.id],
        ["work_group.members_changed", group.id],
        ["work_group.updated", group.id],
        ["work_wechat.associations_changed", account.id],
        ["work_wechat.deleted", account.id],
        ["activity.created", activity.id]
      ])
      const without = ({ changed_fields: _, ...record }: Record<string, unknown>) => record
      expect(without(events[0]!.data)).toEqual(yield* client.companies.get({ params: { id: company.id } }))
      expect(events[0]!.data.changed_fields).toEqual(["city"])
      expect(events[4]!.data).toMatchObject({ id: account.id, association_count: 1 })
      expect(events[6]!.data).toMatchObject({ matchmaker_count: 1, status: "active" })
      expect(without(events[7]!.data)).toEqual(yield* client.workGroups.get({ params: { id: group.id } }))
      expect(events[7]!.data).toMatchObject({ status: "disabled", changed_fields: ["status"] })
      expect(events[9]!.data).toEqual({ id: account.id, deleted_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/) })
      expect(events[10]!.data).toEqual((yield* client.activities.list({ query: { company_id: company.id } })).list[0])
      // A masking client reads the same events masked exactly as its own GET shows the record.
      const masked = (yield* signedClient(["open:matchmaker:read", "open:work_wechat:read"], { masking: true })).client
      const seen = (yield* readAll(masked, start)).events
      expect(seen.map((e) => e.type)).toEqual([
        "matchmaker.updated",
        "work_wechat.created",
        "work_wechat.updated",
        "work_wechat.associations_changed",
        "work_wechat.associations_changed",
        "work_wechat.deleted"
      ])
      expect(without(seen[0]!.data)).toEqual(yield* masked.matchmakers.get({ params: { id: matchmaker.id } }))
      expect(seen[0]!.data).toMatchObject({ phone: "139****5678" })
      expect(seen[1]!.data).toMatchObject({ phone: "137****1111" })
    }))

  it.effect("each event is listed only to clients holding its resource's read permission, subscribed or not; no permission is needed to ask", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const start = yield* mark(client)
      const guestEvent = yield* emit({ guest_id: 1 })
      const matchEvent = yield* emit({ match_id: 1 }, "match.created", "open:match:read")
      const taskEvent = yield* emit({ task_id: 1 }, "follow_up.task_completed", "open:follow-up:read")
      const guestReader = (yield* signedClient(["open:guest:read"])).client
      const matchReader = (yield* signedClient(["open:match:read", "open:follow-up:read"])).client
      const nobody = (yield* signedClient(["open:company:read", "open:guest:write"])).client
      const ids = (c: Api) => Effect.map(readAll(c, start), (r) => r.events.map((e) => e.id))
      expect(yield* ids(client)).toEqual([guestEvent, matchEvent, taskEvent])
      expect(yield* ids(guestReader)).toEqual([guestEvent])
      expect(yield* ids(matchReader)).toEqual([matchEvent, taskEvent])
      expect(yield* ids(nobody)).toEqual([])
      expect((yield* readAll(client, start, 1000, ["match.created", "follow_up.task_completed"])).events.map((e) => e.id))
        .toEqual([matchEvent, taskEvent])
    }))

  it.effect("paging: page_size pages continue at next_after; an empty page keeps next_after; page_size is clamped to 1000", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const start = yield* mark(client)
      const ids: Array<string> = []
      for (let i = 0; i < 5; i++) ids.push(yield* emit({ n: i }))
      const first = yield* client.events.list({ query: { after: start!, page_size: 2 } })
      expect(first.list.map((e) => e.id)).toEqual(ids.slice(0, 2))
      expect(first.next_after).toBe(ids[1])
      const second = yield* client.events.list({ query: { after: first.next_after!, page_size: 2 } })
      expect(second.list.map((e) => e.id)).toEqual(ids.slice(2, 4))
      const third = yield* client.events.list({ query: { after: second.next_after!, page_size: 2 } })
      expect(third.list.map((e) => e.id)).toEqual([ids[4]])
      const empty = yield* client.events.list({ query: { after: ids[4]!, page_size: 2 } })
      expect(empty).toEqual({ list: [], next_after: ids[4] })
      const { baseUrl } = yield* TestServer
      const { credentials } = yield* signedClient(["open:guest:read"])
      const clamped = yield* rawRequest(baseUrl, { path: "/api/open/v1/events", query: "page_size=5000", credentials })
      expect(clamped.status).toBe(200)
    }))

  it.effect("an unknown or malformed after, an unknown type or a bad page_size is a 400 naming the parameter", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const { credentials } = yield* signedClient(["open:guest:read"])
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["after=evt_000000000000000000000000", "after"],
        ["after=12", "after"],
        ["types=guest.created,guest.deleted", "types[1]"],
        ["page_size=0", "page_size"]
      ]
      for (const [query, path] of cases) {
        const res = yield* rawRequest(baseUrl, { path: "/api/open/v1/events", query, credentials })
        expect(res.status, query).toBe(400)
        expect(res.json.data.error, query).toBe("invalid_parameter")
        expect(res.json.data.issues.map((i: { path: string }) => i.path), query).toContain(path)
      }
    }))

  it.effect("events older than 30 days are not listed", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const start = yield* mark(client)
      const old = yield* emit({ age: "old" })
      const recent = yield* emit({ age: "recent" })
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE events SET created_at = now() - interval '31 days' WHERE event_id = ${old}`
      expect((yield* readAll(client, start)).events.map((e) => e.id)).toEqual([recent])
    }))

  it.effect("a masking client reads masked payloads, as in every read", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const start = yield* mark(client)
      yield* emit({ guest_id: 5, phone: "13812345678", workplace: "长沙" })
      const masked = (yield* signedClient(["open:guest:read"], { masking: true })).client
      expect((yield* readAll(masked, start)).events.map((e) => e.data)).toEqual([{ guest_id: 5, phone: "138****5678", workplace: "***" }])
      expect((yield* readAll(client, start)).events.map((e) => e.data)).toEqual([{ guest_id: 5, phone: "13812345678", workplace: "长沙" }])
    }))

  it.effect("an event whose transaction commits after a later one is not skipped: the feed waits for it, then lists it first", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const start = yield* mark(client)
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* OutboxRepo
      const inserted = yield* Deferred.make<string>()
      const commit = yield* Deferred.make<void>()
      // A: takes its id first, commits last.
      const slow = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
        const id = yield* outbox.record("guest.created", "open:guest:read", { order: "first taken" })
        yield* Deferred.succeed(inserted, id)
        yield* Deferred.await(commit)
        return id
      })))
      const first = yield* Deferred.await(inserted)
      const second = yield* emit({ order: "second taken, first committed" })
      // B has committed, but listing it now would move a reader's cursor past A.
      const during = yield* client.events.list({ query: { after: start! } })
      expect(during.list).toEqual([])
      expect(during.next_after).toBe(start)
      yield* Deferred.succeed(commit, undefined)
      expect(yield* Effect.orDie(Fiber.join(slow))).toBe(first)
      expect((yield* readAll(client, during.next_after!)).events.map((e) => e.id)).toEqual([first, second])
    }))

  it.effect("a reader paging while many transactions write (some slowly) gets every event once, in one consistent order", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const start = yield* mark(client)
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* OutboxRepo
      const writer = (w: number) =>
        Effect.forEach(Array.from({ length: 40 }, (_, i) => i), (i) =>
          sql.withTransaction(Effect.gen(function*() {
            const id = yield* outbox.record("guest.updated", "open:guest:read", { w, i })
            if (i % 3 === w % 3) yield* sql`SELECT pg_sleep(0.01)`
            return id
          })))
      const writers = yield* Effect.forkChild(Effect.all([0, 1, 2, 3].map(writer), { concurrency: "unbounded" }))
      const seen: Array<string> = []
      let cursor = start!
      while (writers.pollUnsafe() === undefined) {
        const page = yield* client.events.list({ query: { after: cursor, page_size: 7 } })
        seen.push(...page.list.map((e) => e.id))
        cursor = page.next_after!
      }
      const written = (yield* Effect.orDie(Fiber.join(writers))).flat()
      seen.push(...(yield* readAll(client, cursor, 7)).events.map((e) => e.id))
      expect(seen).toHaveLength(written.length)
      expect(new Set(seen)).toEqual(new Set(written))
      // The order read in pages is the order of one read from the start.
      expect((yield* readAll(client, start)).events.map((e) => e.id)).toEqual(seen)
    }))
})
