// Guest-card import tasks: the only SQL over `card_tasks`. Claims use row locks with SKIP LOCKED
// and a lease, so any number of daemons share the queue and a dead daemon's task comes back. Rows
// are decoded by their schema at the boundary.
import { randomBytes } from "node:crypto"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"

import { CardTask } from "../../schema/Guests.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { Bytes, IsoTimestamp } from "./rows.js"
import { sqlEdge } from "./sqlHelpers.js"

export const CARD_TASK_CHANNEL = "card_tasks"

/** What a finished task recorded: the `result` of a done CardTask (schema/Guests.ts), stored as JSON. */
const TaskResult = Schema.Struct({
  method: Schema.Literals(["ai", "ocr"]),
  summary: Schema.String,
  completeness: Schema.Finite,
  saved: Schema.Boolean,
  guest_id: Schema.optional(Schema.Int)
})
export type TaskResult = typeof TaskResult.Type

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/** A task as a daemon claims it: everything needed to process it. */
const ClaimedRow = Schema.Struct({
  id: Schema.Int,
  task_id: Schema.String,
  matchmaker_id: Schema.Int,
  company_id: Schema.Int,
  image_hash: Schema.String,
  image: Bytes,
  overrides: JsonObject,
  attempts: Schema.Int,
  client_app_key: Schema.NullOr(Schema.String)
})
export type ClaimedCardTask = typeof ClaimedRow.Type

/** A task as its client polls it; instants in ISO form (SPEC §4.2). */
const TaskRow = Schema.Struct({
  task_id: Schema.String,
  status: CardTask.fields.status,
  created_at: IsoTimestamp,
  completed_at: Schema.NullOr(IsoTimestamp),
  result: Schema.NullOr(TaskResult),
  error: Schema.NullOr(Schema.String)
})

const OpenTask = Schema.Struct({ task_id: Schema.String, status: Schema.Literals(["pending", "processing"]) })

const NewTask = Schema.Struct({
  matchmaker_id: Schema.Int,
  company_id: Schema.Int,
  image_hash: Schema.String,
  image: Schema.Uint8Array,
  content_type: Schema.String,
  overrides: JsonObject,
  client_app_key: Schema.NullOr(Schema.String)
})
export type NewCardTask = typeof NewTask.Type

const Outcome = Schema.Union([
  Schema.Struct({ status: Schema.Literal("done"), result: TaskResult, guest_id: Schema.NullOr(Schema.Int) }),
  Schema.Struct({ status: Schema.Literal("failed"), error: Schema.String })
])
export type CardTaskOutcome = typeof Outcome.Type

const Holder = Schema.Struct({ id: Schema.Int, worker: Schema.String })

