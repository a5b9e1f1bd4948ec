// Follow-up plans and tasks: the only SQL over `follow_up_plans` and `follow_up_tasks`. The lock is
// one statement (no transaction, no row-lock queue behind a loser); generation is an idempotent
// INSERT … ON CONFLICT DO NOTHING on the (plan, day) key; a list page and a detail are one query each.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { pageOf } from "../../schema/Common.js"
import {
  FOLLOW_UP_PAGE,
  type FollowUpTask,
  FollowUpTaskListItem,
  FollowUpTaskListParams,
  MatchmakerBrief,
  TaskResult,
  TaskStatus,
  TaskType
} from "../../schema/FollowUps.js"
import { Education, Gender, IncomeLevel, MaritalStatus, RequirementTags, YesNo } from "../../schema/Guests.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { SyncWindow } from "../domain/sync.js"
import { CountRow, Instant, IsoTimestamp, Timestamp } from "./rows.js"
import { listPage, pageTail, sinceFilter, sqlEdge, syncColumns, SyncKeyFields } from "./sqlHelpers.js"

const N = <S extends Schema.Top>(s: S) => Schema.NullOr(s)

/** Seconds since the epoch for `to_timestamp`: the service's clock, so tests can move it. */
const at = (ms: number) => ms / 1000

/** The status a client sees (a dispatched task whose lease ran out is pending again; see domain/followUp.ts). */
const effectiveStatus = (sql: SqlClient.SqlClient, cutoffMs: number) =>
  sql`CASE WHEN t.status = 'dispatched' AND t.dispatched_at < to_timestamp(${at(cutoffMs)}) THEN 'pending' ELSE t.status END`

// The list item's own fields as selected; its two briefs come flattened (the service builds them).
const { guest_brief: _guestBrief, matchmaker_brief: _matchmakerBrief, ...taskFields } = FollowUpTaskListItem.fields

const ListRow = Schema.Struct({
  ...taskFields,
  gender: Gender,
  age: N(Schema.Int),
  native_place_code: N(Schema.String),
  education: N(Education),
  occupation: N(Schema.String),
  matchmaker: N(MatchmakerBrief),
  total_count: Schema.optional(Schema.Int),
  ...SyncKeyFields
})
export type FollowUpListRow = typeof ListRow.Type

/** The guest of a task as stored (coded answers as text; the service turns them into numbers). */
const StoredGuest = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  gender: Gender,
  age: N(Schema.Int),
  height: N(Schema.Int),
  weight: N(Schema.Int),
  education: N(Education),
  income_level: N(IncomeLevel),
  income_amount: N(Schema.Int),
  family_income_amount: N(Schema.Int),
  family_income_level: N(IncomeLevel),
  occupation: N(Schema.String),
  workplace: N(Schema.String),
  native_place: N(Schema.String),
  native_place_code: N(Schema.String),
  marital_status: N(MaritalStatus),
  has_children: N(YesNo),
  has_car: N(YesNo),
  has_house: N(YesNo),
  hobbies: N(Schema.String),
  personality: N(Schema.String),
  self_intro: N(Schema.String),
  photos: Schema.Array(Schema.String),
  req_age_min: N(Schema.Int),
  req_age_max: N(Schema.Int),
  req_height_min: N(Schema.Int),
  req_weight_min: N(Schema.Int),
  req_weight_max: N(Schema.Int),
  req_education_min: N(Schema.Int),
  req_income_amount: N(Schema.Int),
  req_income_text: N(Schema.String),
  req_location: N(Schema.String),
  req_location_codes: Schema.Array(Schema.String),
  req_housing: N(Schema.String),
  req_health: N(Schema.String),
  requirement: N(Schema.String),
  requirement_tags: N(RequirementTags),
  company_id: Schema.Int
})
export type StoredGuest = typeof StoredGuest.Type

const StoredMatchmaker = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  phone: N(Schema.String),
  wechat: N(Schema.String),
  wechat_id: N(Schema.String),
  avatar: N(Schema.String),
  company_id: N(Schema.Int),
  company_name: N(Schema.String),
  cert_level: Schema.String,
  guest_count: Schema.Int,
  match_count: Schema.Int
})

