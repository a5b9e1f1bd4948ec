// The API and the daemon as an operator runs them, as real processes on one database: SIGTERM
// during a burst loses no request in flight (within the grace period, which bounds the wait),
// probes stay out of the info-level request log, the daemon answers its probes on JOBS_PORT and
// writes heartbeats, and `admin status` shows a card task whose daemon died, before and after its
// lease expires, and `admin daemons list` tells alive, dead and stopped daemons apart.
import { readFileSync } from "node:fs"
import { Agent } from "node:http"

import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import { runAdmin } from "../src/admin/commands.js"
import { findFreePort } from "../src/sql/embedded.js"
import { fakeAnthropic, messageWithText } from "./card/fakeAnthropic.js"
import type { Entry } from "./support/entries.js"
import { eventually } from "./support/eventually.js"
import { cardForm } from "./support/forms.js"
import { createCredentials, signedClient, testServerLayer } from "./support/harness.js"
import { databaseEnv, logLines, type Outcome, sendRequest, startProcess } from "./support/processes.js"
import { parsePrometheus, valueOf } from "./support/prometheus.js"

const BASE = "/api/open/v1"
const PNG = new Uint8Array(readFileSync(new URL("./fixtures/cards/card-clean.png", import.meta.url)))

const ANSWER = JSON.stringify({
  name: "周芷若",
  gender: "female",
  age: 26,
  height: 165,
  education: "硕士",
  occupation: "医生",
  incomeAmount: null,
  reqIncomeAmount: null,
  selfIntro: null,
  requirement: null,
  requirementTags: null,
  weight: null,
  maritalStatus: "未婚",
  nativePlace: null,
  phone: null,
  workplace: null,
  confidence: "high"
})

const fetchJson = (url: string) =>
  Effect.promise(async () => {
    const res = await fetch(url)
    return { status: res.status, text: await res.text() }
  })

type Status = {
  queues: Array<{
    queue: string
    depth: number
    held: number
    stuck?: number
    held_tasks?: Array<{ task_id: string; daemon: string | null; daemon_alive: boolean; lease_expired: boolean; state: string }>
  }>
  daemons: { alive: number; dead: number; list: Array<{ instance_id: string; state: string }> }
  clients: { total: number }
  webhook_backlog: Array<unknown>
}
type Daemon = {
  instance_id: string
  pid: number
  state: string
  jobs: Array<{ job: string; kind: string; runs: number; last_run: { outcome: string | null } | null }>
}

const adminStatus = Effect.map(runAdmin(["status"]), (s) => s as unknown as Status)
const adminDaemons = Effect.map(runAdmin(["daemons", "list"]), (d) => d as unknown as Array<Daemon>)

