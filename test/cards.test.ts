// Guest-card import end to end (SPEC §4.2 card endpoints, §3.2; DECISIONS §8) with a fake parser,
// and the daemon's task runner: claims, leases, two runners on one queue, a dead daemon's task.
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"

import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as SqlClient from "effect/sql/SqlClient"
import * as TestClock from "effect/testing/TestClock"

import { CardTasksJob } from "../jobs/CardTasks.js"
import { CardParserTest } from "../src/card/CardParser.js"
import { emptyParsedCard, ParserUnavailable } from "../src/card/types.js"
import { CardTasksRepo } from "../src/repos/CardTasksRepo.js"
import { OutboxRepo } from "../src/repos/OutboxRepo.js"
import { eventually } from "./support/eventually.js"
import { cardForm, formBytes, uniqueImage } from "./support/forms.js"
import { signedClient, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const PNG = new Uint8Array(readFileSync(new URL("./fixtures/cards/card-clean.png", import.meta.url)))
const JPG = new Uint8Array(readFileSync(new URL("./fixtures/cards/card-photo.jpg", import.meta.url)))
const md5 = (b: Uint8Array) => createHash("md5").update(b).digest("hex")
/** A distinct valid PNG per call: the fixture with a few bytes appended after IEND. */
const uniquePng = () => uniqueImage(PNG)

// Time is a TestClock here: polling tests must not run out of rate-limit tokens.
const config = { cardTaskPollSeconds: 0.2, cardTaskLeaseSeconds: 1, cardTaskConcurrency: 2, rateLimitBurst: 1_000_000 }

/** The fake reads "nobody" from images whose bytes end with "nobody", everyone else as a guest. */
const parser = CardParserTest((image) => {
  const tail = new TextDecoder().decode(image.slice(-6))
  return Effect.succeed(
    tail === "nobody"
      ? { method: "ocr" as const, confidence: "low" as const, parsed: emptyParsedCard() }
      : {
        method: "ai" as const,
        confidence: "high" as const,
        parsed: {
          ...emptyParsedCard(),
          name: "李晓雯",
          gender: "female" as const,
          age: 28,
          height: 165,
          education: "硕士" as const,
          occupation: "中学教师",
          incomeAmount: 150000,
          reqIncomeAmount: 200000,
          requirementTags: { age_min: 28, age_max: 35, locations: ["长沙"] },
          nativePlace: "湖南长沙"
        }
      }
  )
})

const withRunner = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.scoped(Effect.flatMap(Layer.build(CardTasksJob), () => self))

layer(testServerLayer(config, parser))("card import", (it) => {
  const setup = Effect.gen(function*() {
    const ctx = yield* signedClient()
    const company = yield* ctx.client.companies.create({ payload: { name: "卡片婚介" } })
    const matchmaker = yield* ctx.client.matchmakers.create({ payload: { name: "拍卡红娘", company_id: company.id } })
    const post = (path: string, form: FormData) =>
      Effect.flatMap(
        Effect.promise(() => formBytes(form)),
        ({ body, contentType }) =>
          rawRequest(ctx.baseUrl, { method: "POST", path: `/api/open/v1/guests/${path}`, body, contentType, credentials: ctx.credentials })
      )
    return { ...ctx, company, matchmaker, post }
  })

  it.effect("parse-card answers the parsed keys, method, confidence and image_hash, and creates nothing", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      const r = yield* client.guests.parseCard({ payload: cardForm(JPG, {}, "card.jpg", "image/jpeg") })
      expect(r).toMatchObject({
        duplicate: false,
        image_hash: md5(JPG),
        method: "ai",
        confidence: "high",
        parsed: { name: "李晓雯", gender: "female", age: 28 }
      })
      expect(Object.keys(r.parsed)).toEqual(
        expect.arrayContaining([
          "name",
          "gender",
          "age",
          "height",
          "education",
          "occupation",
          "incomeAmount",
          "reqIncomeAmount",
          "selfIntro",
          "requirement",
          "requirementTags"
        ])
      )
      expect((yield* client.guests.list({ query: { keyword: "李晓雯" } })).total).toBe(0)
    }))

  it.effect("the file must be a JPEG or PNG by content: 400 unsupported_image; a missing file is 400 invalid_parameter", () =>
    Effect.gen(function*() {
      const { post } = yield* setup
      const gif = new TextEncoder().encode("GIF89a not really an image")
      const res = yield* post("parse-card", cardForm(gif, {}, "card.png", "image/png"))
      expect(res.status).toBe(400)
      expect(res.json.data.error).toBe("unsupported_image")
      const none = yield* post("parse-card", cardForm(undefined, { matchmaker_id: "1" }))
      expect(none.json.data).toMatchObject({ error: "invalid_parameter", issues: [{ path: "file" }] })
    }))

  it.effect("a file of 10 MiB + 1 byte is 413; exactly 10 MiB is read and judged by content", () =>
    Effect.gen(function*() {
      const { post } = yield* setup
      const over = new Uint8Array(10 * 1024 * 1024 + 1)
      over.set(PNG)
      const big = yield* post("parse-card", cardForm(over))
      expect(big.status).toBe(413)
      expect(big.json.data.error).toBe("payload_too_large")
      const exact = new Uint8Array(10 * 1024 * 1024)
      const ok = yield* post("parse-card", cardForm(exact))
      expect(ok.status).toBe(400)
      expect(ok.json.data.error).toBe("unsupported_image")
    }))

  it.effect("a JSON body on a card endpoint is 415", () =>
    Effect.gen(function*() {
      const { baseUrl, credentials } = yield* setup
      const res = yield* rawRequest(baseUrl, { method: "POST", path: "/api/open/v1/guests/parse-card", body: "{}", credentials })
      expect(res.status).toBe(415)
      expect(res.json.data.expected).toBe("multipart/form-data")
    }))

  it.effect("a blacklisted image is 400 image_blacklisted and counts a hit", () =>
    Effect.gen(function*() {
      const { client, post, matchmaker } = yield* setup
      const image = uniquePng()
      yield* client.imageBlacklist.add({ payload: { items: [{ md5: md5(image) }] } })
      expect((yield* post("parse-card", cardForm(image))).json.data.error).toBe("image_blacklisted")
      expect((yield* post("create-from-card", cardForm(image, { matchmaker_id: String(matchmaker.id) }))).json.data.error).toBe(
        "image_blacklisted"
      )
      const rec = (yield* client.imageBlacklist.list({ query: {} })).list.find((r) => r.md5 === md5(image))!
      expect(rec.hit_count).toBe(2)
    }))

  it.effect("create-from-card answers a pending task at once; the runner creates the guest as POST /guests would", () =>
    Effect.gen(function*() {
      const { client, matchmaker, company } = yield* setup
      const image = uniquePng()
      const accepted = yield* client.guests.createFromCard({
        payload: cardForm(image, {
          matchmaker_id: String(matchmaker.id),
          overrides: JSON.stringify({ phone: "13800138000", selfIntro: "热爱生活", age: 29 })
        })
      })
      expect(accepted).toMatchObject({ status: "pending", async: true, task_id: expect.stringMatching(/^ct_/) })
      const taskId = (accepted as { task_id: string }).task_id
      const pending = yield* client.guests.cardTask({ params: { task_id: taskId } })
      expect(pending).toMatchObject({ task_id: taskId, status: "pending", completed_at: null })
      const done = yield* withRunner(
        eventually(
          "the card task done",
          client.guests.cardTask({ params: { task_id: taskId } }).pipe(Effect.orDie),
          (t) => t.status === "done"
        )
      )
      expect(done).toMatchObject({ status: "done", result: { method: "ai", summary: "李晓雯 女 29岁 硕士 中学教师", saved: true } })
      expect(done.completed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)
      const guestId = done.result!.guest_id!
      const guest = yield* client.guests.get({ params: { id: guestId } })
      expect(guest).toMatchObject({
        name: "李晓雯",
        gender: "female",
        age: 29,
        phone: "13800138000",
        self_intro: "热爱生活",
        source: "card",
        company_id: company.id,
        matchmaker_id: matchmaker.id,
        income_amount: 150000,
        income_level: "10-20万",
        req_income_amount: 200000,
        req_age_min: 28,
        req_location_codes: ["430100"],
        native_place_code: "430100",
        status: "incomplete"
      })
      expect(done.result!.completeness).toBe(guest.completeness)
      const events = (yield* Effect.flatMap(OutboxRepo, (o) => o.after(0, 100000))).filter((e) =>
        e.type.startsWith("guest.") && ((e.data as { guest_id?: number }).guest_id ?? (e.data as { id?: number }).id) === guestId
      )
      expect(events.map((e) => e.type)).toEqual(["guest.created", "guest.card_created"])
      expect(events[1]!.data).toEqual({
        task_id: taskId,
        guest_id: guestId,
        name: "李晓雯",
        matchmaker_id: matchmaker.id,
        completeness: guest.completeness
      })
      // The same image again: the existing guest, no new task.
      const again = yield* client.guests.createFromCard({ payload: cardForm(image, { matchmaker_id: String(matchmaker.id) }) })
      expect(again).toMatchObject({ duplicate: true, existing_guest: { id: guestId, name: "李晓雯" } })
      const parsed = yield* client.guests.parseCard({ payload: cardForm(image, { matchmaker_id: String(matchmaker.id) }) })
      expect(parsed).toMatchObject({ duplicate: true, existing_guest: { id: guestId } })
      expect((yield* client.matchmakers.get({ params: { id: matchmaker.id } })).guest_count).toBe(1)
    }))

  it.effect("a second upload while the task is open returns the same task", () =>
    Effect.gen(function*() {
      const { client, matchmaker } = yield* setup
      const image = uniquePng()
      const a = yield* client.guests.createFromCard({ payload: cardForm(image, { matchmaker_id: String(matchmaker.id) }) })
      const b = yield* client.guests.createFromCard({ payload: cardForm(image, { matchmaker_id: String(matchmaker.id) }) })
      expect((b as { task_id: string }).task_id).toBe((a as { task_id: string }).task_id)
    }))

  it.effect("a card without a recognisable name or gender fails its task with an error and creates no guest", () =>
    Effect.gen(function*() {
      const { client, matchmaker } = yield* setup
      const nobody = new Uint8Array([...uniquePng(), ...new TextEncoder().encode("nobody")])
      const accepted = yield* client.guests.createFromCard({ payload: cardForm(nobody, { matchmaker_id: String(matchmaker.id) }) })
      const taskId = (accepted as { task_id: string }).task_id
      const failed = yield* withRunner(
        eventually("the card task failed", client.guests.cardTask({ params: { task_id: taskId } }).pipe(Effect.orDie), (t) =>
          t.status === "failed")
      )
      expect(failed).toMatchObject({ status: "failed", error: expect.stringContaining("name or gender") })
      expect(failed).not.toHaveProperty("result")
      // After a failed task, a new upload makes a new task.
      const retry = yield* client.guests.createFromCard({ payload: cardForm(nobody, { matchmaker_id: String(matchmaker.id) }) })
      expect((retry as { task_id: string }).task_id).not.toBe(taskId)
    }))

  it.effect("overrides: bad JSON or values are 400 with paths; the company defaults to the matchmaker's; none is 400", () =>
    Effect.gen(function*() {
      const { post, matchmaker, client } = yield* setup
      const bad = yield* post("create-from-card", cardForm(uniquePng(), { matchmaker_id: String(matchmaker.id), overrides: "{age: 3" }))
      expect(bad.json.data).toMatchObject({ error: "invalid_parameter", issues: [{ path: "overrides" }] })
      const arr = yield* post("create-from-card", cardForm(uniquePng(), { matchmaker_id: String(matchmaker.id), overrides: "[1]" }))
      expect(arr.json.data.issues[0].path).toBe("overrides")
      const badValue = yield* post(
        "create-from-card",
        cardForm(uniquePng(), { matchmaker_id: String(matchmaker.id), overrides: JSON.stringify({ age: 12, photoTime: "yesterday" }) })
      )
      expect(badValue.json.data.issues.map((i: { path: string }) => i.path).sort()).toEqual(["overrides.age", "overrides.photo_time"])
      const noMm = yield* post("create-from-card", cardForm(uniquePng()))
      expect(noMm.json.data.issues[0].path).toBe("matchmaker_id")
      const unknown = yield* post("create-from-card", cardForm(uniquePng(), { matchmaker_id: "999999" }))
      expect(unknown.json.data).toMatchObject({ error: "not_found", resource: "matchmaker" })
      const lone = yield* client.matchmakers.create({ payload: { name: "独立红娘" } })
      const noCompany = yield* post("create-from-card", cardForm(uniquePng(), { matchmaker_id: String(lone.id) }))
      expect(noCompany.json.data.issues[0].path).toBe("company_id")
    }))

  it.effect("an unknown task id is 404 card_task", () =>
    Effect.gen(function*() {
      const { client } = yield* setup
      expect(yield* Effect.flip(client.guests.cardTask({ params: { task_id: "ct_000000000000000000000000" } }))).toMatchObject({
        _tag: "NotFound",
        resource: "card_task"
      })
    }))

  it.effect("two runners on one queue never process a task twice", () =>
    Effect.gen(function*() {
      const { client, company } = yield* setup
      const mm = yield* client.matchmakers.create({ payload: { name: "并发红娘", company_id: company.id } })
      const ids: Array<string> = []
      for (let i = 0; i < 12; i++) {
        const r = yield* client.guests.createFromCard({ payload: cardForm(uniquePng(), { matchmaker_id: String(mm.id) }) })
        ids.push((r as { task_id: string }).task_id)
      }
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(Layer.fresh(CardTasksJob))
        yield* Layer.build(Layer.fresh(CardTasksJob))
        yield* eventually(
          "every card task",
          Effect.forEach(ids, (id) => client.guests.cardTask({ params: { task_id: id } }).pipe(Effect.orDie)),
          (ts) => ts.every((t) => t.status === "done")
        )
      }))
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ status: string; attempts: number }>`SELECT status, attempts FROM card_tasks WHERE task_id IN ${sql.in(ids)}`
      expect(rows.every((r) => r.status === "done" && r.attempts === 1)).toBe(true)
      expect((yield* client.matchmakers.get({ params: { id: mm.id } })).guest_count).toBe(12)
    }), { timeout: 60_000 })

  it.effect("a task held by a daemon that died is claimed again after its lease and completes", () =>
    Effect.gen(function*() {
      const { client, matchmaker } = yield* setup
      const r = yield* client.guests.createFromCard({ payload: cardForm(uniquePng(), { matchmaker_id: String(matchmaker.id) }) })
      const taskId = (r as { task_id: string }).task_id
      const repo = yield* CardTasksRepo
      // A daemon claims it and dies: nobody finishes or releases it.
      const dead = yield* repo.claim("dead-daemon", yield* Clock.currentTimeMillis, 1000)
      expect(Option.map(dead, (t) => t.task_id)).toEqual(Option.some(taskId))
      expect((yield* client.guests.cardTask({ params: { task_id: taskId } })).status).toBe("processing")
      // Before the lease ends nobody else takes it; after it, a runner does.
      const early = yield* repo.claim("other-daemon", yield* Clock.currentTimeMillis, 1000)
      expect(Option.getOrUndefined(Option.map(early, (t) => t.task_id))).not.toBe(taskId)
      yield* TestClock.adjust("2 seconds")
      const done = yield* withRunner(
        eventually("the card task done", client.guests.cardTask({ params: { task_id: taskId } }).pipe(Effect.orDie), (t) =>
          t.status === "done")
      )
      expect(done.status).toBe("done")
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<
        { attempts: number; locked_by: string }
      >`SELECT attempts, locked_by FROM card_tasks WHERE task_id = ${taskId}`
      expect(row!.attempts).toBe(2)
      expect(row!.locked_by).not.toBe("dead-daemon")
    }), { timeout: 30_000 })
})

