// Follow-up tasks end to end (SPEC §2.6, §3.1, §4.5; DECISIONS §3, §4, §5, §7): plans and their
// exactly-once generation, the list and the detail, the typical sequence for two competing
// clients through the typed client, the lease, the reports and their event, masking, permissions.
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as TestClock from "effect/testing/TestClock"

import { FollowUpGenerateJob } from "../jobs/FollowUpGenerate.js"
import { runAdmin } from "../src/admin/commands.js"
import * as Scopes from "../src/domain/scope.js"
import { formatDate } from "../src/domain/time.js"
import { OutboxRepo } from "../src/repos/OutboxRepo.js"
import { FollowUps } from "../src/services/FollowUps.js"
import { Matchmakers } from "../src/services/Matchmakers.js"
import { signedClient, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const TASKS = "/api/open/v1/follow-up/tasks"
const TZ = "Asia/Shanghai"

const today = Effect.map(Clock.currentTimeMillis, (ms) => formatDate(new Date(ms), TZ))
/** The platform date `n` days from today (negative: before). */
const daysFromToday = (n: number) =>
  Effect.map(today, (date) => formatDate(new Date(Date.parse(`${date}T00:00:00Z`) + n * 86400_000), "UTC"))

/** A company, a certified matchmaker and a guest with a full profile; the client that made them. */
const seed = Effect.gen(function*() {
  const { client } = yield* signedClient()
  const company = yield* client.companies.create({ payload: { name: "随访婚介" } })
  const matchmaker = yield* client.matchmakers.create({
    payload: { name: "李红娘", company_id: company.id, phone: "13900001111", wechat: "hongniang_li", wechat_id: "wxid_li" }
  })
  yield* Effect.flatMap(Matchmakers, (m) => m.setCertLevel(matchmaker.id, "senior"))
  const guest = yield* client.guests.create({
    payload: {
      name: "张晓雯",
      gender: "female",
      company_id: company.id,
      matchmaker_id: matchmaker.id,
      age: 28,
      height: 165,
      weight: 50,
      education: "硕士",
      occupation: "教师",
      workplace: "长沙一中",
      income_amount: 250000,
      marital_status: "未婚",
      has_children: "no",
      has_house: "yes",
      native_place: "湖南长沙",
      photos: ["https://img.example/1.jpg"],
      requirement_tags: { age_min: 28, age_max: 35, education_min: 3 },
      req_location: "长沙"
    }
  })
  yield* client.guests.update({ params: { id: guest.id }, payload: { hobbies: "读书、徒步" } })
  const other = yield* client.guests.create({ payload: { name: "王磊", gender: "male", company_id: company.id, age: 31 } })
  const third = yield* client.guests.create({ payload: { name: "陈晨", gender: "male", company_id: company.id, age: 33 } })
  return { company, matchmaker, guest, other, third }
})

/** A plan for the guest through the operator's command line; its tasks due today are created with it. */
const plan = (guestId: number, days: string, type = "recommend", start?: string) =>
  Effect.map(
    runAdmin([
      "follow-up",
      "plans",
      "create",
      "--guest",
      String(guestId),
      "--days",
      days,
      "--type",
      type,
      ...(start === undefined ? [] : ["--start", start])
    ]),
    (created) => created as { id: number; tasks_created: number }
  )

const taskOf = (planId: number, day: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ id: number }>`SELECT id::int AS id FROM follow_up_tasks WHERE plan_id = ${planId} AND task_day = ${day}`
  ).pipe(Effect.map((rows) => rows[0]!.id))