layer(testServerLayer({ rateLimitBurst: 1_000_000 }), { timeout: 240_000 })("the processes an operator runs", (it) => {
  it.effect(
    "SIGTERM during a burst: the requests in flight finish inside the grace period, then the process exits 0",
    () =>
      Effect.gen(function*() {
        const credentials = yield* createCredentials()
        const port = yield* Effect.promise(findFreePort)
        const api = yield* startProcess("src/main.ts", {
          ...(yield* databaseEnv),
          PORT: String(port),
          HOST: "127.0.0.1",
          SHUTDOWN_GRACE_SECONDS: "30",
          RATE_LIMIT_RPS: "100000",
          RATE_LIMIT_BURST: "1000000"
        }, "Listening on")

        // Probes answer, and stay out of the info-level request log.
        expect((yield* fetchJson(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
        expect((yield* fetchJson(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)
        expect((yield* fetchJson(`http://127.0.0.1:${port}/metrics`)).status).toBe(200)

        // Requests in flight on purpose: headers in the server's hands, half of each body sent.
        let release: () => void = () => {}
        const held = new Promise<void>((resolve) => (release = resolve))
        const slow = Array.from({ length: 6 }, (_, i) =>
          sendRequest({
            port,
            method: "POST",
            path: `${BASE}/companies`,
            credentials,
            body: JSON.stringify({ name: `停机婚介${i}`, contact_name: "在途".repeat(20) }),
            hold: held
          }))
        yield* Effect.promise(() => Promise.all(slow.map((s) => s.accepted)))

        // A burst on keep-alive connections, running until the process is gone.
        const agent = new Agent({ keepAlive: true, maxSockets: 8 })
        const outcomes: Array<Outcome> = []
        let stop = false
        const burst = Array.from({ length: 8 }, async () => {
          while (!stop) {
            const o = await sendRequest({ port, method: "GET", path: `${BASE}/companies`, credentials, agent }).outcome
            outcomes.push(o)
            if (o._tag !== "Answered") break
          }
        })
        yield* eventually("the burst to be under way", Effect.sync(() => outcomes.length), (n) => n >= 40)

        api.child.kill("SIGTERM")
        yield* eventually("the drain to start", Effect.sync(api.log), (log) => log.includes("draining"))
        // New connections are refused while the requests in flight are still being sent.
        const late = yield* Effect.promise(() => sendRequest({ port, method: "GET", path: "/healthz" }).outcome)
        expect(late).toMatchObject({ _tag: "NotAccepted" })
        release()
        const answers = yield* Effect.promise(() => Promise.all(slow.map((s) => s.outcome)))
        const code = yield* Effect.promise(() => api.exited)
        stop = true
        yield* Effect.promise(() => Promise.all(burst))
        agent.destroy()

        expect(answers.map((a) => (a._tag === "Answered" ? [a.status, JSON.parse(a.body).code] : [a._tag]))).toEqual(
          slow.map(() => [200, 200])
        )
        const sql = yield* SqlClient.SqlClient
        const created = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM companies WHERE name LIKE '停机婚介%'`
        expect(created[0]!.n).toBe(6)
        // No request of the burst was cut off or answered with an error: each was answered whole, or
        // never reached the process (its listener closed).
        expect(outcomes.filter((o) => o._tag === "CutOff")).toEqual([])
        expect(outcomes.filter((o) => o._tag === "Answered" && o.status !== 200)).toEqual([])
        expect(outcomes.filter((o) => o._tag === "Answered").length).toBeGreaterThanOrEqual(40)
        expect(code).toBe(0)

        const lines = logLines(api.log())
        const draining = lines.find((l) => l.message?.startsWith("draining"))
        expect(draining?.annotations?.["in_flight"]).toBeGreaterThanOrEqual(6)
        expect(lines.some((l) => l.message === "drained")).toBe(true)
        expect(lines.some((l) => l.message?.startsWith("grace period over"))).toBe(false)
        const requestPaths = lines.filter((l) => l.message === "request").map((l) => l.annotations?.["path"])
        expect(requestPaths).toContain(`${BASE}/companies`)
        expect(requestPaths).not.toContain("/healthz")
        expect(requestPaths).not.toContain("/readyz")
        expect(requestPaths).not.toContain("/metrics")
      }),
    { timeout: 120_000 }
  )

  it.effect(
    "the grace period bounds the wait: a request still running when it ends is cut off and the process exits",
    () =>
      Effect.gen(function*() {
        const credentials = yield* createCredentials()
        const port = yield* Effect.promise(findFreePort)
        const api = yield* startProcess("src/main.ts", {
          ...(yield* databaseEnv),
          PORT: String(port),
          HOST: "127.0.0.1",
          SHUTDOWN_GRACE_SECONDS: "1"
        }, "Listening on")
        const never = sendRequest({
          port,
          method: "POST",
          path: `${BASE}/companies`,
          credentials,
          body: JSON.stringify({ name: "永不结束" }),
          hold: new Promise(() => {})
        })
        yield* Effect.promise(() => never.accepted)
        api.child.kill("SIGTERM")
        const code = yield* Effect.promise(() => api.exited)
        expect(code).toBe(0)
        expect((yield* Effect.promise(() => never.outcome))._tag).not.toBe("Answered")
        const over = logLines(api.log()).find((l) => l.message?.startsWith("grace period over"))
        expect(over?.annotations?.["cut_off"]).toBe(1)
      }),
    { timeout: 60_000 }
  )

  it.effect(
    "a daemon answers its probes on JOBS_PORT, beats, and admin status shows its stuck card task before and after the lease",
    () =>
      Effect.gen(function*() {
        const { client } = yield* signedClient()
        const company = yield* client.companies.create({ payload: { name: "心跳婚介" } })
        const matchmaker = yield* client.matchmakers.create({ payload: { name: "心跳红娘", company_id: company.id } })
        const fake = yield* fakeAnthropic
        // The AI never answers the first daemon: its task stays held.
        fake.reply(() => ({ status: 200, body: messageWithText(ANSWER), delayMs: 120_000 }))
        const jobsPort = yield* Effect.promise(findFreePort)
        const env = {
          ...(yield* databaseEnv),
          HOST: "127.0.0.1",
          ANTHROPIC_API_KEY: "test-key",
          ANTHROPIC_BASE_URL: fake.baseURL,
          CARD_AI_TIMEOUT_MS: "180000",
          CARD_TASK_LEASE_SECONDS: "12",
          CARD_TASK_POLL_SECONDS: "0.5",
          CARD_OCR_POOL_SIZE: "1",
          TIME_MOVES_INTERVAL_SECONDS: "1",
          DAEMON_HEARTBEAT_SECONDS: "0.5"
        }
        const first = yield* startProcess("jobs/main.ts", { ...env, JOBS_PORT: String(jobsPort) }, "job daemon ready")

        const probe = (path: string) => fetchJson(`http://127.0.0.1:${jobsPort}${path}`)
        expect(JSON.parse((yield* probe("/healthz")).text)).toMatchObject({ code: 200, data: { status: "alive" } })
        expect(JSON.parse((yield* probe("/readyz")).text)).toMatchObject({ code: 200, data: { status: "ready" } })
        const missing = yield* probe("/api/open/v1/companies")
        expect(missing.status).toBe(404)
        expect(JSON.parse(missing.text)).toMatchObject({ code: 404, data: { error: "not_found", resource: "route" } })
        // Its jobs' runs are on its own /metrics.
        const runs = yield* eventually(
          "time-moves runs on the daemon's /metrics",
          Effect.map(probe("/metrics"), (r) => valueOf(parsePrometheus(r.text), "job_runs_total", { job: "time-moves" })),
          (n) => n >= 2
        )
        expect(runs).toBeGreaterThanOrEqual(2)

        const firstPid = first.child.pid!
        const listed = yield* eventually(
          "the daemon's heartbeat with a run of time-moves",
          adminDaemons,
          (ds) => ds.some((d) => d.pid === firstPid && d.jobs.some((j) => j.job === "time-moves" && j.runs > 0))
        )
        const mine = listed.find((d) => d.pid === firstPid)!
        expect(mine.state).toBe("alive")
        expect(mine.jobs.map((j) => j.job)).toEqual(
          expect.arrayContaining(["card-tasks", "partitions", "time-moves", "follow-up-generate"])
        )
        expect(mine.jobs.find((j) => j.job === "card-tasks")?.kind).toBe("queue")
        expect(mine.jobs.find((j) => j.job === "time-moves")?.last_run?.outcome).toBe("ok")

        // A card task the daemon claims, then dies on.
        const uploaded = yield* client.guests.createFromCard({
          payload: cardForm(new Uint8Array([...PNG, ...new TextEncoder().encode(`stuck-${Date.now()}`)]), {
            matchmaker_id: String(matchmaker.id)
          })
        })
        const taskId = (uploaded as { task_id: string }).task_id
        yield* eventually("the AI to be asked", Effect.sync(() => fake.requests.length), (n) => n > 0)
        first.child.kill("SIGKILL")

        const cardQueue = (s: Status) => s.queues.find((q) => q.queue === "card-tasks")!
        const heldTask = (s: Status) => cardQueue(s).held_tasks!.find((t) => t.task_id === taskId)
        const dead = yield* eventually("the dead daemon's task to show as stuck", adminStatus, (s) => heldTask(s)?.daemon_alive === false)
        expect(heldTask(dead)).toMatchObject({
          daemon: mine.instance_id,
          lease_expired: false,
          state: expect.stringMatching(/^stuck: its daemon stopped beating/)
        })
        expect(cardQueue(dead).stuck).toBeGreaterThanOrEqual(1)
        expect(cardQueue(dead).held).toBeGreaterThanOrEqual(1)
        expect(cardQueue(dead).depth).toBeGreaterThanOrEqual(1)
        expect(dead.daemons.list.find((d) => d.instance_id === mine.instance_id)?.state).toBe("dead")
        expect(dead.clients.total).toBeGreaterThanOrEqual(1)
        expect((yield* adminDaemons).find((d) => d.instance_id === mine.instance_id)?.state).toBe("dead")

        const expired = yield* eventually("the lease to run out", adminStatus, (s) => heldTask(s)?.lease_expired === true, 60_000)
        expect(heldTask(expired)?.state).toMatch(/^stuck: the lease ran out/)

        // Another daemon takes it over, finishes it, and stops cleanly on SIGTERM.
        fake.reply(() => ({ status: 200, body: messageWithText(ANSWER) }))
        const second = yield* startProcess("jobs/main.ts", env, "job daemon ready")
        yield* eventually(
          "the task to be done",
          client.guests.cardTask({ params: { task_id: taskId } }).pipe(Effect.orDie),
          (t) => t.status === "done",
          60_000
        )
        const after = yield* adminStatus
        expect(heldTask(after)).toBeUndefined()
        second.child.kill("SIGTERM")
        expect(yield* Effect.promise(() => second.exited)).toBe(0)
        const final = yield* adminDaemons
        expect(final.find((d) => d.pid === second.child.pid)?.state).toBe("stopped")
        expect(final.find((d) => d.instance_id === mine.instance_id)?.state).toBe("dead")
      }),
    { timeout: 180_000 }
  )
})

describe("settings of the operator's side", () => {
  const run = (entry: Entry, env: Record<string, string>) =>
    Effect.gen(function*() {
      const p = yield* startProcess(entry, {
        DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
        SECRET_KEY: "ab".repeat(32),
        ...env
      }, "cannot start")
      return { code: yield* Effect.promise(() => p.exited), lines: logLines(p.log()) }
    })

  it.effect.each(
    [
      ["jobs/main.ts", { JOBS_PORT: "http" }, "JOBS_PORT"],
      ["src/main.ts", { SHUTDOWN_GRACE_SECONDS: "-1" }, "SHUTDOWN_GRACE_SECONDS"],
      ["src/main.ts", { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT"]
    ] as const
  )("%s with %j exits 1 naming %s", ([entry, env, setting]) =>
    Effect.gen(function*() {
      const { code, lines } = yield* run(entry, env)
      expect(code).toBe(1)
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatchObject({ logLevel: "FATAL", annotations: { settings: [setting] } })
    }), { timeout: 60_000 })
})
