// Work WeChat accounts, their associations and logs: the only SQL over those tables. Rows are
// decoded by their schema at the boundary; a taken unique value is the 400 it means.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"
import * as Struct from "effect/Struct"

import { pageOf } from "../../schema/Common.js"
import {
  Association,
  AssociationListParams,
  TargetType,
  WORK_WECHAT_PAGE,
  WorkWechat,
  WorkWechatCreate,
  type WorkWechatListParams,
  WorkWechatLog
} from "../../schema/WorkWechats.js"
import { DuplicateDeviceId, DuplicatePhone, DuplicateWechatNumber } from "../domain/errors.js"
import type { KeywordField } from "../domain/masking.js"
import { SyncWindow } from "../domain/sync.js"
import { type ListRequest, makeLoggedRecords } from "./loggedRecords.js"
import { StoredLogValues } from "./operationLogs.js"
import { CountRow, Timestamp } from "./rows.js"
import { containsPattern, keywordMatch, pageTail, sinceFilter, sqlEdge, syncColumns, SyncKeyFields, uncountedList } from "./sqlHelpers.js"

const taken = (field: string) => ({ message: `${field} is already used by another work WeChat account` })

/** The unique rules of an account, by constraint: a write that breaks one is the client's 400. */
const DUPLICATES: Readonly<Record<string, () => DuplicateWechatNumber | DuplicatePhone | DuplicateDeviceId>> = {
  work_wechats_wechat_number_key: () => new DuplicateWechatNumber(taken("wechat_number")),
  work_wechats_phone_key: () => new DuplicatePhone(taken("phone")),
  work_wechats_device_id_key: () => new DuplicateDeviceId(taken("device_id"))
}

/** An account as selected by ACCOUNT_COLUMNS: the contract's record, instants as platform-time text. */
const AccountRow = Schema.Struct({ ...WorkWechat.fields, created_at: Timestamp, updated_at: Timestamp })
const AccountPageRow = Schema.Struct({ ...AccountRow.fields, total_count: Schema.optional(Schema.Int), ...SyncKeyFields })
/** The columns an update may change, with the id and status, of a locked live account. */
const LockedAccount = WorkWechat.mapFields(Struct.pick([
  "id",
  "status",
  "admin_id",
  "wechat_number",
  "phone",
  "device_id",
  "wechat_nickname",
  "avatar",
  "qr_code",
  "remark"
]))

const AssociationPageRow = Schema.Struct({
  ...Association.fields,
  created_at: Timestamp,
  total_count: Schema.optional(Schema.Int),
  ...SyncKeyFields
})
const LogPageRow = Schema.Struct({
  ...WorkWechatLog.fields,
  ...StoredLogValues,
  created_at: Timestamp,
  total_count: Schema.optional(Schema.Int),
  ...SyncKeyFields
})

const IdRow = Schema.Struct({ id: Schema.Int })
const TargetRow = Schema.Struct({ target_id: Schema.Int })
const Ids = Schema.Array(Schema.Int)

const ACCOUNT_COLUMNS = `w.id::int AS id, w.admin_id::int AS admin_id, w.wechat_number, w.phone, w.device_id,
  w.wechat_nickname, w.avatar, w.qr_code, w.status, w.remark,
  (SELECT count(*)::int FROM work_wechat_associations a WHERE a.work_wechat_id = w.id) AS association_count,
  (SELECT count(*)::int FROM users u WHERE u.work_wechat_id = w.id) AS user_count,
  w.created_at, w.updated_at`

