// `npm run bench` (follow-up dispatch): the lock under contention. 32 clients race in groups over
// 1,000 tasks (every task asked for by a group of 8 clients at the same moment), side by side:
// - through the service: signed HTTP to one in-process API instance (authentication, rate limit,
//   FollowUps.dispatch), the clients in a process of their own, as integrators' are elsewhere;
// - the floor: the same SQL issued directly — the repository's lock statement and a loser's state
//   read — from 32 fibers over the same pool;
// - and, to show where the rest goes, every statement a request makes issued directly (the
//   authentication's client read, nonce and rate-limit token, then the lock).
// Tasks locked per second and the ratios. Uses the bench database; its rows are removed afterwards.
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

import * as Effect from "effect/Effect"
import * as HttpServer from "effect/http/HttpServer"
import * as Option from "effect/Option"
import * as SqlClient from "effect/sql/SqlClient"

import * as Scopes from "../src/domain/scope.js"
import { formatDate } from "../src/domain/time.js"
import { FollowUpsRepo } from "../src/repos/FollowUpsRepo.js"
import { ReplayRepo } from "../src/repos/ReplayRepo.js"
import { Clients } from "../src/services/Clients.js"
import { FollowUps } from "../src/services/FollowUps.js"
import type { RaceInput, RaceOutcome } from "./follow-up-dispatch-clients.js"
import { benchDatabaseUrl, inProcessService, log, portOf, runWithBenchConfig } from "./support.js"

const TASKS = Number(process.env.BENCH_FOLLOW_UP_TASKS ?? 1000)
const CLIENTS = Number(process.env.BENCH_FOLLOW_UP_CLIENTS ?? 32)
/** Clients asking for each task at the same moment (CLIENTS / RACERS groups race side by side). */
const RACERS = Number(process.env.BENCH_FOLLOW_UP_RACERS ?? 8)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const LEASE_MS = 7200 * 1000
const COMPANY = "派单基准婚介"

type Attempt = (client: number, taskId: number) => Effect.Effect<"won" | "lost" | "error">
type Round = RaceOutcome

/** Groups of RACERS clients; each group walks its share of the tasks in order, its clients in step. */
const race = (taskIds: ReadonlyArray<number>, attempt: Attempt): Effect.Effect<Round> =>
  Effect.gen(function*() {
    const groups = Math.max(1, Math.floor(CLIENTS / RACERS))
    const t0 = performance.now()
    const results = yield* Effect.all(
      Array.from({ length: CLIENTS }, (_, c) =>
        Effect.gen(function*() {
          const counts = { won: 0, lost: 0, errors: 0 }
          for (let t = Math.floor(c / RACERS) % groups; t < taskIds.length; t += groups) {
            const outcome = yield* attempt(c, taskIds[t]!)
            if (outcome === "won") counts.won++
            else if (outcome === "lost") counts.lost++
            else counts.errors++
          }
          return counts
        })),
      { concurrency: "unbounded" }
    )
    const ms = performance.now() - t0
    const sum = (k: "won" | "lost" | "errors") => results.reduce((n, r) => n + r[k], 0)
    return { ms, won: sum("won"), lost: sum("lost"), errors: sum("errors") }
  })

const median = (rounds: ReadonlyArray<Round>): Round => [...rounds].sort((a, b) => a.ms - b.ms)[Math.floor(rounds.length / 2)]!

