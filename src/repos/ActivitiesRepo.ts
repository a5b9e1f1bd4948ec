// Activities and their registrations: the only SQL over `activities` and `activity_registrations`.
// A place is taken by one conditional UPDATE of the gender's counter, so concurrent registrations
// never overbook; the daemon's time moves are one set-based UPDATE each.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { Activity, ACTIVITY_PAGE, ActivityListParams, ActivityStatus, AuditStatus, Registration } from "../../schema/Activities.js"
import { pageOf } from "../../schema/Common.js"
import { genderSide } from "../domain/activities.js"
import { AlreadyRegistered } from "../domain/errors.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { SyncWindow } from "../domain/sync.js"
import { makeRecordedWrites } from "./recordedWrites.js"
import { makeCounterTotal } from "./RowCountsRepo.js"
import { CountRow, Timestamp } from "./rows.js"
import { listPage, onUniqueViolation, pageTail, sinceFilter, sqlEdge, syncColumns, SyncKeyFields } from "./sqlHelpers.js"

/** An `activities` row as selected by COLUMNS: the contract's record, instants as platform-time text. */
const ActivityRow = Schema.Struct({ ...Activity.fields, start_time: Timestamp, end_time: Timestamp, created_at: Timestamp })
const ActivityPageRow = Schema.Struct({ ...ActivityRow.fields, total_count: Schema.optional(Schema.Int), ...SyncKeyFields })
const Companies = Schema.NullOr(Schema.Array(Schema.Int))
const ListRequest = Schema.Struct({
  p: Schema.toType(ActivityListParams),
  sync: Schema.UndefinedOr(SyncWindow),
  /** A scoped client's companies (DECISIONS §14): only their activities; null: every company. */
  companies: Companies
})

const IdRow = Schema.Struct({ id: Schema.Int })

const COLUMNS = `id::int AS id, title, description, cover_url, address, start_time, end_time, male_quota, female_quota,
  male_fee::float8 AS male_fee, female_fee::float8 AS female_fee, status, audit_status, company_id::int AS company_id, created_at`

/** What an insert stores: the create body with its wall times read in the platform time zone. */
const ActivityInsert = Schema.Struct({
  title: Schema.String,
  address: Schema.String,
  start_time: Timestamp,
  end_time: Timestamp,
  company_id: Schema.Int,
  description: Schema.NullOr(Schema.String),
  cover_url: Schema.NullOr(Schema.String),
  male_quota: Schema.NullOr(Schema.Int),
  female_quota: Schema.NullOr(Schema.Int),
  male_fee: Schema.Number,
  female_fee: Schema.Number
})
export type ActivityInsert = typeof ActivityInsert.Type

const ActivityState = Schema.Struct({ id: Schema.Int, status: ActivityStatus, audit_status: AuditStatus })

const RegistrationRow = Schema.Struct({ ...Registration.fields, registered_at: Timestamp })

const RegistrationInsert = Schema.Struct({
  activity_id: Schema.Int,
  guest_id: Schema.Int,
  name: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  remark: Schema.NullOr(Schema.String),
  fee: Schema.Number
})
export type RegistrationInsert = typeof RegistrationInsert.Type

/** A second registration of the same guest is the client's 400 (DECISIONS §5). */
const mapAlreadyRegistered = onUniqueViolation({
  activity_registrations_guest_key: () => new AlreadyRegistered({ message: "the guest is already registered for this activity" })
})

const REGISTRATION_COLUMNS = `id::int AS registration_id, activity_id::int AS activity_id, guest_id::int AS guest_id, name,
  phone, remark, fee::float8 AS fee, registered_at`