export class WorkWechatsRepo extends Context.Service<WorkWechatsRepo>()("WorkWechats/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // In id order, so two writes moving the same counts cannot deadlock; NO KEY UPDATE does not
    // wait for the KEY SHARE locks the users' foreign keys hold on the same rows.
    const lockCounted = SqlSchema.void({
      Request: Ids,
      execute: (ids) => sql`SELECT id FROM work_wechats WHERE id IN ${sql.in(ids)} ORDER BY id FOR NO KEY UPDATE`
    })

    const touch = SqlSchema.void({
      Request: Schema.Int,
      execute: (id) => sql`UPDATE work_wechats SET updated_at = now() WHERE id = ${id}`
    })

    const attachments = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Schema.Struct({ associations: Schema.Int, users: Schema.Int }),
      execute: (id) =>
        sql`SELECT
          (SELECT count(*)::int FROM work_wechat_associations WHERE work_wechat_id = ${id}) AS associations,
          (SELECT count(*)::int FROM users WHERE work_wechat_id = ${id}) AS users`
    })

    const records = makeLoggedRecords(sql, {
      table: "work_wechats",
      alias: "w",
      columns: ACCOUNT_COLUMNS,
      create: Schema.toType(WorkWechatCreate),
      row: AccountRow,
      pageRow: AccountPageRow,
      locked: {
        row: LockedAccount,
        columns: `id::int AS id, status, admin_id::int AS admin_id, wechat_number, phone, device_id, wechat_nickname, avatar,
          qr_code, remark`
      },
      duplicates: DUPLICATES,
      list: {
        limits: WORK_WECHAT_PAGE,
        where: (request: ListRequest<WorkWechatListParams, KeywordField<"work_wechat">>) => where(request)
      },
      logs: { table: "work_wechat_logs", owner: "work_wechat_id", limits: WORK_WECHAT_PAGE, pageRow: LogPageRow }
    })

    const keywordColumns = {
      wechat_number: sql`lower(w.wechat_number)`,
      phone: sql`w.phone`,
      device_id: sql`lower(w.device_id)`,
      wechat_nickname: sql`lower(w.wechat_nickname)`
    }
    const where = ({ params: p, searchable, sync }: ListRequest<WorkWechatListParams, KeywordField<"work_wechat">>) => {
      const kw = p.keyword?.trim() ? containsPattern(p.keyword.trim()) : undefined
      return sql.and([
        sql`w.deleted_at IS NULL`,
        ...(kw
          ? [
            // Every keyword field in one text, for the trigram index; then the fields this caller may search.
            sql`(lower(w.wechat_number) || ' ' || w.phone || ' ' || lower(coalesce(w.device_id, '')) || ' ' || lower(coalesce(w.wechat_nickname, ''))) LIKE ${kw}`,
            keywordMatch(sql, keywordColumns, searchable, kw)
          ]
          : []),
        ...(p.status ? [sql`w.status = ${p.status}`] : []),
        ...sinceFilter(sql, sync, "w.updated_at")
      ])
    }
    const targetKinds = SqlSchema.findAll({
      Request: Schema.Struct({ type: TargetType, ids: Ids }),
      Result: Schema.Struct({ id: Schema.Int, kind: Schema.String }),
      execute: ({ ids, type }) =>
        type === "matchmaker"
          ? sql`SELECT id::int AS id, 'matchmaker' AS kind FROM matchmakers WHERE id IN ${sql.in(ids)}`
          : sql`SELECT id::int AS id, company_type AS kind FROM companies WHERE id IN ${sql.in(ids)}`
    })

    /**
     * Of these target ids, which exist and which exist but are of the wrong kind: `company` needs
     * a company of type normal, `franchisee` one of type franchisee.
     */
    const checkTargets = (type: TargetType, ids: ReadonlyArray<number>) =>
      ids.length === 0
        ? Effect.succeed<{ missing: Array<number>; wrongKind: Array<number> }>({ missing: [], wrongKind: [] })
        : sqlEdge(Effect.map(targetKinds({ type, ids }), (rows) => {
          const kinds = new Map(rows.map((r) => [r.id, r.kind]))
          const want = type === "company" ? "normal" : type
          return {
            missing: ids.filter((id) => !kinds.has(id)),
            wrongKind: ids.filter((id) => kinds.has(id) && kinds.get(id) !== want)
          }
        }))

    const insertAssociations = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.Int, type: TargetType, ids: Ids, remark: Schema.NullOr(Schema.String) }),
      Result: TargetRow,
      execute: ({ accountId, ids, remark, type }) =>
        sql`INSERT INTO work_wechat_associations (work_wechat_id, target_type, target_id, remark)
          SELECT ${accountId}, ${type}, t, ${remark} FROM unnest(${[...ids]}::bigint[]) AS t
          ON CONFLICT (work_wechat_id, target_type, target_id) DO NOTHING
          RETURNING target_id::int AS target_id`
    })

    /** Inserts the associations that do not exist yet; returns the target ids inserted. */
    const associate = (accountId: number, type: TargetType, ids: ReadonlyArray<number>, remark: string | null) =>
      ids.length === 0
        ? Effect.succeed<Array<number>>([])
        : sqlEdge(Effect.map(insertAssociations({ accountId, type, ids, remark }), (rows) => rows.map((r) => r.target_id)))

    const deleteAssociation = SqlSchema.findOneOption({
      Request: Schema.Struct({ accountId: Schema.Int, type: TargetType, targetId: Schema.Int }),
      Result: IdRow,
      execute: ({ accountId, targetId, type }) =>
        sql`DELETE FROM work_wechat_associations
          WHERE work_wechat_id = ${accountId} AND target_type = ${type} AND target_id = ${targetId} RETURNING id::int AS id`
    })

    const selectTargets = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.Int, type: TargetType, ids: Schema.optional(Ids) }),
      Result: TargetRow,
      execute: ({ accountId, ids, type }) =>
        sql`SELECT target_id::int AS target_id FROM work_wechat_associations
          WHERE work_wechat_id = ${accountId} AND target_type = ${type}
          ${ids === undefined ? sql`` : sql`AND target_id IN ${sql.in(ids.length ? ids : [0])}`}
          ORDER BY target_id`
    })

    const moveRows = SqlSchema.findAll({
      Request: Schema.Struct({ from: Schema.Int, to: Schema.Int, type: TargetType, ids: Ids }),
      Result: TargetRow,
      execute: ({ from, ids, to, type }) =>
        sql`UPDATE work_wechat_associations a SET work_wechat_id = ${to}
          WHERE a.work_wechat_id = ${from} AND a.target_type = ${type} AND a.target_id IN ${sql.in(ids)}
            AND NOT EXISTS (SELECT 1 FROM work_wechat_associations d
                            WHERE d.work_wechat_id = ${to} AND d.target_type = ${type} AND d.target_id = a.target_id)
          RETURNING a.target_id::int AS target_id`
    })

    const AssociationsRequest = Schema.Struct({
      accountId: Schema.Int,
      params: Schema.toType(AssociationListParams),
      sync: Schema.UndefinedOr(SyncWindow)
    })
    const associationWhere = ({ accountId, params: p, sync }: typeof AssociationsRequest.Type) =>
      sql.and([
        sql`a.work_wechat_id = ${accountId}`,
        ...(p.target_type ? [sql`a.target_type = ${p.target_type}`] : []),
        ...sinceFilter(sql, sync, "a.updated_at")
      ])
    const associationPage = SqlSchema.findAll({
      Request: Schema.Struct({ ...AssociationsRequest.fields, window: Schema.Boolean }),
      Result: AssociationPageRow,
      execute: ({ window, ...request }) => {
        const { offset, pageSize } = pageOf(request.params, WORK_WECHAT_PAGE)
        return sql`SELECT a.id::int AS id, a.work_wechat_id::int AS work_wechat_id, a.target_type, a.target_id::int AS target_id,
            CASE WHEN a.target_type = 'matchmaker' THEN m.name ELSE c.name END AS target_name,
            a.remark, a.created_at, ${syncColumns(sql, "a.updated_at", "a.id")}${
          window ? sql`, count(*) OVER ()::int AS total_count` : sql``
        }
          FROM work_wechat_associations a
          LEFT JOIN matchmakers m ON a.target_type = 'matchmaker' AND m.id = a.target_id
          LEFT JOIN companies c ON a.target_type <> 'matchmaker' AND c.id = a.target_id
          ${
          pageTail(sql, {
            sync: request.sync,
            where: associationWhere(request),
            at: "a.updated_at",
            id: "a.id",
            offsetOrder: "a.id DESC",
            pageSize,
            offset
          })
        }`
      }
    })
    const associationCount = SqlSchema.findAll({
      Request: AssociationsRequest,
      Result: CountRow,
      execute: (request) => sql`SELECT count(*)::int AS n FROM work_wechat_associations a WHERE ${associationWhere(request)}`
    })

    const selectLive = SqlSchema.findAll({
      Request: Ids,
      Result: IdRow,
      execute: (ids) => sql`SELECT id::int AS id FROM work_wechats WHERE id IN ${sql.in(ids)} AND deleted_at IS NULL`
    })

    return {
      ...records,
      touch: (id: number) => sqlEdge(touch(id)),
      attachments: (id: number) => sqlEdge(attachments(id)),
      checkTargets,
      associate,
      disassociate: (accountId: number, type: TargetType, targetId: number) =>
        sqlEdge(Effect.map(deleteAssociation({ accountId, type, targetId }), Option.isSome)),
      /** Target ids of this type associated with the account (all, or among `ids`). */
      associatedTargets: (accountId: number, type: TargetType, ids?: ReadonlyArray<number>) =>
        sqlEdge(Effect.map(selectTargets({ accountId, type, ids }), (rows) => rows.map((r) => r.target_id))),
      /** Moves associations from one account to another; returns the target ids moved. */
      move: (from: number, to: number, type: TargetType, ids: ReadonlyArray<number>) =>
        ids.length === 0
          ? Effect.succeed<Array<number>>([])
          : sqlEdge(Effect.map(moveRows({ from, to, type, ids }), (rows) => rows.map((r) => r.target_id))),
      listAssociations: (accountId: number, params: AssociationListParams, sync: SyncWindow | undefined) => {
        const request = { accountId, params, sync }
        return uncountedList({ page: associationPage, count: associationCount }, request, pageOf(params, WORK_WECHAT_PAGE).offset)
      },
      /**
       * Locks the accounts whose user_count a write moves, before the write, for the rest of the
       * transaction: concurrent moves of one account's count then commit one after the other, each
       * event reading the count the previous one committed (DECISIONS §12).
       */
      lockCounted: (ids: ReadonlyArray<number>) => ids.length === 0 ? Effect.void : sqlEdge(lockCounted(ids)),
      /** Of these account ids, the live ones. */
      liveIds: (ids: ReadonlyArray<number>) =>
        ids.length === 0
          ? Effect.succeed(new Set<number>())
          : sqlEdge(Effect.map(selectLive(ids), (rows) => new Set(rows.map((r) => r.id))))
    } as const
  })
}) {
  static readonly layer = Layer.effect(WorkWechatsRepo, WorkWechatsRepo.make)
}
