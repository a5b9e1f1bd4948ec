// Job daemons as real processes on one queue: a daemon killed with SIGKILL mid-task leaves its
// task to another after the lease, and two daemons never process a task twice. Card parsing uses
// the real Anthropic SDK against a local fake server (nothing reaches the real API).
import { readFileSync } from "node:fs"

import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import { withDatabase } from "../src/sql/urls.js"
import { fakeAnthropic, messageWithText } from "./card/fakeAnthropic.js"
import { databaseAdminUrl } from "./support/cluster.js"
import { eventually } from "./support/eventually.js"
import { cardForm } from "./support/forms.js"
import { signedClient, testServerLayer } from "./support/harness.js"
import { startDaemon } from "./support/processes.js"

const PNG = new Uint8Array(readFileSync(new URL("./fixtures/cards/card-clean.png", import.meta.url)))
let variant = 0
const uniquePng = () => new Uint8Array([...PNG, ...new TextEncoder().encode(`daemon-${Date.now()}-${variant++}`)])

const ANSWER = JSON.stringify({
  name: "赵敏",
  gender: "female",
  age: 27,
  height: 163,
  education: "本科",
  occupation: "设计师",
  incomeAmount: 200000,
  reqIncomeAmount: null,
  selfIntro: null,
  requirement: null,
  requirementTags: null,
  weight: null,
  maritalStatus: "未婚",
  nativePlace: "北京",
  phone: null,
  workplace: null,
  confidence: "high"
})

layer(testServerLayer({ rateLimitBurst: 1_000_000 }), { timeout: 120_000 })("daemons as processes", (it) => {
  const setup = Effect.gen(function*() {
    const ctx = yield* signedClient()
    const company = yield* ctx.client.companies.create({ payload: { name: "进程婚介" } })
    const matchmaker = yield* ctx.client.matchmakers.create({ payload: { name: "进程红娘", company_id: company.id } })
    const sql = yield* SqlClient.SqlClient
    const [{ db }] = yield* sql<{ db: string }>`SELECT current_database() AS db`
    const url = withDatabase(databaseAdminUrl(), db)
    const fake = yield* fakeAnthropic
    const env = {
      DATABASE_URL: url,
      SECRET_KEY: "ab".repeat(32),
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: fake.baseURL,
      CARD_AI_TIMEOUT_MS: "60000",
      // The default lease: a daemon never loses a task it is working on, however loaded the machine.
      CARD_TASK_LEASE_SECONDS: "120",
      CARD_TASK_POLL_SECONDS: "0.5",
      CARD_OCR_POOL_SIZE: "1"
    }
    const upload = () =>
      Effect.map(
        ctx.client.guests.createFromCard({ payload: cardForm(uniquePng(), { matchmaker_id: String(matchmaker.id) }) }),
        (r) => (r as { task_id: string }).task_id
      )
    const task = (taskId: string) => ctx.client.guests.cardTask({ params: { task_id: taskId } }).pipe(Effect.orDie)
    const attempts = (taskId: string) =>
      Effect.map(sql<{ attempts: number }>`SELECT attempts FROM card_tasks WHERE task_id = ${taskId}`, (r) => r[0]!.attempts)
    return { ...ctx, fake, env, upload, task, attempts, sql }
  })

  it.effect("a daemon killed with SIGKILL mid-task: another daemon completes the task after the lease", () =>
    Effect.gen(function*() {
      const { fake, env, upload, task, attempts } = yield* setup
      // The AI never answers the first daemon.
      fake.reply(() => ({ status: 200, body: messageWithText(ANSWER), delayMs: 60_000 }))
      // The killed daemon's lease is short (and it has one worker, so it cannot take the task back
      // from itself); the daemon that takes over holds its claim long.
      const first = yield* startDaemon({ ...env, CARD_TASK_LEASE_SECONDS: "2", CARD_TASK_CONCURRENCY: "1" })
      const taskId = yield* upload()
      yield* eventually("the AI to be asked", Effect.sync(() => fake.requests.length), (n) => n > 0)
      expect((yield* task(taskId)).status).toBe("processing")
      first.kill("SIGKILL")
      fake.reply(() => ({ status: 200, body: messageWithText(ANSWER) }))
      yield* startDaemon(env)
      const t = yield* eventually(`card task ${taskId}`, task(taskId), (t) => t.status === "done" || t.status === "failed", 60_000)
      expect(t).toMatchObject({ status: "done", result: { method: "ai", summary: "赵敏 女 27岁 本科 设计师", saved: true } })
      expect(yield* attempts(taskId)).toBe(2)
    }), { timeout: 90_000 })

  it.effect("two daemons on one queue process every task exactly once", () =>
    Effect.gen(function*() {
      const { fake, env, upload, task, sql } = yield* setup
      fake.reply(() => ({ status: 200, body: messageWithText(ANSWER), delayMs: 150 }))
      const before = fake.requests.length
      yield* startDaemon(env)
      yield* startDaemon(env)
      const ids: Array<string> = []
      for (let i = 0; i < 10; i++) ids.push(yield* upload())
      yield* eventually(
        "every task done or failed",
        Effect.forEach(ids, task),
        (all) => all.every((t) => t.status === "done" || t.status === "failed"),
        60_000
      )
      const rows = yield* sql<{ status: string; attempts: number; locked_by: string }>`
        SELECT status, attempts, locked_by FROM card_tasks WHERE task_id IN ${sql.in(ids)}`
      expect(rows.map((r) => [r.status, r.attempts])).toEqual(ids.map(() => ["done", 1]))
      // Both daemons took part, and the AI was asked once per task.
      expect(new Set(rows.map((r) => r.locked_by.split(":").slice(0, 2).join(":"))).size).toBe(2)
      expect(fake.requests.length - before).toBe(10)
    }), { timeout: 90_000 })
})