const DetailRow = Schema.Struct({
  id: Schema.Int,
  follow_up_id: Schema.Int,
  guest_id: Schema.Int,
  company_id: Schema.Int,
  task_type: TaskType,
  task_day: Schema.Int,
  scheduled_date: Schema.String,
  status: TaskStatus,
  dispatched_to: N(Schema.String),
  dispatched_at: N(IsoTimestamp),
  finished_at: N(IsoTimestamp),
  result: TaskResult,
  guest: StoredGuest,
  matchmaker: N(StoredMatchmaker),
  already_recommended_guest_ids: Schema.Array(Schema.Int),
  history_match_count: Schema.Int
})
export type FollowUpDetailRow = typeof DetailRow.Type

const isFinal = (status: TaskStatus) => status === "completed" || status === "failed" || status === "skipped"

/** The task record of a detail row, as GET /follow-up/tasks/{id} shows it (its `task`). */
export const taskRecord = (row: FollowUpDetailRow): typeof FollowUpTask.Type => ({
  id: row.id,
  follow_up_id: row.follow_up_id,
  guest_id: row.guest_id,
  company_id: row.company_id,
  task_type: row.task_type,
  task_day: row.task_day,
  scheduled_date: row.scheduled_date,
  status: row.status,
  dispatched_to: row.dispatched_to,
  dispatched_at: row.dispatched_at,
  finished_at: isFinal(row.status) ? row.finished_at : null,
  result: isFinal(row.status) ? row.result : null
})

/** The lock state the transition rules read (domain/followUp.ts). */
const LockRow = Schema.Struct({
  status: TaskStatus,
  dispatched_to: N(Schema.String),
  dispatched_at: N(Instant)
})

const DispatchedRow = Schema.Struct({
  id: Schema.Int,
  dispatched_at: IsoTimestamp,
  dispatched_to: Schema.String,
  idempotent: Schema.Boolean
})

/** A completed task as its event reports it. */
const CompletedRow = Schema.Struct({
  id: Schema.Int,
  follow_up_id: Schema.Int,
  guest_id: Schema.Int,
  company_id: Schema.Int,
  task_type: TaskType,
  task_day: Schema.Int,
  scheduled_date: Schema.String,
  dispatched_to: Schema.String,
  matched_guest_id: N(Schema.Int),
  match_score: N(Schema.Number),
  share_link: N(Schema.String),
  share_channel: N(Schema.String),
  extra: N(Schema.Record(Schema.String, Schema.Unknown)),
  finished_at: IsoTimestamp
})
export type CompletedRow = typeof CompletedRow.Type

export const PlanRow = Schema.Struct({
  id: Schema.Int,
  guest_id: Schema.Int,
  guest_name: Schema.String,
  matchmaker_id: N(Schema.Int),
  task_type: TaskType,
  start_date: Schema.String,
  days: Schema.Array(Schema.Int),
  next_date: N(Schema.String),
  task_count: Schema.Int,
  created_at: Timestamp
})
export type PlanRow = typeof PlanRow.Type

const NewPlan = Schema.Struct({
  guestId: Schema.Int,
  taskType: TaskType,
  startDate: Schema.String,
  days: Schema.Array(Schema.Int),
  /** The first scheduled date (start + first day − 1): where generation starts. */
  firstDate: Schema.String
})
export type NewPlan = typeof NewPlan.Type

const CompleteInput = Schema.Struct({
  matched_guest_id: N(Schema.Int),
  match_score: N(Schema.Number),
  share_link: N(Schema.String),
  share_channel: N(Schema.String),
  extra: N(Schema.Record(Schema.String, Schema.Unknown))
})
export type CompleteInput = typeof CompleteInput.Type

/** Plans due for generation are taken this many at a time (several daemons split them). */
export const GENERATE_BATCH = 500

/** A scoped read's companies (DECISIONS §14); null: every company. */
const CompaniesParam = Schema.NullOr(Schema.Array(Schema.Int))
type Companies = typeof CompaniesParam.Type