layer(
  testServerLayer(
    {},
    CardParserTest(() =>
      Effect.fail(
        new ParserUnavailable({
          message:
            "card parsing is not available: set ANTHROPIC_API_KEY, or install the OCR language data (npm install @tesseract.js-data/chi_sim @tesseract.js-data/eng)"
        })
      )
    )
  )
)("no parser", (it) => {
  it.effect("parse-card is 503 parser_unavailable naming what to install", () =>
    Effect.gen(function*() {
      const { baseUrl, credentials } = yield* signedClient()
      const { body, contentType } = yield* Effect.promise(() => formBytes(cardForm(PNG)))
      const res = yield* rawRequest(baseUrl, { method: "POST", path: "/api/open/v1/guests/parse-card", body, contentType, credentials })
      expect(res.status).toBe(503)
      expect(res.json.data.error).toBe("parser_unavailable")
      expect(res.json.message).toMatch(/tesseract\.js-data/)
    }))
})

// With polling off (the runner's clock is the TestClock, which never reaches its next poll), only
// LISTEN/NOTIFY can wake the runner once its first look at the queue is spent.
layer(testServerLayer({ cardTaskPollSeconds: 600, rateLimitBurst: 1_000_000 }, parser))("card runner wake-up", (it) => {
  it.effect("a task created while the runner is idle is picked up through LISTEN/NOTIFY", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const company = yield* client.companies.create({ payload: { name: "通知婚介" } })
      const matchmaker = yield* client.matchmakers.create({ payload: { name: "通知红娘", company_id: company.id } })
      const upload = Effect.suspend(() =>
        Effect.map(
          client.guests.createFromCard({ payload: cardForm(uniquePng(), { matchmaker_id: String(matchmaker.id) }) }),
          (accepted) => (accepted as { task_id: string }).task_id
        )
      )
      const done = (what: string, taskId: string) =>
        eventually(what, client.guests.cardTask({ params: { task_id: taskId } }).pipe(Effect.orDie), (t) => t.status === "done")
      // Waiting before the runner starts: its first look takes it, and then it is idle.
      const early = yield* upload
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(CardTasksJob)
        yield* done("the task that waited for the runner", early)
        const taskId = yield* upload
        const started = performance.now()
        expect((yield* done("the task announced by NOTIFY", taskId)).status).toBe("done")
        console.log(`a new card task was picked up and done ${Math.round(performance.now() - started)} ms after its upload`)
      }))
    }))
})

