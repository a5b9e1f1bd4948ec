// Memberships and their plans: the only SQL over `memberships` and `membership_plans`.
// Create-or-renew is one upsert on the "one active membership per user and plan" index; expiry
// is one statement that moves the due rows and records their events together.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"
import * as Struct from "effect/Struct"

import { pageOf } from "../../schema/Common.js"
import { Membership, MEMBERSHIP_PAGE, MembershipListParams, MembershipStatus } from "../../schema/Memberships.js"
import { SyncWindow } from "../domain/sync.js"
import { makeCounterTotal } from "./RowCountsRepo.js"
import { CountRow, Timestamp } from "./rows.js"
import { listPage, pageTail, sinceFilter, sqlEdge, syncColumns, SyncKeyFields } from "./sqlHelpers.js"

const MembershipRow = Schema.Struct({ ...Membership.fields, started_at: Timestamp, expire_at: Timestamp, created_at: Timestamp })
const MembershipPageRow = Schema.Struct({ ...MembershipRow.fields, total_count: Schema.optional(Schema.Int), ...SyncKeyFields })
const ListRequest = Schema.Struct({ p: Schema.toType(MembershipListParams), sync: Schema.UndefinedOr(SyncWindow) })

const COLUMNS = `m.id::int AS id, m.user_id::int AS user_id, m.guest_id::int AS guest_id, p.name AS plan_name, m.plan_id,
  m.status, m.started_at, m.expire_at, m.created_at`

export const MembershipPlan = Schema.Struct({ id: Schema.Int, name: Schema.String, days: Schema.Int })
export type MembershipPlan = typeof MembershipPlan.Type

const SavedRow = Schema.Struct({ id: Schema.Int, status: MembershipStatus, expire_at: Timestamp, renewed: Schema.Boolean })

/** Expire only this user's membership of this plan (create-or-renew), or every due one (the daemon). */
export interface ExpiryScope {
  readonly userId: number
  readonly planId: number
}

