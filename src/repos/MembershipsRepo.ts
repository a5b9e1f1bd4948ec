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
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { SyncWindow } from "../domain/sync.js"
import { makeCounterTotal } from "./RowCountsRepo.js"
import { CountRow, Timestamp } from "./rows.js"
import { listPage, pageTail, sinceFilter, sqlEdge, syncColumns, SyncKeyFields } from "./sqlHelpers.js"

const MembershipRow = Schema.Struct({ ...Membership.fields, started_at: Timestamp, expire_at: Timestamp, created_at: Timestamp })
const MembershipPageRow = Schema.Struct({ ...MembershipRow.fields, total_count: Schema.optional(Schema.Int), ...SyncKeyFields })
const Companies = Schema.NullOr(Schema.Array(Schema.Int))
const ListRequest = Schema.Struct({
  p: Schema.toType(MembershipListParams),
  sync: Schema.UndefinedOr(SyncWindow),
  /** A scoped client's companies (DECISIONS §14): only memberships of their guests; null: all. */
  companies: Companies
})

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
    // A membership belongs to its guest's company (DECISIONS §14); one without a guest to none, so
    // it is outside every scope. The guests of the companies come from guests_company_created_idx,
    // their memberships from memberships_guest_idx (guest_id, id DESC), as the company_id filter's.
    const inScope = (companies: ReadonlyArray<number> | null) =>
      companies === null ? [] : [sql`m.guest_id IN (SELECT g.id FROM guests g WHERE g.company_id = ANY (${companies}::bigint[]))`]
    const where = ({ companies, p, sync }: typeof ListRequest.Type) =>
      sql.and([
        ...inScope(companies),
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
     * index: the second extends what the first made. None when the plan does not exist, or when
     * the active membership to renew is outside the scope (DECISIONS §14: a scoped client renews
     * only its companies' guests' memberships; the row is left as it was).
     */
    const upsert = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.Int, planId: Schema.Int, guestId: Schema.NullOr(Schema.Int), companies: Companies }),
      Result: SavedRow,
      execute: ({ companies, guestId, planId, userId }) =>
        sql`INSERT INTO memberships AS m (user_id, guest_id, plan_id, expire_at)
          SELECT ${userId}, ${guestId}, p.id, now() + make_interval(days => p.days) FROM membership_plans p WHERE p.id = ${planId}
          ON CONFLICT (user_id, plan_id) WHERE status = 'active' DO UPDATE
            SET expire_at = m.expire_at + (SELECT make_interval(days => p.days) FROM membership_plans p WHERE p.id = m.plan_id),
              guest_id = coalesce(EXCLUDED.guest_id, m.guest_id), updated_at = now()
            ${companies === null ? sql`` : sql`WHERE ${sql.and(inScope(companies))}`}
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
      Request: Schema.Struct({ id: Schema.Int, companies: Companies }),
      Result: MembershipRow,
      execute: ({ companies, id }) =>
        sql`SELECT ${cols} FROM memberships m JOIN membership_plans p ON p.id = m.plan_id WHERE ${
          sql.and([sql`m.id = ${id}`, ...inScope(companies)])
        }`
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
      execute: ({ companies, p, sync, window }) => {
        const { offset, pageSize } = pageOf(p, MEMBERSHIP_PAGE)
        return sql`SELECT ${cols}, ${syncColumns(sql, "m.updated_at", "m.id")}${
          window ? sql`, count(*) OVER ()::int AS total_count` : sql``
        }
          FROM memberships m JOIN membership_plans p ON p.id = m.plan_id ${
          pageTail(sql, {
            sync,
            where: where({ p, sync, companies }),
            at: "m.updated_at",
            id: "m.id",
            offsetOrder: "m.id DESC",
            pageSize,
            offset
          })
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
      /** Create-or-renew; none when the plan does not exist or the membership to renew is outside the scope. */
      upsert: (scope: CompanyScope, userId: number, planId: number, guestId: number | null) =>
        sqlEdge(upsert({ userId, planId, guestId, companies: Scopes.companyIds(scope) })),
      /** A membership's status, locked for the rest of the transaction. */
      lock: (id: number) => sqlEdge(lock(id)),
      setStatus: (id: number, status: MembershipStatus) => sqlEdge(setStatus({ id, status })),
      /** A membership of the scope; none when unknown or outside it (DECISIONS §14: as if it did not exist). */
      findById: (scope: CompanyScope, id: number) => sqlEdge(findById({ id, companies: Scopes.companyIds(scope) })),
      /** Expires what is due (all, or one user's plan); the ids expired, ascending. */
      expireDue: (scope: ExpiryScope | null = null) =>
        sqlEdge(Effect.map(expire({ scope }), (rows) => rows.map((r) => r.id).sort((a, b) => a - b))),
      /**
       * A page of the scope's memberships and the exact total: from the counters (status, user_id,
       * or none) only when the scope is every company; a scoped list counts with its filter (the
       * counters know no scope).
       */
      list: (scope: CompanyScope, p: MembershipListParams, sync: SyncWindow | undefined) => {
        const companies = Scopes.companyIds(scope)
        return sqlEdge(listPage({
          sync,
          counter: companies === null
            ? counterTotal({ user_id: p.user_id, status: p.status, company_id: p.company_id, updated_since: sync?.since })
            : undefined,
          page: (window) => page({ p, sync, window, companies }),
          count: count({ p, sync, companies }),
          offset: pageOf(p, MEMBERSHIP_PAGE).offset
        }))
      }
    } as const
  })
}) {
  static readonly layer = Layer.effect(MembershipsRepo, MembershipsRepo.make)
}