const main = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const baseUrl = `http://127.0.0.1:${portOf(yield* HttpServer.HttpServer)}`
  const clients = yield* Clients
  const followUps = yield* FollowUps
  const repo = yield* FollowUpsRepo
  const replay = yield* ReplayRepo

  // Removes this benchmark's rows (also what a run that died midway left behind).
  const cleanup = Effect.gen(function*() {
    yield* sql`DELETE FROM follow_up_tasks WHERE company_id IN (SELECT id FROM companies WHERE name = ${COMPANY})`
    yield* sql`DELETE FROM follow_up_plans WHERE guest_id IN
      (SELECT id FROM guests WHERE company_id IN (SELECT id FROM companies WHERE name = ${COMPANY}))`
    yield* sql`DELETE FROM guests WHERE company_id IN (SELECT id FROM companies WHERE name = ${COMPANY})`
    yield* sql`DELETE FROM companies WHERE name = ${COMPANY}`
  })
  yield* cleanup
  const [{ company }] = yield* sql<{ company: number }>`INSERT INTO companies (name) VALUES (${COMPANY}) RETURNING id::int AS company`
  const [{ guest }] = yield* sql<{ guest: number }>`INSERT INTO guests (name, gender, company_id)
    VALUES ('派单嘉宾', 'female', ${company}) RETURNING id::int AS guest`

  /** `n` fresh pending tasks: plans of up to 100 days that all lie in the past, generated at once. */
  const freshTasks = (n: number) =>
    Effect.gen(function*() {
      const today = formatDate(new Date(), "Asia/Shanghai")
      const start = formatDate(new Date(Date.parse(`${today}T00:00:00Z`) - 99 * 86400_000), "UTC")
      const plans: Array<number> = []
      for (let left = n; left > 0; left -= 100) {
        const days = Array.from({ length: Math.min(100, left) }, (_, d) => d + 1)
        plans.push((yield* followUps.createPlan(Scopes.all, { guestId: guest, taskType: "recommend", days, startDate: start })).id)
      }
      const rows = yield* sql<{ id: number }>`SELECT id::int AS id FROM follow_up_tasks WHERE plan_id IN ${sql.in(plans)} ORDER BY id`
      return rows.map((r) => r.id)
    })

  const credentials = yield* Effect.all(Array.from({ length: CLIENTS }, (_, i) =>
    Effect.gen(function*() {
      const c = yield* clients.create({ name: `bench-matcher-${i}`, permissions: ["open:follow-up:write"], masking: false })
      yield* clients.setRateLimit(c.app_key, 1_000_000, 1_000_000)
      return { appKey: c.app_key, appSecret: c.app_secret }
    })))

  // The service: the clients in a process of their own, each a signed POST per attempt.
  const throughService = (taskIds: ReadonlyArray<number>) =>
    Effect.callback<Round>((resume) => {
      const input: RaceInput = { baseUrl, credentials, taskIds, racers: RACERS }
      const child = spawn(
        process.execPath,
        ["--import", "tsx", fileURLToPath(new URL("./follow-up-dispatch-clients.ts", import.meta.url))],
        {
          stdio: ["pipe", "pipe", "inherit"]
        }
      )
      let out = ""
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString()
      })
      child.once(
        "close",
        (code) => resume(code === 0 ? Effect.succeed(JSON.parse(out) as RaceOutcome) : Effect.die(new Error(`clients exited with ${code}`)))
      )
      child.stdin.end(JSON.stringify(input))
    })

  // The floor: the same statements, straight to the database — the lock, and a loser's state read.
  const lockSql = (caller: string, taskId: number) =>
    Effect.gen(function*() {
      const lock = yield* repo.dispatch(taskId, caller, Date.now(), LEASE_MS)
      if (Option.isSome(lock)) return "won" as const
      yield* repo.lockState(Scopes.all, taskId)
      return "lost" as const
    })
  const direct: Attempt = (c, taskId) => lockSql(`floor-${c}`, taskId).pipe(Effect.catch(() => Effect.succeed("error" as const)))

  // Every statement of a request, directly: its nonce with a rate-limit lease (the client row is cached), the lock.
  const wholeRequest: Attempt = (c, taskId) =>
    Effect.gen(function*() {
      const { appKey } = credentials[c]!
      const now = Date.now()
      yield* replay.admit({
        appKey,
        nonce: `${c}-${taskId}-${now}-${Math.random()}`,
        nowMs: now,
        notBeforeMs: now - 900_000,
        signedS: Math.floor(now / 1000),
        want: 1,
        rps: 1_000_000,
        burst: 1_000_000
      })
      return yield* lockSql(appKey, taskId)
    }).pipe(Effect.catch(() => Effect.succeed("error" as const)))

  log(`bench: follow-up dispatch, ${CLIENTS} clients in groups of ${RACERS} over ${TASKS} tasks, ${ROUNDS} rounds…`)
  // Warm-up: connections, JIT, the worker's module loading.
  yield* race(yield* freshTasks(Math.min(TASKS, 200)), direct)
  yield* race(yield* freshTasks(Math.min(TASKS, 200)), wholeRequest)
  yield* throughService(yield* freshTasks(Math.min(TASKS, 200)))

  const floor: Array<Round> = []
  const requestSql: Array<Round> = []
  const service: Array<Round> = []
  for (let r = 0; r < ROUNDS; r++) {
    floor.push(yield* race(yield* freshTasks(TASKS), direct))
    requestSql.push(yield* race(yield* freshTasks(TASKS), wholeRequest))
    service.push(yield* throughService(yield* freshTasks(TASKS)))
  }
  yield* cleanup

  const row = (name: string, rounds: ReadonlyArray<Round>) => {
    const m = median(rounds)
    return {
      path: name,
      tasks_locked: m.won,
      losers_409: m.lost,
      errors: rounds.reduce((n, r) => n + r.errors, 0),
      ms: Math.round(m.ms),
      tasks_per_s: Math.round(m.won / (m.ms / 1000)),
      attempts_per_s: Math.round((m.won + m.lost) / (m.ms / 1000))
    }
  }
  const f = row("lock SQL, direct (floor)", floor)
  const w = row("every statement of a request, direct", requestSql)
  const v = row("service (signed HTTP)", service)
  process.stdout.write(
    `\nFollow-up dispatch under contention: ${CLIENTS} clients, groups of ${RACERS} racing per task, ${TASKS} tasks (median of ${ROUNDS})\n`
  )
  console.table([f, w, v])
  process.stdout.write(
    `service / floor: ${(v.tasks_per_s / f.tasks_per_s).toFixed(2)}×; service / every statement of a request: ${
      (v.tasks_per_s / w.tasks_per_s).toFixed(2)
    }×\n`
  )
})

const url = await benchDatabaseUrl()
await runWithBenchConfig(url, Effect.provide(main, inProcessService()))
process.exit(0)