export class MembershipsRepo extends Context.Service<MembershipsRepo>()("Memberships/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(COLUMNS)
    const where = ({ p, sync }: typeof ListRequest.Type) =>
      sql.and([
        ...(p.user_id !== undefined ? [sql`m.user_id = ${p.user_id}`] : []),
        ...(p.status ? [sql`m.status = ${p.status}`] : []),
        ...(p.company_id !== undefined ? [sql`m.guest_id IN (SELECT g.id FROM guests g WHERE g.company_id = ${p.company_id})`] : []),
        ...sinceFilter(sql, sync, "m.updated_at")
      ])

    const insertPlan = SqlSchema.findOne({
      Request: MembershipPlan.mapFields(Struct.omit(["id"])),
      Result: MembershipPlan,
      execute: (plan) => sql`INSERT INTO membership_plans ${sql.insert({ ...plan })} RETURNING id, name, days`
    })
    const plans = SqlSchema.findAll({
      Request: Schema.Void,
      Result: MembershipPlan,
      execute: () => sql`SELECT id, name, days FROM membership_plans ORDER BY id`
    })
    const findPlan = SqlSchema.findOneOption({
      Request: Schema.Int,
      Result: MembershipPlan,
      execute: (id) => sql`SELECT id, name, days FROM membership_plans WHERE id = ${id}`
    })

    /**
     * A new active membership from now, or — when the user has an active one of this plan — that one
     * with expire_at extended by the plan's days (same id). Concurrent calls serialise on the unique
     * index: the second extends what the first made. None when the plan does not exist.
     */
    const upsert = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.Int, planId: Schema.Int, guestId: Schema.NullOr(Schema.Int) }),
      Result: SavedRow,
      execute: ({ guestId, planId, userId }) =>
        sql`INSERT INTO memberships AS m (user_id, guest_id, plan_id, expire_at)
          SELECT ${userId}, ${guestId}, p.id, now() + make_interval(days => p.days) FROM membership_plans p WHERE p.id = ${planId}
          ON CONFLICT (user_id, plan_id) WHERE status = 'active' DO UPDATE
            SET expire_at = m.expire_at + (SELECT make_interval(days => p.days) FROM membership_plans p WHERE p.id = m.plan_id),
              guest_id = coalesce(EXCLUDED.guest_id, m.guest_id), updated_at = now()
          RETURNING m.id::int AS id, m.status, m.expire_at, (m.xmax::text <> '0') AS renewed`
    })

    const lock = SqlSchema.findOneOption({
      Request: Schema.Int,
      Result: Schema.Struct({ id: Schema.Int, status: MembershipStatus }),
      execute: (id) => sql`SELECT id::int AS id, status FROM memberships WHERE id = ${id} FOR UPDATE`
    })

    const setStatus = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Int, status: MembershipStatus }),
      execute: ({ id, status }) => sql`UPDATE memberships SET status = ${status}, updated_at = now() WHERE id = ${id}`
    })

    const findById = SqlSchema.findOneOption({
      Request: Schema.Int,
      Result: MembershipRow,
      execute: (id) => sql`SELECT ${cols} FROM memberships m JOIN membership_plans p ON p.id = m.plan_id WHERE m.id = ${id}`
    })

    /**
     * active → expired for every membership whose expire_at has passed (or one user's plan); the
     * ids moved, for the caller to record their `membership.expired` events in the same
     * transaction. A second daemon running it at once waits on the row locks, re-checks
     * `status = 'active'` and moves nothing twice, so no event is written twice.
     */
    const expire = SqlSchema.findAll({
      Request: Schema.Struct({ scope: Schema.NullOr(Schema.Struct({ userId: Schema.Int, planId: Schema.Int })) }),
      Result: Schema.Struct({ id: Schema.Int }),
      execute: ({ scope }) =>
        sql`UPDATE memberships SET status = 'expired', updated_at = now()
          WHERE status = 'active' AND expire_at <= now()
            ${scope === null ? sql`` : sql`AND user_id = ${scope.userId} AND plan_id = ${scope.planId}`}
          RETURNING id::int AS id`
    })

    const page = SqlSchema.findAll({
      Request: Schema.Struct({ ...ListRequest.fields, window: Schema.Boolean }),
      Result: MembershipPageRow,
      execute: ({ p, sync, window }) => {
        const { offset, pageSize } = pageOf(p, MEMBERSHIP_PAGE)
        return sql`SELECT ${cols}, ${syncColumns(sql, "m.updated_at", "m.id")}${
          window ? sql`, count(*) OVER ()::int AS total_count` : sql``
        }
          FROM memberships m JOIN membership_plans p ON p.id = m.plan_id ${
          pageTail(sql, { sync, where: where({ p, sync }), at: "m.updated_at", id: "m.id", offsetOrder: "m.id DESC", pageSize, offset })
        }`
      }
    })
    const counterTotal = makeCounterTotal(sql, "memberships", ["status", "user_id"])
    const count = SqlSchema.findAll({
      Request: ListRequest,
      Result: CountRow,
      execute: (request) => sql`SELECT count(*)::int AS n FROM memberships m WHERE ${where(request)}`
    })

    return {
      insertPlan: (plan: { name: string; days: number }) => sqlEdge(insertPlan(plan)),
      plans: sqlEdge(plans(undefined)),
      findPlan: (id: number) => sqlEdge(findPlan(id)),
      /** Create-or-renew; none when the plan does not exist. */
      upsert: (userId: number, planId: number, guestId: number | null) => sqlEdge(upsert({ userId, planId, guestId })),
      /** A membership's status, locked for the rest of the transaction. */
      lock: (id: number) => sqlEdge(lock(id)),
      setStatus: (id: number, status: MembershipStatus) => sqlEdge(setStatus({ id, status })),
      findById: (id: number) => sqlEdge(findById(id)),
      /** Expires what is due (all, or one user's plan); the ids expired, ascending. */
      expireDue: (scope: ExpiryScope | null = null) =>
        sqlEdge(Effect.map(expire({ scope }), (rows) => rows.map((r) => r.id).sort((a, b) => a - b))),
      list: (p: MembershipListParams, sync: SyncWindow | undefined) =>
        sqlEdge(listPage({
          sync,
          counter: counterTotal({ user_id: p.user_id, status: p.status, company_id: p.company_id, updated_since: sync?.since }),
          page: (window) => page({ p, sync, window }),
          count: count({ p, sync }),
          offset: pageOf(p, MEMBERSHIP_PAGE).offset
        }))
    } as const
  })
}) {
  static readonly layer = Layer.effect(MembershipsRepo, MembershipsRepo.make)
}