const GenerateRow = Schema.Struct({ created: Schema.Array(Schema.Int), plans: Schema.Int })

export class FollowUpsRepo extends Context.Service<FollowUpsRepo>()("FollowUps/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** `AND <column> = ANY (...)` for a scoped read (DECISIONS §14), nothing for an unscoped one. */
    const inCompanies = (companies: Companies, column: string) =>
      companies === null ? sql`` : sql`AND ${sql.literal(column)} = ANY (${companies}::bigint[])`

    const listWhere = (
      p: FollowUpTaskListParams,
      date: string,
      cutoffMs: number,
      sync: SyncWindow | undefined,
      companies: Companies
    ) => {
      const cutoff = sql`to_timestamp(${at(cutoffMs)})`
      const status = p.status ?? "pending"
      return sql.and([
        sql`t.scheduled_date = ${date}::date`,
        status === "pending"
          ? sql`(t.status = 'pending' OR (t.status = 'dispatched' AND t.dispatched_at < ${cutoff}))`
          : status === "dispatched"
          ? sql`t.status = 'dispatched' AND t.dispatched_at >= ${cutoff}`
          : sql`t.status = ${status}`,
        ...(p.task_type !== undefined ? [sql`t.task_type = ${p.task_type}`] : []),
        ...(p.company_id !== undefined ? [sql`t.company_id = ${p.company_id}`] : []),
        ...(companies !== null ? [sql`t.company_id = ANY (${companies}::bigint[])`] : []),
        ...sinceFilter(sql, sync, "t.updated_at")
      ])
    }

    const ListRequest = Schema.Struct({
      params: Schema.toType(FollowUpTaskListParams),
      date: Schema.String,
      cutoffMs: Schema.Number,
      sync: Schema.UndefinedOr(SyncWindow),
      companies: CompaniesParam
    })

    // The page is chosen on the task table alone (its indexes), then joined: the joins cost one
    // page, not every matching task.
    const page = SqlSchema.findAll({
      Request: Schema.Struct({ ...ListRequest.fields, window: Schema.Boolean }),
      Result: ListRow,
      execute: ({ companies, cutoffMs, date, params, sync, window }) => {
        const { offset, pageSize } = pageOf(params, FOLLOW_UP_PAGE)
        return sql`WITH page AS (
            SELECT t.id, t.plan_id, t.guest_id, t.company_id, t.matchmaker_id, t.task_type, t.task_day, t.scheduled_date,
              ${effectiveStatus(sql, cutoffMs)} AS status, t.updated_at, ${syncColumns(sql, "t.updated_at", "t.id")}
              ${window ? sql`, count(*) OVER ()::int AS total_count` : sql``}
            FROM follow_up_tasks t ${
          pageTail(sql, {
            sync,
            where: listWhere(params, date, cutoffMs, sync, companies),
            at: "t.updated_at",
            id: "t.id",
            offsetOrder: "t.scheduled_date, t.id",
            pageSize,
            offset
          })
        })
          SELECT p.id::int AS id, p.plan_id::int AS follow_up_id, p.guest_id::int AS guest_id, g.name AS guest_name,
            p.company_id::int AS company_id, p.task_type, p.task_day, p.scheduled_date::text AS scheduled_date, p.status,
            g.gender, g.age, g.native_place_code, g.education, g.occupation,
            CASE WHEN m.id IS NULL THEN NULL ELSE json_build_object('id', m.id, 'name', m.name, 'company_name', c.name,
              'wechat', m.wechat, 'wechat_id', m.wechat_id) END AS matchmaker,
            ${window ? sql`p.total_count,` : sql``} p.sync_at, p.sync_id
          FROM page p JOIN guests g ON g.id = p.guest_id
          LEFT JOIN matchmakers m ON m.id = p.matchmaker_id LEFT JOIN companies c ON c.id = m.company_id
          ORDER BY ${sync === undefined ? sql`p.scheduled_date, p.id` : sql`p.updated_at, p.id`}`
      }
    })
    const count = SqlSchema.findAll({
      Request: ListRequest,
      Result: CountRow,
      execute: ({ companies, cutoffMs, date, params, sync }) =>
        sql`SELECT count(*)::int AS n FROM follow_up_tasks t WHERE ${listWhere(params, date, cutoffMs, sync, companies)}`
    })

    const detail = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, cutoffMs: Schema.Number, companies: CompaniesParam }),
      Result: DetailRow,
      execute: ({ companies, cutoffMs, id }) =>
        sql`SELECT t.id::int AS id, t.plan_id::int AS follow_up_id, t.guest_id::int AS guest_id, t.company_id::int AS company_id,
            t.task_type, t.task_day, t.scheduled_date::text AS scheduled_date, s.status,
            CASE WHEN s.status = 'pending' THEN NULL ELSE t.dispatched_to END AS dispatched_to,
            CASE WHEN s.status = 'pending' THEN NULL ELSE t.dispatched_at END AS dispatched_at,
            t.finished_at,
            json_build_object('matched_guest_id', t.matched_guest_id, 'match_score', t.match_score, 'share_link', t.share_link,
              'share_channel', t.share_channel, 'extra', t.extra, 'error_code', t.error_code, 'error_msg', t.error_msg,
              'reason', t.skip_reason) AS result,
            json_build_object('id', g.id, 'name', g.name, 'gender', g.gender, 'age', g.age, 'height', g.height,
              'weight', g.weight, 'education', g.education, 'income_level', g.income_level, 'income_amount', g.income_amount,
              'family_income_amount', g.family_income_amount, 'family_income_level', g.family_income_level,
              'occupation', g.occupation, 'workplace', g.workplace, 'native_place', g.native_place,
              'native_place_code', g.native_place_code, 'marital_status', g.marital_status, 'has_children', g.has_children,
              'has_car', g.has_car, 'has_house', g.has_house, 'hobbies', g.hobbies, 'personality', g.personality,
              'self_intro', g.self_intro, 'photos', g.photos, 'req_age_min', g.req_age_min, 'req_age_max', g.req_age_max,
              'req_height_min', g.req_height_min, 'req_weight_min', g.req_weight_min, 'req_weight_max', g.req_weight_max,
              'req_education_min', g.req_education_min, 'req_income_amount', g.req_income_amount,
              'req_income_text', g.req_income_text, 'req_location', g.req_location,
              'req_location_codes', g.req_location_codes, 'req_housing', g.req_housing, 'req_health', g.req_health,
              'requirement', g.requirement, 'requirement_tags', g.requirement_tags, 'company_id', g.company_id) AS guest,
            CASE WHEN m.id IS NULL THEN NULL ELSE json_build_object('id', m.id, 'name', m.name, 'phone', m.phone,
              'wechat', m.wechat, 'wechat_id', m.wechat_id, 'avatar', m.avatar, 'company_id', m.company_id,
              'company_name', c.name, 'cert_level', m.cert_level, 'guest_count', m.guest_count,
              'match_count', m.match_count) END AS matchmaker,
            ARRAY(SELECT r.matched_guest_id::int FROM follow_up_tasks r
              WHERE r.plan_id = t.plan_id AND r.status = 'completed' AND r.matched_guest_id IS NOT NULL
              GROUP BY r.matched_guest_id ORDER BY min(r.finished_at), min(r.id)) AS already_recommended_guest_ids,
            (SELECT count(*)::int FROM matches x WHERE x.guest_a_id = t.guest_id OR x.guest_b_id = t.guest_id)
              AS history_match_count
          FROM follow_up_tasks t
          CROSS JOIN LATERAL (SELECT ${effectiveStatus(sql, cutoffMs)} AS status) s
          JOIN guests g ON g.id = t.guest_id
          LEFT JOIN matchmakers m ON m.id = t.matchmaker_id LEFT JOIN companies c ON c.id = m.company_id
          WHERE t.id = ${id} ${inCompanies(companies, "t.company_id")}`
    })

    /**
     * The lock, in one statement. `due` selects the row only while the caller may take it
     * (pending; or dispatched to the caller; or dispatched with the lease run out) and locks it:
     * callers that arrive while another statement holds the row wait for that statement alone,
     * then re-check the condition against the row it committed and, losing, lock nothing. Rows
     * that fail the condition in the statement's snapshot are never locked at all, so losers do
     * not queue. The old values read by `due` tell a holder's repeat (the same lock, kept as it
     * is) from a new lock.
     */
    const dispatchRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, caller: Schema.String, nowMs: Schema.Number, leaseMs: Schema.Number }),
      Result: DispatchedRow,
      execute: ({ caller, id, leaseMs, nowMs }) => {
        const cutoff = sql`to_timestamp(${at(nowMs - leaseMs)})`
        return sql`WITH due AS (
            SELECT id, status, dispatched_to, dispatched_at FROM follow_up_tasks
            WHERE id = ${id} AND (status = 'pending'
              OR (status = 'dispatched' AND (dispatched_to = ${caller} OR dispatched_at < ${cutoff})))
            FOR UPDATE),
          held AS (
            SELECT id, (status = 'dispatched' AND dispatched_to = ${caller} AND dispatched_at >= ${cutoff}) AS repeat,
              dispatched_at FROM due)
          UPDATE follow_up_tasks t SET status = 'dispatched', dispatched_to = ${caller},
            dispatched_at = CASE WHEN held.repeat THEN held.dispatched_at ELSE to_timestamp(${at(nowMs)}) END,
            updated_at = now()
          FROM held WHERE t.id = held.id
          RETURNING t.id::int AS id, t.dispatched_at, t.dispatched_to, held.repeat AS idempotent`
      }
    })

    const lockState = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, companies: CompaniesParam }),
      Result: LockRow,
      execute: ({ companies, id }) =>
        sql`SELECT status, dispatched_to, dispatched_at FROM follow_up_tasks WHERE id = ${id} ${inCompanies(companies, "company_id")}`
    })

    const completeRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, caller: Schema.String, input: CompleteInput, nowMs: Schema.Number }),
      Result: CompletedRow,
      execute: ({ caller, id, input, nowMs }) =>
        sql`UPDATE follow_up_tasks SET status = 'completed', matched_guest_id = ${input.matched_guest_id},
            match_score = ${input.match_score}, share_link = ${input.share_link}, share_channel = ${input.share_channel},
            extra = ${input.extra === null ? null : JSON.stringify(input.extra)}::jsonb,
            finished_at = to_timestamp(${at(nowMs)}), updated_at = now()
          WHERE id = ${id} AND status = 'dispatched' AND dispatched_to = ${caller}
          RETURNING id::int AS id, plan_id::int AS follow_up_id, guest_id::int AS guest_id, company_id::int AS company_id,
            task_type, task_day, scheduled_date::text AS scheduled_date, dispatched_to,
            matched_guest_id::int AS matched_guest_id, match_score, share_link, share_channel, extra, finished_at`
    })

    const failRow = SqlSchema.findOneOption({
      Request: Schema.Struct({
        id: Schema.Int,
        caller: Schema.String,
        error_code: N(Schema.String),
        error_msg: N(Schema.String),
        nowMs: Schema.Number
      }),
      Result: Schema.Struct({ id: Schema.Int }),
      execute: ({ caller, error_code, error_msg, id, nowMs }) =>
        sql`UPDATE follow_up_tasks SET status = 'failed', error_code = ${error_code}, error_msg = ${error_msg},
            finished_at = to_timestamp(${at(nowMs)}), updated_at = now()
          WHERE id = ${id} AND status = 'dispatched' AND dispatched_to = ${caller}
          RETURNING id::int AS id`
    })

    const skipRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, reason: N(Schema.String), nowMs: Schema.Number }),
      Result: Schema.Struct({ id: Schema.Int }),
      execute: ({ id, nowMs, reason }) =>
        sql`UPDATE follow_up_tasks SET status = 'skipped', skip_reason = ${reason},
            finished_at = to_timestamp(${at(nowMs)}), updated_at = now()
          WHERE id = ${id} AND status IN ('pending', 'dispatched')
          RETURNING id::int AS id`
    })

    const guestExists = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.Int, companies: CompaniesParam }),
      Result: Schema.Struct({ id: Schema.Int }),
      execute: ({ companies, id }) => sql`SELECT id::int AS id FROM guests WHERE id = ${id} ${inCompanies(companies, "company_id")}`
    })

    // The guest's matchmaker is the plan's, as it is when the plan is made (DECISIONS §7).
    const insertPlan = SqlSchema.findOneOption({
      Request: NewPlan,
      Result: Schema.Struct({ id: Schema.Int }),
      execute: (plan) =>
        sql`INSERT INTO follow_up_plans (guest_id, matchmaker_id, task_type, start_date, days, next_date)
          SELECT g.id, g.matchmaker_id, ${plan.taskType}, ${plan.startDate}::date, ${plan.days}::int[], ${plan.firstDate}::date
          FROM guests g WHERE g.id = ${plan.guestId}
          RETURNING id::int AS id`
    })

    const plans = SqlSchema.findAll({
      Request: Schema.Struct({ guestId: N(Schema.Int), companies: CompaniesParam }),
      Result: PlanRow,
      execute: ({ companies, guestId }) =>
        sql`SELECT p.id::int AS id, p.guest_id::int AS guest_id, g.name AS guest_name, p.matchmaker_id::int AS matchmaker_id,
            p.task_type, p.start_date::text AS start_date, p.days, p.next_date::text AS next_date,
            (SELECT count(*)::int FROM follow_up_tasks t WHERE t.plan_id = p.id) AS task_count, p.created_at
          FROM follow_up_plans p JOIN guests g ON g.id = p.guest_id
          WHERE ${
          sql.and([
            ...(guestId === null ? [] : [sql`p.guest_id = ${guestId}`]),
            ...(companies === null ? [] : [sql`g.company_id = ANY (${companies}::bigint[])`])
          ])
        }
          ORDER BY p.id DESC`
    })

    /**
     * One batch of due plans: each day scheduled on or before `today` that has no task gets one
     * (past days included: a plan made with an earlier start, or a daemon that was down, catches
     * up), and the plan's `next_date` moves past today. Plans another daemon is generating are
     * skipped (SKIP LOCKED); the unique (plan, day) key would refuse a second task anyway.
     */
    const generateBatch = SqlSchema.findOne({
      Request: Schema.Struct({ today: Schema.String, planId: N(Schema.Int) }),
      Result: GenerateRow,
      execute: ({ planId, today }) =>
        sql`WITH due AS (
            SELECT id FROM follow_up_plans
            WHERE ${sql.and([sql`next_date <= ${today}::date`, ...(planId === null ? [] : [sql`id = ${planId}`])])}
            ORDER BY next_date, id LIMIT ${GENERATE_BATCH} FOR UPDATE SKIP LOCKED),
          created AS (
            INSERT INTO follow_up_tasks (plan_id, guest_id, company_id, matchmaker_id, task_type, task_day, scheduled_date)
            SELECT p.id, p.guest_id, g.company_id, p.matchmaker_id, p.task_type, d.day, p.start_date + d.day - 1
            FROM due JOIN follow_up_plans p ON p.id = due.id JOIN guests g ON g.id = p.guest_id
            CROSS JOIN LATERAL unnest(p.days) AS d(day)
            WHERE p.start_date + d.day - 1 <= ${today}::date
            ON CONFLICT (plan_id, task_day) DO NOTHING
            RETURNING id),
          moved AS (
            UPDATE follow_up_plans p SET next_date = (
              SELECT min(p.start_date + d - 1) FROM unnest(p.days) AS d WHERE p.start_date + d - 1 > ${today}::date)
            FROM due WHERE p.id = due.id
            RETURNING 1)
          SELECT ARRAY(SELECT id::int FROM created ORDER BY id) AS created, (SELECT count(*)::int FROM moved) AS plans`
    })

    /** The tasks scheduled on `date` exactly, of every plan (the operator's `follow-up generate --date`). */
    const generateOnDate = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ created: Schema.Array(Schema.Int) }),
      execute: (date) =>
        sql`WITH created AS (
            INSERT INTO follow_up_tasks (plan_id, guest_id, company_id, matchmaker_id, task_type, task_day, scheduled_date)
            SELECT p.id, p.guest_id, g.company_id, p.matchmaker_id, p.task_type, d.day, p.start_date + d.day - 1
            FROM follow_up_plans p JOIN guests g ON g.id = p.guest_id
            CROSS JOIN LATERAL unnest(p.days) AS d(day)
            WHERE p.start_date <= ${date}::date AND p.start_date + d.day - 1 = ${date}::date
            ON CONFLICT (plan_id, task_day) DO NOTHING
            RETURNING id)
          SELECT ARRAY(SELECT id::int FROM created ORDER BY id) AS created`
    })

    return {
      /** A page of the scope's tasks (DECISIONS §14: by the task's company) and their exact total. */
      list: (scope: CompanyScope, params: FollowUpTaskListParams, date: string, cutoffMs: number, sync: SyncWindow | undefined) => {
        const companies = Scopes.companyIds(scope)
        return sqlEdge(listPage({
          sync,
          counter: undefined,
          page: (window) => page({ params, date, cutoffMs, sync, window, companies }),
          count: count({ params, date, cutoffMs, sync, companies }),
          offset: pageOf(params, FOLLOW_UP_PAGE).offset
        }))
      },
      /** A task of the scope with its guest and matchmaker; none outside it, as if unknown. */
      detail: (scope: CompanyScope, id: number, cutoffMs: number) => sqlEdge(detail({ id, cutoffMs, companies: Scopes.companyIds(scope) })),
      /** The new or repeated lock, or none when the caller may not take it (then read `lockState`). */
      dispatch: (id: number, caller: string, nowMs: number, leaseMs: number) => sqlEdge(dispatchRow({ id, caller, nowMs, leaseMs })),
      /** The task's lock state, if it is a task of the scope. */
      lockState: (scope: CompanyScope, id: number) => sqlEdge(lockState({ id, companies: Scopes.companyIds(scope) })),
      /** Completes a task the caller holds; none when it does not (call inside the unit of work that records the event). */
      complete: (id: number, caller: string, input: CompleteInput, nowMs: number) => sqlEdge(completeRow({ id, caller, input, nowMs })),
      fail: (id: number, caller: string, error: { error_code: string | null; error_msg: string | null }, nowMs: number) =>
        sqlEdge(Effect.map(failRow({ id, caller, ...error, nowMs }), Option.isSome)),
      skip: (id: number, reason: string | null, nowMs: number) => sqlEdge(Effect.map(skipRow({ id, reason, nowMs }), Option.isSome)),
      /** Whether the guest exists in the scope. */
      guestExists: (scope: CompanyScope, id: number) =>
        sqlEdge(Effect.map(guestExists({ id, companies: Scopes.companyIds(scope) }), Option.isSome)),
      insertPlan: (plan: NewPlan) => sqlEdge(Effect.map(insertPlan(plan), Option.map((r) => r.id))),
      /** The plans of the scope's guests (of one guest, or all). */
      plans: (scope: CompanyScope, guestId: number | null) => sqlEdge(plans({ guestId, companies: Scopes.companyIds(scope) })),
      /**
       * One batch of due plans (at most GENERATE_BATCH): the ids of the tasks created and the plans
       * visited; call it in the transaction that records their events, until fewer plans come back.
       */
      generateBatch: (today: string, planId: number | null = null) => sqlEdge(generateBatch({ today, planId })),
      /** The ids of the tasks created for `date`; call it in the transaction that records their events. */
      generateOnDate: (date: string) => sqlEdge(Effect.map(generateOnDate(date), (r) => r.created))
    } as const
  })
}) {
  static readonly layer = Layer.effect(FollowUpsRepo, FollowUpsRepo.make)
}
