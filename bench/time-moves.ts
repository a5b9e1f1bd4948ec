// `npm run bench` (time moves): the daemon's set-based moves over many due records at once —
// memberships expired together with one membership.expired event each, and activities moved past
// their window — beside a floor measured in the same run: the bare UPDATE of the same rows
// without events. Uses the bench database; its rows are removed afterwards.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { ActivitiesRepo } from "../src/repos/ActivitiesRepo.js"
import { MembershipsRepo } from "../src/repos/MembershipsRepo.js"
import { median } from "./paired.js"
import { log, runBench } from "./support.js"

const N = Number(process.env.BENCH_TIME_MOVES ?? 20_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const USERS = "bench-time-moves-"

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const t0 = performance.now()
    const value = yield* effect
    return { value, ms: performance.now() - t0 }
  })

await runBench(["open:membership:read"], (_api, sql) =>
  Effect.gen(function*() {
    const memberships = yield* MembershipsRepo
    const activities = yield* ActivitiesRepo
    const COMPANY = "时间基准婚介"
    // Removes this benchmark's rows (also what a run that died midway left behind).
    const cleanup = Effect.gen(function*() {
      yield* sql`DELETE FROM events WHERE type = 'membership.expired'
        AND (data->>'user_id')::bigint IN (SELECT id FROM users WHERE name LIKE ${USERS + "%"})`
      yield* sql`DELETE FROM memberships WHERE user_id IN (SELECT id FROM users WHERE name LIKE ${USERS + "%"})`
      yield* sql`DELETE FROM users WHERE name LIKE ${USERS + "%"}`
      yield* sql`DELETE FROM activities WHERE company_id IN (SELECT id FROM companies WHERE name = ${COMPANY})`
      yield* sql`DELETE FROM companies WHERE name = ${COMPANY}`
    })
    yield* cleanup
    yield* sql`INSERT INTO users (name) SELECT ${USERS} || g FROM generate_series(1, ${N}) g`
    const [{ company }] = yield* sql<{ company: number }>`INSERT INTO companies (name) VALUES (${COMPANY}) RETURNING id::int AS company`

    // N due memberships (one per bench user), N registering activities whose window has passed.
    const seedMemberships = sql`INSERT INTO memberships (user_id, plan_id, started_at, expire_at)
      SELECT id, 1, now() - interval '31 days', now() - interval '1 minute' FROM users WHERE name LIKE ${USERS + "%"}`
    const seedActivities = sql`INSERT INTO activities (title, address, start_time, end_time, company_id, status, audit_status)
      SELECT '基准活动' || g, '某地', now() - interval '2 hours', now() - interval '1 hour', ${company}, 'registering', 'approved'
      FROM generate_series(1, ${N}) g`
    const analyze = Effect.andThen(sql`ANALYZE memberships`, sql`ANALYZE activities`)

    const floorMemberships = Effect.map(
      sql<{ n: number }>`WITH moved AS (UPDATE memberships SET status = 'expired', updated_at = now()
        WHERE status = 'active' AND expire_at <= now() RETURNING 1) SELECT count(*)::int AS n FROM moved`,
      (rows) => rows[0]!.n
    )
    const floorActivities = Effect.map(
      sql<{ n: number }>`WITH moved AS (UPDATE activities SET status = 'ended', updated_at = now()
        WHERE status = 'registering' AND start_time <= now() RETURNING 1) SELECT count(*)::int AS n FROM moved`,
      (rows) => rows[0]!.n
    )

    const times = {
      expire: [] as Array<number>,
      expireFloor: [] as Array<number>,
      start: [] as Array<number>,
      startFloor: [] as Array<number>
    }
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which runs first, so neither always meets the other's dead rows.
      const order = round % 2 === 0 ? ["service", "floor"] as const : ["floor", "service"] as const
      for (const which of order) {
        yield* seedMemberships
        yield* seedActivities
        yield* analyze
        if (which === "service") {
          const e = yield* timed(Effect.map(memberships.expireDue(), (ids) => ids.length))
          const s = yield* timed(Effect.map(activities.startDue, (ids) => ids.length))
          if (e.value !== N || s.value !== N) throw new Error(`moved ${e.value} memberships and ${s.value} activities, not ${N}`)
          times.expire.push(e.ms)
          times.start.push(s.ms)
        } else {
          const e = yield* timed(floorMemberships)
          const s = yield* timed(floorActivities)
          if (e.value !== N || s.value !== N) throw new Error(`floor moved ${e.value} memberships and ${s.value} activities, not ${N}`)
          times.expireFloor.push(e.ms)
          times.startFloor.push(s.ms)
        }
      }
    }

    log("bench: removing the time-moves rows…")
    yield* cleanup

    const row = (scenario: string, service: ReadonlyArray<number>, floor: ReadonlyArray<number>) => ({
      scenario,
      rows: N,
      service_ms: Number(median(service).toFixed(1)),
      floor_ms: Number(median(floor).toFixed(1)),
      ratio: Number((median(service) / median(floor)).toFixed(2))
    })
    process.stdout.write(
      `\nTime moves: one statement per kind over ${N} due rows, median of ${ROUNDS} rounds; floor = the bare UPDATE without events\n`
    )
    console.table([
      row("memberships active → expired + one event each", times.expire, times.expireFloor),
      row("activities registering → ended (past window)", times.start, times.startFloor)
    ])
  }).pipe(Effect.provide(Layer.mergeAll(MembershipsRepo.layer, ActivitiesRepo.layer))))

process.exit(0)