// A parse that never ends: the daemon shuts down while holding the task.
layer(testServerLayer({ cardTaskPollSeconds: 0.2, rateLimitBurst: 1_000_000 }, CardParserTest(() => Effect.never)))(
  "card runner shutdown",
  (it) => {
    it.effect("a runner stopped mid-task puts the task back to pending for another daemon", () =>
      Effect.gen(function*() {
        const { client } = yield* signedClient()
        const company = yield* client.companies.create({ payload: { name: "停机婚介" } })
        const matchmaker = yield* client.matchmakers.create({ payload: { name: "停机红娘", company_id: company.id } })
        const accepted = yield* client.guests.createFromCard({ payload: cardForm(uniquePng(), { matchmaker_id: String(matchmaker.id) }) })
        const taskId = (accepted as { task_id: string }).task_id
        yield* withRunner(
          eventually(
            "the card task processing",
            client.guests.cardTask({ params: { task_id: taskId } }).pipe(Effect.orDie),
            (t) => t.status === "processing"
          )
        )
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<
          { status: string; locked_by: string | null; attempts: number }
        >`SELECT status, locked_by, attempts FROM card_tasks WHERE task_id = ${taskId}`
        expect(row).toEqual({ status: "pending", locked_by: null, attempts: 0 })
      }))
  }
)