export class CardTasksRepo extends Context.Service<CardTasksRepo>()("CardTasks/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findOpenRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ matchmakerId: Schema.Int, imageHash: Schema.String }),
      Result: OpenTask,
      execute: ({ imageHash, matchmakerId }) =>
        sql`SELECT task_id, status FROM card_tasks
          WHERE matchmaker_id = ${matchmakerId} AND image_hash = ${imageHash} AND status IN ('pending', 'processing')`
    })

    const insert = SqlSchema.findOneOption({
      Request: Schema.Struct({ taskId: Schema.String, task: NewTask }),
      Result: Schema.Struct({ task_id: Schema.String, status: Schema.Literal("pending") }),
      execute: ({ task, taskId }) =>
        sql`INSERT INTO card_tasks
            (task_id, matchmaker_id, company_id, image_hash, image, content_type, overrides, client_app_key)
          VALUES (${taskId}, ${task.matchmaker_id}, ${task.company_id}, ${task.image_hash}, ${Buffer.from(task.image)},
            ${task.content_type}, ${JSON.stringify(task.overrides)}::jsonb, ${task.client_app_key})
          ON CONFLICT (matchmaker_id, image_hash) WHERE status IN ('pending', 'processing') DO NOTHING
          RETURNING task_id, status`
    })

    // pg_notify in the statement: NOTIFY itself takes no parameters.
    const notify = SqlSchema.void({
      Request: Schema.String,
      execute: (taskId) => sql`SELECT pg_notify(${CARD_TASK_CHANNEL}, ${taskId})`
    })

    const findRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ taskId: Schema.String, companies: Schema.NullOr(Schema.Array(Schema.Int)) }),
      Result: TaskRow,
      execute: ({ companies, taskId }) =>
        sql`SELECT task_id, status, created_at, completed_at, result, error FROM card_tasks WHERE task_id = ${taskId}
          ${companies === null ? sql`` : sql`AND company_id = ANY (${companies}::bigint[])`}`
    })

    const claimRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ worker: Schema.String, nowMs: Schema.Number, leaseMs: Schema.Number }),
      Result: ClaimedRow,
      execute: ({ leaseMs, nowMs, worker }) =>
        sql`UPDATE card_tasks SET status = 'processing', attempts = attempts + 1,
            locked_by = ${worker}, lease_until = to_timestamp(${(nowMs + leaseMs) / 1000}),
            started_at = coalesce(started_at, to_timestamp(${nowMs / 1000}))
          WHERE id = (
            SELECT id FROM card_tasks
            WHERE status = 'pending' OR (status = 'processing' AND lease_until < to_timestamp(${nowMs / 1000}))
            ORDER BY created_at, id
            FOR UPDATE SKIP LOCKED
            LIMIT 1)
          RETURNING id::int AS id, task_id, matchmaker_id::int AS matchmaker_id, company_id::int AS company_id, image_hash,
            image, overrides, attempts, client_app_key`
    })

    const lockRow = SqlSchema.findOneOption({
      Request: Holder,
      Result: Schema.Struct({ id: Schema.Int }),
      execute: ({ id, worker }) =>
        sql`SELECT id::int AS id FROM card_tasks WHERE id = ${id} AND status = 'processing' AND locked_by = ${worker} FOR UPDATE`
    })

    const finishRow = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Int, outcome: Outcome }),
      execute: ({ id, outcome }) =>
        outcome.status === "done"
          ? sql`UPDATE card_tasks SET status = 'done', result = ${JSON.stringify(outcome.result)}::jsonb, guest_id = ${outcome.guest_id},
              completed_at = now(), lease_until = NULL, image = ''::bytea WHERE id = ${id}`
          : sql`UPDATE card_tasks SET status = 'failed', error = ${outcome.error}, completed_at = now(), lease_until = NULL,
              image = ''::bytea WHERE id = ${id}`
    })

    const releaseRow = SqlSchema.void({
      Request: Holder,
      execute: ({ id, worker }) =>
        sql`UPDATE card_tasks SET status = 'pending', locked_by = NULL, lease_until = NULL, attempts = greatest(attempts - 1, 0)
          WHERE id = ${id} AND status = 'processing' AND locked_by = ${worker}`
    })

    const renewRow = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Int, worker: Schema.String, untilMs: Schema.Number }),
      execute: ({ id, untilMs, worker }) =>
        sql`UPDATE card_tasks SET lease_until = to_timestamp(${untilMs / 1000})
          WHERE id = ${id} AND status = 'processing' AND locked_by = ${worker}`
    })

    /** The open (pending/processing) task of this image and matchmaker, if any. */
    const findOpen = (matchmakerId: number, imageHash: string) => sqlEdge(findOpenRow({ matchmakerId, imageHash }))

    /**
     * Stores a pending task unless one is open for the same image and matchmaker (a unique index
     * decides a race); returns the open task either way, and wakes the runners.
     */
    const enqueue = Effect.fnUntraced(function*(task: NewCardTask) {
      const inserted = yield* insert({ taskId: "ct_" + randomBytes(12).toString("hex"), task })
      if (Option.isSome(inserted)) {
        yield* notify(inserted.value.task_id)
        return { ...inserted.value, created: true }
      }
      const open = yield* findOpenRow({ matchmakerId: task.matchmaker_id, imageHash: task.image_hash })
      // The open task finished between the insert and this read: enqueue again.
      return Option.isSome(open) ? { ...open.value, created: false } : yield* Effect.die(new Error("card task vanished; retry"))
    }, (effect) => sqlEdge(effect))

    /** The task as its client polls it, if it exists in the scope (DECISIONS §14: by the guest's company). */
    const find = (scope: CompanyScope, taskId: string) =>
      sqlEdge(Effect.map(
        findRow({ taskId, companies: Scopes.companyIds(scope) }),
        Option.map((row): CardTask => ({
          task_id: row.task_id,
          status: row.status,
          created_at: row.created_at,
          completed_at: row.completed_at,
          ...(row.status === "done" && row.result !== null ? { result: row.result } : {}),
          ...(row.status === "failed" ? { error: row.error ?? "failed" } : {})
        }))
      ))

    /** Claims the oldest claimable task (pending, or processing with an expired lease). */
    const claim = (worker: string, nowMs: number, leaseMs: number) => sqlEdge(claimRow({ worker, nowMs, leaseMs }))

    /** Locks the task if this worker still holds it; call inside the finishing transaction. */
    const lockHeld = (id: number, worker: string) => sqlEdge(Effect.map(lockRow({ id, worker }), Option.isSome))

    const finish = (id: number, outcome: CardTaskOutcome) => sqlEdge(finishRow({ id, outcome }))

    /** Gives a claimed task back to the queue (shutdown while it was being worked on). */
    const release = (id: number, worker: string) => sqlEdge(releaseRow({ id, worker }))

    /** Extends the lease of a task this worker still holds (the work is still running). */
    const renew = (id: number, worker: string, untilMs: number) => sqlEdge(renewRow({ id, worker, untilMs }))

    return { findOpen, enqueue, find, claim, lockHeld, finish, release, renew } as const
  })
}) {
  static readonly layer = Layer.effect(CardTasksRepo, CardTasksRepo.make)
}