layer(testServerLayer())("follow-up tasks", (it) => {
  it.effect("the typical sequence for two competing clients: list, dispatch (the loser gets 409), detail, complete", () =>
    Effect.gen(function*() {
      const { guest, other } = yield* seed
      const { id: planId, tasks_created } = yield* plan(guest.id, "1,3,7")
      expect(tasks_created).toBe(1)
      const a = yield* signedClient(["open:follow-up:read", "open:follow-up:write"])
      const b = yield* signedClient(["open:follow-up:read", "open:follow-up:write"])

      const page = yield* a.client.followUps.list({ query: {} })
      const item = page.list.find((t) => t.follow_up_id === planId)!
      expect(item).toMatchObject({ guest_id: guest.id, task_day: 1, status: "pending", scheduled_date: yield* today })

      const lock = yield* a.client.followUps.dispatch({ params: { task_id: item.id } })
      expect(lock).toMatchObject({ id: item.id, status: "dispatched", dispatched_to: a.credentials.appKey, idempotent: false })
      expect(lock.dispatched_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)

      const lost = yield* Effect.flip(b.client.followUps.dispatch({ params: { task_id: item.id } }))
      expect(lost).toMatchObject({ _tag: "TaskLocked", dispatched_to: a.credentials.appKey })
      const raw = yield* rawRequest(b.baseUrl, { method: "POST", path: `${TASKS}/${item.id}/dispatch`, credentials: b.credentials })
      expect(raw.status).toBe(409)
      expect(raw.json).toMatchObject({ code: 409, data: { error: "task_locked", dispatched_to: a.credentials.appKey } })

      const again = yield* a.client.followUps.dispatch({ params: { task_id: item.id } })
      expect(again).toEqual({ ...lock, idempotent: true })

      const detail = yield* a.client.followUps.get({ params: { task_id: item.id } })
      expect(detail.task).toMatchObject({ status: "dispatched", dispatched_to: a.credentials.appKey, result: null })

      expect(yield* Effect.flip(b.client.followUps.complete({ params: { task_id: item.id }, payload: {} }))).toMatchObject({
        _tag: "TaskLocked",
        dispatched_to: a.credentials.appKey
      })
      const done = yield* a.client.followUps.complete({
        params: { task_id: item.id },
        payload: {
          matched_guest_id: other.id,
          match_score: 87.5,
          share_link: "https://s.example/x",
          share_channel: "wechat",
          extra: { k: [1] }
        }
      })
      expect(done).toEqual({ task_id: item.id, status: "completed", idempotent: false })
      const repeat = yield* a.client.followUps.complete({ params: { task_id: item.id }, payload: {} })
      expect(repeat).toEqual({ task_id: item.id, status: "completed", idempotent: true })
      expect(yield* Effect.flip(b.client.followUps.complete({ params: { task_id: item.id }, payload: {} }))).toMatchObject({
        _tag: "TaskLocked"
      })
      expect(yield* Effect.flip(b.client.followUps.dispatch({ params: { task_id: item.id } }))).toMatchObject({
        _tag: "InvalidTransition"
      })

      const after = yield* a.client.followUps.get({ params: { task_id: item.id } })
      expect(after.task.status).toBe("completed")
      expect(after.task.finished_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)
      expect(after.task.result).toEqual({
        matched_guest_id: other.id,
        match_score: 87.5,
        share_link: "https://s.example/x",
        share_channel: "wechat",
        extra: { k: [1] },
        error_code: null,
        error_msg: null,
        reason: null
      })
      expect(after.already_recommended_guest_ids).toEqual([other.id])
      // A completed task leaves the pending list.
      const pendingNow = yield* a.client.followUps.list({ query: {} })
      expect(pendingNow.list.map((t) => t.id)).not.toContain(item.id)
      const completedNow = yield* a.client.followUps.list({ query: { status: "completed" } })
      expect(completedNow.list.map((t) => t.id)).toContain(item.id)
    }))

  it.effect("completion records follow_up.task_completed in the outbox with the result", () =>
    Effect.gen(function*() {
      const { guest, other } = yield* seed
      const { id: planId } = yield* plan(guest.id, "1")
      const taskId = yield* taskOf(planId, 1)
      const { client, credentials } = yield* signedClient()
      yield* client.followUps.dispatch({ params: { task_id: taskId } })
      yield* client.followUps.complete({ params: { task_id: taskId }, payload: { matched_guest_id: other.id, match_score: 60 } })
      yield* client.followUps.complete({ params: { task_id: taskId }, payload: {} })
      const events = (yield* Effect.flatMap(OutboxRepo, (o) => o.after(0, 10_000)))
        .filter((e) => e.type === "follow_up.task_completed" && (e.data as { id: number }).id === taskId)
      expect(events).toHaveLength(1)
      expect(events[0]!.permission).toBe("open:follow-up:read")
      expect(events[0]!.data).toMatchObject({
        id: taskId,
        follow_up_id: planId,
        guest_id: guest.id,
        status: "completed",
        task_type: "recommend",
        task_day: 1,
        dispatched_to: credentials.appKey,
        result: { matched_guest_id: other.id, match_score: 60 }
      })
    }))

  it.effect("the detail has the guest with numeric codes, the certified matchmaker, the plan's recommendations and match count", () =>
    Effect.gen(function*() {
      const { guest, matchmaker, company, other, third } = yield* seed
      const { id: planId } = yield* plan(guest.id, "1,2,3", "recommend", yield* daysFromToday(-2))
      const { client } = yield* signedClient()
      // Two earlier days completed with recommendations; the guest has two matches, one on each side.
      for (const [day, matched] of [[1, other.id], [2, third.id]] as const) {
        const id = yield* taskOf(planId, day)
        yield* client.followUps.dispatch({ params: { task_id: id } })
        yield* client.followUps.complete({ params: { task_id: id }, payload: { matched_guest_id: matched } })
      }
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO matches (guest_a_id, guest_b_id) VALUES (${guest.id}, ${other.id}), (${third.id}, ${guest.id})`
      yield* sql`INSERT INTO matches (guest_a_id, guest_b_id) VALUES (${other.id}, ${third.id})`

      const taskId = yield* taskOf(planId, 3)
      const detail = yield* client.followUps.get({ params: { task_id: taskId } })
      expect(detail.task).toEqual({
        id: taskId,
        follow_up_id: planId,
        guest_id: guest.id,
        company_id: company.id,
        task_type: "recommend",
        task_day: 3,
        scheduled_date: yield* today,
        status: "pending",
        dispatched_to: null,
        dispatched_at: null,
        finished_at: null,
        result: null
      })
      expect(detail.guest).toMatchObject({
        id: guest.id,
        name: "张晓雯",
        gender: 2,
        age: 28,
        height: 165,
        weight: 50,
        education_level: 4,
        income_level: 3,
        income_amount: 250000,
        family_income_amount: 250000,
        family_income_level: "20-30万",
        occupation: "教师",
        workplace: "长沙一中",
        native_place: "湖南长沙",
        marriage_status: 1,
        has_children: 0,
        has_house: 1,
        has_car: null,
        hobbies: "读书、徒步",
        photos: ["https://img.example/1.jpg"],
        req_age_min: 28,
        req_age_max: 35,
        req_education_min: 3,
        req_location: "长沙",
        requirement_tags: { age_min: 28, age_max: 35, education_min: 3 }
      })
      expect(detail.matchmaker).toEqual({
        id: matchmaker.id,
        name: "李红娘",
        phone: "13900001111",
        wechat: "hongniang_li",
        wechat_id: "wxid_li",
        avatar: null,
        company_id: company.id,
        company_name: "随访婚介",
        certified: true,
        guest_count: 1,
        match_count: expect.any(Number)
      })
      expect(detail.already_recommended_guest_ids).toEqual([other.id, third.id])
      expect(detail.history_match_count).toBe(2)
    }))

  it.effect("the list: default pending and today, filters, order by scheduled_date then id, briefs", () =>
    Effect.gen(function*() {
      const { company, guest, matchmaker, other } = yield* seed
      const start = yield* daysFromToday(-1)
      const p1 = yield* plan(guest.id, "1,2", "recommend", start) // yesterday and today
      const p2 = yield* plan(other.id, "1", "revisit") // today, guest without matchmaker
      const p3 = yield* plan(guest.id, "1", "reactivate")
      const { client } = yield* signedClient()
      const mine = (list: ReadonlyArray<{ follow_up_id: number }>) => list.filter((t) => [p1.id, p2.id, p3.id].includes(t.follow_up_id))

      const page = yield* client.followUps.list({ query: { company_id: company.id } })
      expect(page.total).toBe(3)
      expect(page.list.map((t) => t.id)).toEqual([...page.list.map((t) => t.id)].sort((x, y) => x - y))
      const first = page.list.find((t) => t.follow_up_id === p1.id)!
      expect(first).toMatchObject({
        guest_id: guest.id,
        guest_name: "张晓雯",
        company_id: company.id,
        task_type: "recommend",
        task_day: 2,
        status: "pending",
        guest_brief: { gender: "female", age: 28, city: "长沙市", education: "硕士", occupation: "教师" },
        matchmaker_brief: { id: matchmaker.id, name: "李红娘", company_name: "随访婚介", wechat: "hongniang_li", wechat_id: "wxid_li" }
      })
      expect(page.list.find((t) => t.follow_up_id === p2.id)!.matchmaker_brief).toBeNull()

      const yesterday = yield* client.followUps.list({ query: { company_id: company.id, date: start } })
      expect(yesterday.list.map((t) => [t.follow_up_id, t.task_day])).toEqual([[p1.id, 1]])
      const revisits = yield* client.followUps.list({ query: { company_id: company.id, task_type: "revisit" } })
      expect(mine(revisits.list).map((t) => t.follow_up_id)).toEqual([p2.id])
      expect((yield* client.followUps.list({ query: { company_id: 2147483647 } })).list).toEqual([])
      expect((yield* client.followUps.list({ query: { company_id: company.id, status: "skipped" } })).total).toBe(0)

      const paged = yield* client.followUps.list({ query: { company_id: company.id, page: 2, page_size: 2 } })
      expect(paged.total).toBe(3)
      expect(paged.list.map((t) => t.id)).toEqual(page.list.slice(2).map((t) => t.id))
      const past = yield* client.followUps.list({ query: { company_id: company.id, page: 9 } })
      expect(past).toEqual({ list: [], total: 3, next_cursor: null })
    }))

  it.effect("page_size defaults to 50 and is clamped to 1000; bad filters are 400 invalid_parameter", () =>
    Effect.gen(function*() {
      const { company, guest } = yield* seed
      const start = yield* daysFromToday(-59)
      const sql = yield* SqlClient.SqlClient
      // 60 plans with a task today each, through the service (the operator's path).
      const followUps = yield* FollowUps
      for (let i = 0; i < 60; i++) {
        yield* followUps.createPlan(Scopes.all, { guestId: guest.id, taskType: "recommend", days: [60], startDate: start })
      }
      const [{ n }] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM follow_up_tasks WHERE company_id = ${company.id}`
      expect(n).toBe(60)
      const { baseUrl, client, credentials } = yield* signedClient()
      expect((yield* client.followUps.list({ query: { company_id: company.id } })).list).toHaveLength(50)
      expect((yield* client.followUps.list({ query: { company_id: company.id, page_size: 5000 } })).list).toHaveLength(60)
      for (const query of ["date=2024-02-30", "date=yesterday", "status=open", "task_type=call", "page_size=0", "company_id=x"]) {
        const res = yield* rawRequest(baseUrl, { path: TASKS, query, credentials })
        expect(res.status, query).toBe(400)
        expect(res.json.data.error, query).toBe("invalid_parameter")
      }
    }))

  it.effect("fail and skip store their reports; repeats are idempotent; wrong states are 400 invalid_transition", () =>
    Effect.gen(function*() {
      const { guest } = yield* seed
      const { id: planId } = yield* plan(guest.id, "1,2,3", "revisit", yield* daysFromToday(-2))
      const [t1, t2, t3] = [yield* taskOf(planId, 1), yield* taskOf(planId, 2), yield* taskOf(planId, 3)]
      const a = yield* signedClient()
      const b = yield* signedClient()
      const invalid = { _tag: "InvalidTransition" }

      // fail: only on a dispatched task, by its holder.
      expect(yield* Effect.flip(a.client.followUps.fail({ params: { task_id: t1 }, payload: {} }))).toMatchObject(invalid)
      yield* a.client.followUps.dispatch({ params: { task_id: t1 } })
      expect(yield* Effect.flip(b.client.followUps.fail({ params: { task_id: t1 }, payload: {} }))).toMatchObject({ _tag: "TaskLocked" })
      const failed = yield* a.client.followUps.fail({
        params: { task_id: t1 },
        payload: { error_code: "E_NO_CANDIDATE", error_msg: "无合适人选" }
      })
      expect(failed).toEqual({ task_id: t1, status: "failed", idempotent: false })
      expect(yield* a.client.followUps.fail({ params: { task_id: t1 }, payload: {} })).toMatchObject({ idempotent: true })
      expect(yield* Effect.flip(a.client.followUps.complete({ params: { task_id: t1 }, payload: {} }))).toMatchObject(invalid)
      expect(yield* Effect.flip(a.client.followUps.skip({ params: { task_id: t1 }, payload: {} }))).toMatchObject(invalid)
      expect((yield* a.client.followUps.get({ params: { task_id: t1 } })).task.result).toMatchObject({
        error_code: "E_NO_CANDIDATE",
        error_msg: "无合适人选"
      })

      // skip: from pending by anyone, from dispatched by anyone; again is idempotent.
      expect(yield* b.client.followUps.skip({ params: { task_id: t2 }, payload: { reason: "客户暂停" } })).toEqual({
        task_id: t2,
        status: "skipped",
        idempotent: false
      })
      expect(yield* a.client.followUps.skip({ params: { task_id: t2 }, payload: {} })).toMatchObject({ idempotent: true })
      expect(yield* Effect.flip(a.client.followUps.dispatch({ params: { task_id: t2 } }))).toMatchObject(invalid)
      expect(yield* Effect.flip(a.client.followUps.complete({ params: { task_id: t2 }, payload: {} }))).toMatchObject(invalid)
      yield* a.client.followUps.dispatch({ params: { task_id: t3 } })
      expect(yield* b.client.followUps.skip({ params: { task_id: t3 }, payload: {} })).toMatchObject({ status: "skipped" })
      expect((yield* a.client.followUps.get({ params: { task_id: t2 } })).task.result).toMatchObject({ reason: "客户暂停" })
    }))

  it.effect("complete checks its body: an unknown matched guest is 404, the task's own guest and a score past 100 are 400", () =>
    Effect.gen(function*() {
      const { guest } = yield* seed
      const { id: planId } = yield* plan(guest.id, "1")
      const taskId = yield* taskOf(planId, 1)
      const { baseUrl, client, credentials } = yield* signedClient()
      yield* client.followUps.dispatch({ params: { task_id: taskId } })
      expect(yield* Effect.flip(client.followUps.complete({ params: { task_id: taskId }, payload: { matched_guest_id: 2147483647 } })))
        .toMatchObject({ _tag: "NotFound", resource: "guest" })
      expect(yield* Effect.flip(client.followUps.complete({ params: { task_id: taskId }, payload: { matched_guest_id: guest.id } })))
        .toMatchObject({ _tag: "InvalidInput" })
      const res = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${TASKS}/${taskId}/complete`,
        body: JSON.stringify({ match_score: 100.5 }),
        credentials
      })
      expect(res.status).toBe(400)
      expect(res.json.data.issues[0].path).toBe("match_score")
      // Nothing was stored by the refused attempts: the task is still the caller's to complete.
      expect(yield* client.followUps.complete({ params: { task_id: taskId }, payload: { match_score: 100 } })).toMatchObject({
        idempotent: false
      })
    }))

  it.effect("unknown tasks are 404 follow_up_task; reading needs open:follow-up:read, changing open:follow-up:write", () =>
    Effect.gen(function*() {
      const { guest } = yield* seed
      const { id: planId } = yield* plan(guest.id, "1")
      const taskId = yield* taskOf(planId, 1)
      const reader = yield* signedClient(["open:follow-up:read"])
      for (const call of [reader.client.followUps.get({ params: { task_id: 2147483647 } })]) {
        expect(yield* Effect.flip(call)).toMatchObject({ _tag: "NotFound", resource: "follow_up_task" })
      }
      const writer = yield* signedClient(["open:follow-up:write"])
      for (
        const call of [
          writer.client.followUps.dispatch({ params: { task_id: 2147483647 } }) as Effect.Effect<unknown, unknown>,
          writer.client.followUps.complete({ params: { task_id: 2147483647 }, payload: {} }),
          writer.client.followUps.fail({ params: { task_id: 2147483647 }, payload: {} }),
          writer.client.followUps.skip({ params: { task_id: 2147483647 }, payload: {} })
        ]
      ) {
        expect(yield* Effect.flip(call)).toMatchObject({ _tag: "NotFound", resource: "follow_up_task" })
      }
      expect(yield* Effect.flip(reader.client.followUps.dispatch({ params: { task_id: taskId } }))).toMatchObject({
        _tag: "Forbidden",
        required: "open:follow-up:write"
      })
      expect(yield* Effect.flip(writer.client.followUps.list({ query: {} }))).toMatchObject({
        _tag: "Forbidden",
        required: "open:follow-up:read"
      })
    }))

  it.effect("a masking client sees the briefs' and the detail's WeChat fields, phone and workplace masked", () =>
    Effect.gen(function*() {
      const { company, guest } = yield* seed
      const { id: planId } = yield* plan(guest.id, "1")
      const taskId = yield* taskOf(planId, 1)
      const { client } = yield* signedClient(["open:follow-up:read"], { masking: true })
      const page = yield* client.followUps.list({ query: { company_id: company.id } })
      expect(page.list[0]!.matchmaker_brief).toMatchObject({ name: "李红娘", wechat: "***", wechat_id: "***" })
      const detail = yield* client.followUps.get({ params: { task_id: taskId } })
      expect(detail.matchmaker).toMatchObject({ phone: "139****1111", wechat: "***", wechat_id: "***" })
      expect(detail.guest.workplace).toBe("***")
      expect(detail.guest.name).toBe("张晓雯")
    }))
})

// Time moves here (the lease, generation by date), so these tests have their own server and clock.
layer(testServerLayer())("follow-up lease and generation", (it) => {
  it.effect("a lock older than the lease is pending again and may be taken by another client; its old holder then gets 409", () =>
    Effect.gen(function*() {
      const { guest } = yield* seed
      const { id: planId } = yield* plan(guest.id, "1")
      const taskId = yield* taskOf(planId, 1)
      const a = yield* signedClient()
      const b = yield* signedClient()
      yield* a.client.followUps.dispatch({ params: { task_id: taskId } })
      const date = yield* today
      yield* TestClock.adjust("7199 seconds")
      expect(yield* Effect.flip(b.client.followUps.dispatch({ params: { task_id: taskId } }))).toMatchObject({ _tag: "TaskLocked" })
      yield* TestClock.adjust("2 seconds")
      const listed = yield* b.client.followUps.list({ query: { date } })
      expect(listed.list.find((t) => t.id === taskId)?.status).toBe("pending")
      expect((yield* b.client.followUps.get({ params: { task_id: taskId } })).task).toMatchObject({
        status: "pending",
        dispatched_to: null
      })
      const taken = yield* b.client.followUps.dispatch({ params: { task_id: taskId } })
      expect(taken).toMatchObject({ dispatched_to: b.credentials.appKey, idempotent: false })
      expect(yield* Effect.flip(a.client.followUps.complete({ params: { task_id: taskId }, payload: {} }))).toMatchObject({
        _tag: "TaskLocked",
        dispatched_to: b.credentials.appKey
      })
      expect(yield* b.client.followUps.complete({ params: { task_id: taskId }, payload: {} })).toMatchObject({ status: "completed" })
    }))

  it.effect("each plan day becomes one task on its date, exactly once, however often and however many daemons generate", () =>
    Effect.gen(function*() {
      const { guest } = yield* seed
      const followUps = yield* FollowUps
      const sql = yield* SqlClient.SqlClient
      const { id: planId, tasks_created } = yield* plan(guest.id, "1,3,7")
      expect(tasks_created).toBe(1)
      const days = () =>
        Effect.map(
          sql<{ task_day: number; scheduled_date: string }>`SELECT task_day, scheduled_date::text AS scheduled_date
            FROM follow_up_tasks WHERE plan_id = ${planId} ORDER BY task_day`,
          (rows) => rows.map((r) => [r.task_day, r.scheduled_date])
        )
      const start = yield* today
      // Eight daemons at once, twice over: nothing new today.
      yield* Effect.all(Array.from({ length: 8 }, () => followUps.generateDue), { concurrency: "unbounded" })
      expect(yield* days()).toEqual([[1, start]])
      yield* TestClock.adjust("2 days")
      const runs = yield* Effect.all(Array.from({ length: 8 }, () => followUps.generateDue), { concurrency: "unbounded" })
      expect(runs.reduce((n, r) => n + r.created, 0)).toBe(1)
      yield* TestClock.adjust("10 days")
      yield* Effect.all(Array.from({ length: 8 }, () => followUps.generateDue), { concurrency: "unbounded" })
      const dateOf = (d: number) => formatDate(new Date(Date.parse(`${start}T00:00:00Z`) + (d - 1) * 86400_000), "UTC")
      expect(yield* days()).toEqual([[1, start], [3, dateOf(3)], [7, dateOf(7)]])
      const [{ next }] = yield* sql<{ next: string | null }>`SELECT next_date::text AS next FROM follow_up_plans WHERE id = ${planId}`
      expect(next).toBeNull()
    }))

  it.effect("a plan starting in the past gets its past days at once (catch-up); generate --date D creates D's tasks only, once", () =>
    Effect.gen(function*() {
      const { guest } = yield* seed
      const now = yield* today
      const dateOf = (offset: number) => formatDate(new Date(Date.parse(`${now}T00:00:00Z`) + offset * 86400_000), "UTC")
      const past = yield* plan(guest.id, "1,3,20", "reactivate", dateOf(-5))
      expect(past.tasks_created).toBe(2)
      const future = yield* plan(guest.id, "2,4", "revisit", dateOf(1))
      expect(future.tasks_created).toBe(0)
      const generated = yield* runAdmin(["follow-up", "generate", "--date", dateOf(2)])
      expect(generated).toEqual({ date: dateOf(2), created: 1 })
      expect(yield* runAdmin(["follow-up", "generate", "--date", dateOf(2)])).toEqual({ date: dateOf(2), created: 0 })
      // The daemon reaching that date later does not create it again.
      yield* TestClock.adjust("4 days")
      yield* runAdmin(["follow-up", "generate"])
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ task_day: number; scheduled_date: string }>`SELECT task_day, scheduled_date::text AS scheduled_date
        FROM follow_up_tasks WHERE plan_id = ${future.id} ORDER BY task_day`
      expect(rows.map((r) => [r.task_day, r.scheduled_date])).toEqual([[2, dateOf(2)], [4, dateOf(4)]])
      const plans = (yield* runAdmin(["follow-up", "plans", "list", "--guest", String(guest.id)])) as ReadonlyArray<{ id: number }>
      expect(plans.map((p) => p.id)).toEqual(expect.arrayContaining([past.id, future.id]))
      const everyPlan = (yield* runAdmin(["follow-up", "plans", "list"])) as ReadonlyArray<{ id: number; task_count: number }>
      expect(everyPlan.find((p) => p.id === past.id)).toMatchObject({ task_count: 2 })
    }))

  it.effect("the operator's plan command checks its arguments and the guest", () =>
    Effect.gen(function*() {
      const message = (...argv: Array<string>) => Effect.map(Effect.flip(runAdmin(argv)), (e) => (e as { message: string }).message)
      const { guest } = yield* seed
      const g = String(guest.id)
      expect(yield* message("follow-up", "plans", "create", "--guest", g, "--days", "0,3", "--type", "recommend")).toMatch(/days/)
      expect(yield* message("follow-up", "plans", "create", "--guest", g, "--days", "1", "--type", "call")).toMatch(/--type/)
      expect(yield* message("follow-up", "plans", "create", "--guest", g, "--days", "1", "--type", "recommend", "--start", "2024-02-30"))
        .toMatch(/--start/)
      expect(yield* message("follow-up", "plans", "create", "--guest", "2147483647", "--days", "1", "--type", "recommend")).toMatch(
        /guest 2147483647 not found/
      )
      expect(yield* message("follow-up", "generate", "--date", "tomorrow")).toMatch(/--date/)
    }))

  it.effect("the daemon's job creates a due task within its interval (30 s), with no request touching it", () =>
    Effect.gen(function*() {
      const { guest } = yield* seed
      const sql = yield* SqlClient.SqlClient
      yield* Layer.build(FollowUpGenerateJob)
      const date = yield* today
      // A plan stored without its task, as another process might have left it.
      const [{ id }] = yield* sql<{ id: number }>`INSERT INTO follow_up_plans (guest_id, task_type, start_date, days, next_date)
        VALUES (${guest.id}, 'revisit', ${date}::date, '{1}', ${date}::date) RETURNING id::int AS id`
      const count = Effect.map(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM follow_up_tasks WHERE plan_id = ${id}`,
        (rows) => rows[0]!.n
      )
      // Within one interval (the job's first run may already have caught it): no request involved.
      yield* TestClock.adjust("30 seconds")
      // The job's run is asynchronous: wait (boundedly) for it to land.
      let n = 0
      for (let i = 0; i < 200 && n === 0; i++) {
        n = yield* count
        if (n === 0) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))
      }
      expect(n).toBe(1)
    }))
})