export class ActivitiesRepo extends Context.Service<ActivitiesRepo>()("Activities/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(COLUMNS)
    /** The scope's condition (DECISIONS §14), on activities_company_idx (company_id, id DESC). */
    const inScope = (companies: ReadonlyArray<number> | null) =>
      companies === null ? [] : [sql`activities.company_id = ANY (${companies}::bigint[])`]
    const listWhere = ({ companies, p, sync }: typeof ListRequest.Type) =>
      sql.and([
        ...inScope(companies),
        ...(p.status ? [sql`status = ${p.status}`] : []),
        ...(p.company_id !== undefined ? [sql`company_id = ${p.company_id}`] : []),
        ...sinceFilter(sql, sync, "activities.updated_at")
      ])

    // The insert and its activity.created event in one statement (recordedWrites, issue 37): the
    // service checks the company first; nothing here reads before the write decides. The columns
    // are the insert's encoded form (wall times as platform-time text, as the insert always sent).
    const writes = makeRecordedWrites(sql, {
      table: "activities",
      columns: COLUMNS,
      row: ActivityRow,
      created: "activity.created",
      updated: "activity.updated",
      times: ["start_time", "end_time", "created_at"]
    })
    const encodeInsert = Schema.encodeEffect(ActivityInsert)
    const insert = (input: ActivityInsert) => Effect.flatMap(Effect.orDie(encodeInsert(input)), (encoded) => writes.insert(encoded))

    const findById = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, companies: Companies }),
      Result: ActivityRow,
      execute: ({ companies, id }) => sql`SELECT ${cols} FROM activities WHERE ${sql.and([sql`id = ${id}`, ...inScope(companies)])}`
    })

    const lockState = SqlSchema.findOneOption({
      Request: Schema.Int,
      Result: ActivityState,
      execute: (id) => sql`SELECT id::int AS id, status, audit_status FROM activities WHERE id = ${id} FOR UPDATE`
    })

    const setState = SqlSchema.findOne({
      Request: ActivityState,
      Result: ActivityRow,
      execute: ({ audit_status, id, status }) =>
        sql`UPDATE activities SET status = ${status}, audit_status = ${audit_status}, updated_at = now()
          WHERE id = ${id} RETURNING ${cols}`
    })

    /**
     * Takes one place of the gender's quota if the activity is registering and a place is left: the
     * row's lock orders concurrent takers, and each re-checks the counter it sees after the one
     * before commits, so exactly `quota` of them succeed. Returns the fee for that gender.
     */
    const takePlace = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, gender: Schema.Literals(["male", "female"]) }),
      Result: Schema.Struct({ fee: Schema.Number }),
      execute: ({ gender, id }) => {
        const side = genderSide(gender)
        const [registered, quota, fee] = [sql(side.registered), sql(side.quota), sql(side.fee)]
        return sql`UPDATE activities SET ${registered} = ${registered} + 1
          WHERE id = ${id} AND status = 'registering' AND (${quota} IS NULL OR ${registered} < ${quota})
          RETURNING ${fee}::float8 AS fee`
      }
    })

    /** Why a place could not be taken: the activity's status and whether the guest is registered. */
    const registrationState = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, guestId: Schema.Int }),
      Result: Schema.Struct({ status: ActivityStatus, registered: Schema.Boolean }),
      execute: ({ guestId, id }) =>
        sql`SELECT a.status, EXISTS (SELECT 1 FROM activity_registrations r WHERE r.activity_id = a.id AND r.guest_id = ${guestId})
          AS registered FROM activities a WHERE a.id = ${id}`
    })

    const insertRegistration = SqlSchema.findOne({
      Request: RegistrationInsert,
      Result: RegistrationRow,
      execute: (input) => sql`INSERT INTO activity_registrations ${sql.insert({ ...input })} RETURNING ${sql.literal(REGISTRATION_COLUMNS)}`
    })

    // The daemon's moves (DECISIONS §5, §7): set-based, and idempotent because each re-checks the
    // status it moves from; a second daemon running the same statement waits on the row locks,
    // re-reads the rows and finds nothing left to move.
    const start = SqlSchema.findAll({
      Request: Schema.Void,
      Result: IdRow,
      execute: () =>
        sql`UPDATE activities SET status = CASE WHEN end_time <= now() THEN 'ended' ELSE 'ongoing' END, updated_at = now()
          WHERE status = 'registering' AND start_time <= now() RETURNING id::int AS id`
    })
    const end = SqlSchema.findAll({
      Request: Schema.Void,
      Result: IdRow,
      execute: () =>
        sql`UPDATE activities SET status = 'ended', updated_at = now() WHERE status = 'ongoing' AND end_time <= now()
          RETURNING id::int AS id`
    })

    const page = SqlSchema.findAll({
      Request: Schema.Struct({ ...ListRequest.fields, window: Schema.Boolean }),
      Result: ActivityPageRow,
      execute: ({ companies, p, sync, window }) => {
        const { offset, pageSize } = pageOf(p, ACTIVITY_PAGE)
        return sql`SELECT ${cols}, ${syncColumns(sql, "activities.updated_at", "activities.id")}${
          window ? sql`, count(*) OVER ()::int AS total_count` : sql``
        } FROM activities ${
          pageTail(sql, {
            sync,
            where: listWhere({ p, sync, companies }),
            at: "activities.updated_at",
            id: "activities.id",
            offsetOrder: "activities.id DESC",
            pageSize,
            offset
          })
        }`
      }
    })
    const counterTotal = makeCounterTotal(sql, "activities", ["status", "company_id"])
    const count = SqlSchema.findAll({
      Request: ListRequest,
      Result: CountRow,
      execute: (request) => sql`SELECT count(*)::int AS n FROM activities WHERE ${listWhere(request)}`
    })

    return {
      /** Inserts an activity (a draft pending audit) and records its `activity.created` event, in one statement. */
      insert: (input: ActivityInsert) => sqlEdge(insert(input)),
      /** An activity of the scope; none when unknown or outside it (DECISIONS §14: as if it did not exist). */
      findById: (scope: CompanyScope, id: number) => sqlEdge(findById({ id, companies: Scopes.companyIds(scope) })),
      /** Status and audit of an activity, locked for the rest of the transaction. */
      lockState: (id: number) => sqlEdge(lockState(id)),
      setState: (state: typeof ActivityState.Type) => sqlEdge(setState(state)),
      /** The fee of the place taken, or none when no place could be taken (see registrationState). */
      takePlace: (id: number, gender: "male" | "female") => sqlEdge(Effect.map(takePlace({ id, gender }), Option.map((r) => r.fee))),
      registrationState: (id: number, guestId: number) => sqlEdge(registrationState({ id, guestId })),
      insertRegistration: (input: RegistrationInsert) => sqlEdge(insertRegistration(input).pipe(mapAlreadyRegistered)),
      /** registering → ongoing at start_time (→ ended when end_time has passed too); the ids moved. */
      startDue: sqlEdge(Effect.map(start(undefined), (rows) => rows.map((r) => r.id).sort((a, b) => a - b))),
      /** ongoing → ended at end_time; the ids moved. */
      endDue: sqlEdge(Effect.map(end(undefined), (rows) => rows.map((r) => r.id).sort((a, b) => a - b))),
      /**
       * A page of the scope's activities and the exact total: from the counters when the filter is
       * none or one of status, company_id and the scope is every company; a scoped list counts
       * with its filter (the counters know no scope).
       */
      list: (scope: CompanyScope, p: ActivityListParams, sync: SyncWindow | undefined) => {
        const companies = Scopes.companyIds(scope)
        return sqlEdge(listPage({
          sync,
          counter: companies === null
            ? counterTotal({ status: p.status, company_id: p.company_id, updated_since: sync?.since })
            : undefined,
          page: (window) => page({ p, sync, window, companies }),
          count: count({ p, sync, companies }),
          offset: pageOf(p, ACTIVITY_PAGE).offset
        }))
      }
    } as const
  })
}) {
  static readonly layer = Layer.effect(ActivitiesRepo, ActivitiesRepo.make)
}
