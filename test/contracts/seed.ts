// What a contract suite needs beyond the repository under test: rows of other tables (a company,
// a matchmaker, a user) and a few moves no repository method makes (an expiry or an activity
// window put in the past). Each store implements them its own way — SQL against PostgreSQL, the
// tables of the fake database — and times are relative to that store's own "now" (PostgreSQL's
// now(), the fake's clock), so one suite runs unchanged on both.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"

import { OutboxRepo } from "../../src/repos/OutboxRepo.js"
import { FakeDb, nextId, now } from "../fakes/db.js"

export interface ContractSeedShape {
  readonly company: Effect.Effect<number>
  readonly matchmaker: (companyId: number) => Effect.Effect<number>
  readonly matchmakerGuestCount: (id: number) => Effect.Effect<number>
  readonly user: Effect.Effect<number>
  /** Puts a membership's expire_at this long before the store's now. */
  readonly expireMembershipAgo: (id: number, agoMs: number) => Effect.Effect<void>
  /** Puts an activity's start and end this far from the store's now (negative: in the past). */
  readonly setActivityWindow: (id: number, startFromNowMs: number, endFromNowMs: number) => Effect.Effect<void>
  /** A plan's follow-up tasks by day (the repository finds tasks by id only). */
  readonly followUpTasks: (planId: number) => Effect.Effect<ReadonlyArray<SeedTask>>
}

export interface SeedTask {
  readonly id: number
  readonly task_day: number
  readonly scheduled_date: string
  readonly company_id: number
  readonly matchmaker_id: number | null
}

export class ContractSeed extends Context.Service<ContractSeed, ContractSeedShape>()("Test/ContractSeed") {}

const interval = (ms: number) => `${ms / 1000} seconds`

/** The seeds as SQL over the test database. */
export const SqlContractSeed: Layer.Layer<ContractSeed, never, SqlClient.SqlClient> = Layer.effect(
  ContractSeed,
  Effect.map(SqlClient.SqlClient, (sql): ContractSeedShape => {
    const one = <A>(rows: Effect.Effect<ReadonlyArray<A>, unknown>) => Effect.orDie(Effect.map(rows, (r) => r[0]!))
    return {
      company: Effect.map(one(sql<{ id: number }>`INSERT INTO companies (name) VALUES ('契约婚介') RETURNING id::int AS id`), (r) => r.id),
      matchmaker: (companyId) =>
        Effect.map(
          one(sql<{ id: number }>`INSERT INTO matchmakers (name, company_id) VALUES ('契约红娘', ${companyId}) RETURNING id::int AS id`),
          (r) => r.id
        ),
      matchmakerGuestCount: (id) =>
        Effect.map(one(sql<{ n: number }>`SELECT guest_count::int AS n FROM matchmakers WHERE id = ${id}`), (r) => r.n),
      user: Effect.map(one(sql<{ id: number }>`INSERT INTO users (name) VALUES ('契约用户') RETURNING id::int AS id`), (r) => r.id),
      expireMembershipAgo: (id, agoMs) =>
        Effect.orDie(sql`UPDATE memberships SET expire_at = now() - ${interval(agoMs)}::interval WHERE id = ${id}`).pipe(Effect.asVoid),
      setActivityWindow: (id, start, end) =>
        Effect.orDie(
          sql`UPDATE activities SET start_time = now() + ${interval(start)}::interval, end_time = now() + ${interval(end)}::interval
            WHERE id = ${id}`
        ).pipe(Effect.asVoid),
      followUpTasks: (planId) =>
        Effect.orDie(
          sql<SeedTask>`SELECT id::int AS id, task_day, scheduled_date::text AS scheduled_date, company_id::int AS company_id,
              matchmaker_id::int AS matchmaker_id
            FROM follow_up_tasks WHERE plan_id = ${planId} ORDER BY task_day`
        )
    }
  })
)

/** The seeds as rows of the fake database. */
export const FakeContractSeed: Layer.Layer<ContractSeed, never, FakeDb> = Layer.effect(
  ContractSeed,
  Effect.map(FakeDb, (db): ContractSeedShape => ({
    company: Effect.sync(() => {
      const id = nextId(db, "companies")
      db.tables.companies.set(id, { id, name: "契约婚介" })
      return id
    }),
    matchmaker: (companyId) =>
      Effect.sync(() => {
        const id = nextId(db, "matchmakers")
        db.tables.matchmakers.set(id, { id, company_id: companyId, guest_count: 0 })
        return id
      }),
    matchmakerGuestCount: (id) => Effect.sync(() => db.tables.matchmakers.get(id)?.guest_count ?? 0),
    user: Effect.sync(() => {
      const id = nextId(db, "users")
      db.tables.users.add(id)
      return id
    }),
    expireMembershipAgo: (id, agoMs) =>
      Effect.map(now, (nowMs) => {
        db.tables.memberships.get(id)!.expire_at = nowMs - agoMs
      }),
    setActivityWindow: (id, start, end) =>
      Effect.map(now, (nowMs) => {
        const a = db.tables.activities.get(id)!
        a.start_time = nowMs + start
        a.end_time = nowMs + end
      }),
    followUpTasks: (planId) =>
      Effect.sync(() =>
        [...db.tables.followUpTasks.values()]
          .filter((t) => t.plan_id === planId)
          .sort((a, b) => a.task_day - b.task_day)
          .map(({ company_id, id, matchmaker_id, scheduled_date, task_day }) => ({
            id,
            task_day,
            scheduled_date,
            company_id,
            matchmaker_id
          }))
      )
  }))
)

/** The id of the newest event in the outbox now (suites share their store between tests). */
export const newestEventId = Effect.gen(function*() {
  const outbox = yield* OutboxRepo
  let last = 0
  for (;;) {
    const page = yield* outbox.after(last, 1000)
    if (page.length === 0) return last
    last = page[page.length - 1]!.id
  }
})
