// The in-memory "database" the repository fakes share, and the fake Transaction over it.
//
// Every fake repository reads and writes `db.tables`, so what one writes the others see (a guest
// inserted by the guests fake is there for the follow-ups fake), as in PostgreSQL.
//
// The Transaction fake is not a pass-through: services rely on rollback (a completion that names
// the task's own guest, a registration refused after its place was taken, a card whose guest
// cannot be inserted), so `run` snapshots the tables and restores them when the unit of work
// fails, dies or is interrupted. Units of work are serialised by a one-permit semaphore (each
// sees the last one committed, as under SERIALIZABLE); a nested `run` is a savepoint (its own
// snapshot, no second permit). Writes made outside any `run` are not isolated from a running
// one: concurrency is the integration suite's business (the real repositories under real locks).
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"

import type { GuestState } from "../../src/domain/guest.js"
import { Transaction } from "../../src/repos/sqlHelpers.js"

export interface FakeCompany {
  readonly id: number
  readonly name: string
}

export interface FakeMatchmaker {
  readonly id: number
  readonly company_id: number | null
  guest_count: number
}

/** A `guests` row: the state, its ids and instants (ms), the image it was created from. */
export interface FakeGuest {
  readonly id: number
  state: GuestState
  readonly image_hash: string | null
  readonly created_at: number
  updated_at: number
  photo_time: number
}

export interface FakeEvent {
  readonly id: number
  readonly event_id: string
  readonly type: string
  readonly permission: string
  readonly data: unknown
  readonly created_at: number
}

export interface FakePlan {
  readonly id: number
  readonly guest_id: number
  readonly matchmaker_id: number | null
  readonly task_type: "recommend" | "revisit" | "reactivate"
  readonly start_date: string
  readonly days: ReadonlyArray<number>
  next_date: string | null
  readonly created_at: number
}

export interface FakeTask {
  readonly id: number
  readonly plan_id: number
  readonly guest_id: number
  readonly company_id: number
  readonly matchmaker_id: number | null
  readonly task_type: "recommend" | "revisit" | "reactivate"
  readonly task_day: number
  readonly scheduled_date: string
  status: "pending" | "dispatched" | "completed" | "failed" | "skipped"
  dispatched_to: string | null
  dispatched_at: number | null
  finished_at: number | null
  matched_guest_id: number | null
  match_score: number | null
  share_link: string | null
  share_channel: string | null
  extra: Record<string, unknown> | null
  error_code: string | null
  error_msg: string | null
  skip_reason: string | null
}

export interface FakeActivity {
  readonly id: number
  readonly title: string
  readonly description: string | null
  readonly cover_url: string | null
  readonly address: string
  start_time: number
  end_time: number
  readonly male_quota: number | null
  readonly female_quota: number | null
  readonly male_fee: number
  readonly female_fee: number
  male_registered: number
  female_registered: number
  status: "draft" | "registering" | "ongoing" | "ended"
  audit_status: "pending" | "approved" | "rejected"
  readonly company_id: number
  readonly created_at: number
}

export interface FakeRegistration {
  readonly id: number
  readonly activity_id: number
  readonly guest_id: number
  readonly name: string | null
  readonly phone: string | null
  readonly remark: string | null
  readonly fee: number
  readonly registered_at: number
}

export interface FakeMembershipPlan {
  readonly id: number
  readonly name: string
  readonly days: number
}

export interface FakeMembership {
  readonly id: number
  readonly user_id: number
  guest_id: number | null
  readonly plan_id: number
  status: "active" | "expired" | "cancelled"
  readonly started_at: number
  expire_at: number
  readonly created_at: number
}

export interface FakeCardTask {
  readonly id: number
  readonly task_id: string
  readonly matchmaker_id: number
  readonly company_id: number
  readonly image_hash: string
  image: Uint8Array
  readonly content_type: string
  readonly overrides: Record<string, unknown>
  readonly client_app_key: string | null
  status: "pending" | "processing" | "done" | "failed"
  attempts: number
  locked_by: string | null
  lease_until: number | null
  started_at: number | null
  readonly created_at: number
  completed_at: number | null
  result: unknown
  guest_id: number | null
  error: string | null
}

export interface Tables {
  companies: Map<number, FakeCompany>
  matchmakers: Map<number, FakeMatchmaker>
  users: Set<number>
  guests: Map<number, FakeGuest>
  events: Array<FakeEvent>
  followUpPlans: Map<number, FakePlan>
  followUpTasks: Map<number, FakeTask>
  activities: Map<number, FakeActivity>
  registrations: Array<FakeRegistration>
  membershipPlans: Map<number, FakeMembershipPlan>
  memberships: Map<number, FakeMembership>
  cardTasks: Map<number, FakeCardTask>
  /** The last id handed out per table (bigserial). */
  sequences: Record<string, number>
}

/** The three plans migration 0008 seeds (DECISIONS §3). */
const seededPlans = (): Map<number, FakeMembershipPlan> =>
  new Map([
    [1, { id: 1, name: "月度会员", days: 30 }],
    [2, { id: 2, name: "季度会员", days: 90 }],
    [3, { id: 3, name: "年度会员", days: 365 }]
  ])

export const emptyTables = (): Tables => ({
  companies: new Map(),
  matchmakers: new Map(),
  users: new Set(),
  guests: new Map(),
  events: [],
  followUpPlans: new Map(),
  followUpTasks: new Map(),
  activities: new Map(),
  registrations: [],
  membershipPlans: seededPlans(),
  memberships: new Map(),
  cardTasks: new Map(),
  sequences: { membershipPlans: 3 }
})

export interface FakeDatabase {
  tables: Tables
}

export class FakeDb extends Context.Service<FakeDb, FakeDatabase>()("Test/FakeDb") {}

/** A fresh, empty database (the seeded membership plans aside) per build of the layer. */
export const FakeDbLive: Layer.Layer<FakeDb> = Layer.sync(FakeDb, () => ({ tables: emptyTables() }))

/** The next id of a table's sequence. */
export const nextId = (db: FakeDatabase, table: string): number => {
  const id = (db.tables.sequences[table] ?? 0) + 1
  db.tables.sequences[table] = id
  return id
}

/** The database's `now()`: the fiber's clock (the TestClock in tests). */
export const now = Clock.currentTimeMillis

/** Whether the current fiber runs inside a fake transaction (a nested `run` is a savepoint). */
const InTransaction = Context.Reference<boolean>("Test/FakeDb/InTransaction", { defaultValue: () => false })

export const FakeTransaction: Layer.Layer<Transaction, never, FakeDb> = Layer.effect(
  Transaction,
  Effect.gen(function*() {
    const db = yield* FakeDb
    const serial = yield* Semaphore.make(1)
    const withRollback = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      Effect.suspend(() => {
        const snapshot = structuredClone(db.tables)
        return Effect.onExit(self, (exit) => Exit.isFailure(exit) ? Effect.sync(() => void (db.tables = snapshot)) : Effect.void)
      })
    const run = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      Effect.flatMap(InTransaction, (nested) =>
        nested
          ? withRollback(self)
          : serial.withPermits(1)(Effect.provideService(withRollback(self), InTransaction, true)))
    // The real `run` also maps SQL failures (never raised here): the errors pass through unchanged.
    return Transaction.of({ run: run as Transaction["Service"]["run"] })
  })
)
