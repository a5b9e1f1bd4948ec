// Guest-card import tasks: the only SQL over `card_tasks`. Claims use row locks with SKIP LOCKED
// and a lease, so any number of daemons share the queue and a dead daemon's task comes back.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import type { CardTask } from "../../schema/Guests.js"
import { AppConfig } from "../Config.js"
import { formatIso } from "../domain/time.js"

export const CARD_TASK_CHANNEL = "card_tasks"

export interface ClaimedCardTask {
  readonly id: number
  readonly task_id: string
  readonly matchmaker_id: number
  readonly company_id: number
  readonly image_hash: string
  readonly image: Uint8Array
  readonly overrides: Record<string, unknown>
  readonly attempts: number
  readonly client_app_key: string | null
}

interface TaskRow {
  readonly task_id: string
  readonly status: CardTask["status"]
  readonly created_at: Date
  readonly completed_at: Date | null
  readonly result: CardTask["result"] | null
  readonly error: string | null
}

export const makeCardTasksRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const { timeZone } = yield* AppConfig

  /** The open (pending/processing) task of this image and matchmaker, if any. */
  const findOpen = (matchmakerId: number, imageHash: string) =>
    Effect.map(
      sql<{ task_id: string; status: "pending" | "processing" }>`SELECT task_id, status FROM card_tasks
        WHERE matchmaker_id = ${matchmakerId} AND image_hash = ${imageHash} AND status IN ('pending', 'processing')`,
      (r) => Option.fromNullable(r[0])
    )

  /**
   * Stores a pending task unless one is open for the same image and matchmaker (a unique index
   * decides a race); returns the open task either way, and wakes the runners.
   */
  const enqueue = (input: {
    matchmaker_id: number
    company_id: number
    image_hash: string
    image: Uint8Array
    content_type: string
    overrides: Record<string, unknown>
    client_app_key: string | null
  }) =>
    Effect.gen(function*() {
      const taskId = "ct_" + randomBytes(12).toString("hex")
      const inserted = yield* sql<{ task_id: string; status: "pending" }>`INSERT INTO card_tasks
          (task_id, matchmaker_id, company_id, image_hash, image, content_type, overrides, client_app_key)
        VALUES (${taskId}, ${input.matchmaker_id}, ${input.company_id}, ${input.image_hash}, ${Buffer.from(input.image)},
          ${input.content_type}, ${JSON.stringify(input.overrides)}::jsonb, ${input.client_app_key})
        ON CONFLICT (matchmaker_id, image_hash) WHERE status IN ('pending', 'processing') DO NOTHING
        RETURNING task_id, status`
      if (inserted[0] !== undefined) {
        // pg_notify rather than PgClient.notify: the latter binds the payload to `NOTIFY ch, $1`,
        // which PostgreSQL refuses (NOTIFY takes no parameters).
        yield* sql`SELECT pg_notify(${CARD_TASK_CHANNEL}, ${inserted[0].task_id})`
        return { ...inserted[0], created: true }
      }
      const open = yield* findOpen(input.matchmaker_id, input.image_hash)
      // The open task finished between the insert and this read: enqueue again.
      return Option.isSome(open) ? { ...open.value, created: false } : yield* Effect.dieMessage("card task vanished; retry")
    })

  const find = (taskId: string) =>
    Effect.map(
      sql<TaskRow>`SELECT task_id, status, created_at, completed_at, result, error FROM card_tasks WHERE task_id = ${taskId}`,
      (r) => Option.map(Option.fromNullable(r[0]), (row): CardTask => ({
        task_id: row.task_id,
        status: row.status,
        created_at: formatIso(row.created_at, timeZone),
        completed_at: row.completed_at === null ? null : formatIso(row.completed_at, timeZone),
        ...(row.status === "done" && row.result !== null ? { result: row.result } : {}),
        ...(row.status === "failed" ? { error: row.error ?? "failed" } : {})
      }))
    )

  /** Claims the oldest claimable task (pending, or processing with an expired lease). */
  const claim = (worker: string, nowMs: number, leaseMs: number) =>
    Effect.map(
      sql<Omit<ClaimedCardTask, "image"> & { image: Buffer }>`UPDATE card_tasks SET status = 'processing', attempts = attempts + 1,
          locked_by = ${worker}, lease_until = to_timestamp(${(nowMs + leaseMs) / 1000}),
          started_at = coalesce(started_at, to_timestamp(${nowMs / 1000}))
        WHERE id = (
          SELECT id FROM card_tasks
          WHERE status = 'pending' OR (status = 'processing' AND lease_until < to_timestamp(${nowMs / 1000}))
          ORDER BY created_at, id
          FOR UPDATE SKIP LOCKED
          LIMIT 1)
        RETURNING id::int AS id, task_id, matchmaker_id::int AS matchmaker_id, company_id::int AS company_id, image_hash,
          image, overrides, attempts, client_app_key`,
      (r) => Option.map(Option.fromNullable(r[0]), (t) => ({ ...t, image: new Uint8Array(t.image) }))
    )

  /** Locks the task if this worker still holds it; call inside the finishing transaction. */
  const lockHeld = (id: number, worker: string) =>
    Effect.map(
      sql<{ id: number }>`SELECT id::int AS id FROM card_tasks WHERE id = ${id} AND status = 'processing' AND locked_by = ${worker} FOR UPDATE`,
      (r) => r.length > 0
    )

  const finish = (id: number, outcome: { status: "done"; result: Record<string, unknown>; guest_id: number | null } | { status: "failed"; error: string }) =>
    outcome.status === "done"
      ? sql`UPDATE card_tasks SET status = 'done', result = ${JSON.stringify(outcome.result)}::jsonb, guest_id = ${outcome.guest_id},
          completed_at = now(), lease_until = NULL, image = ''::bytea WHERE id = ${id}`
      : sql`UPDATE card_tasks SET status = 'failed', error = ${outcome.error}, completed_at = now(), lease_until = NULL,
          image = ''::bytea WHERE id = ${id}`

  /** Gives a claimed task back to the queue (shutdown while it was being worked on). */
  const release = (id: number, worker: string) =>
    sql`UPDATE card_tasks SET status = 'pending', locked_by = NULL, lease_until = NULL, attempts = greatest(attempts - 1, 0)
      WHERE id = ${id} AND status = 'processing' AND locked_by = ${worker}`

  return { findOpen, enqueue, find, claim, lockHeld, finish, release } as const
})

export class CardTasksRepo extends Context.Tag("CardTasks/Repo")<CardTasksRepo, Effect.Effect.Success<typeof makeCardTasksRepo>>() {}
export const CardTasksRepoLive = Layer.effect(CardTasksRepo, makeCardTasksRepo)
