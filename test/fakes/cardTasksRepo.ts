// An in-memory CardTasksRepo over the fake database: the card-task queue with the real
// repository's rules — at most one open (pending or processing) task per matchmaker and image (a
// second enqueue answers the open one), claims oldest first with a lease (a task whose lease ran
// out is claimed again, its attempts counted), only the holder may finish or give a task back,
// a finished task drops its image. Checked against the real one by
// test/contracts/cardTasksRepo.contract.ts.
import { randomBytes } from "node:crypto"

import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import type { CardTask } from "../../schema/Guests.js"
import { PlatformTimeZone } from "../../src/Config.js"
import * as Scopes from "../../src/domain/scope.js"
import { formatIso } from "../../src/domain/time.js"
import { CardTasksRepo, type ClaimedCardTask } from "../../src/repos/CardTasksRepo.js"
import { type FakeCardTask, FakeDb, nextId, now } from "./db.js"

export const makeFakeCardTasksRepo = Effect.gen(function*() {
  const db = yield* FakeDb
  const rows = () => [...db.tables.cardTasks.values()]
  const isOpen = (t: FakeCardTask) => t.status === "pending" || t.status === "processing"
  const openOf = (matchmakerId: number, imageHash: string) =>
    Option.fromNullishOr(rows().find((t) => isOpen(t) && t.matchmaker_id === matchmakerId && t.image_hash === imageHash))
  const held = (id: number, worker: string) => {
    const t = db.tables.cardTasks.get(id)
    return t !== undefined && t.status === "processing" && t.locked_by === worker ? t : undefined
  }

  return CardTasksRepo.of({
    findOpen: (matchmakerId, imageHash) =>
      Effect.sync(() => Option.map(openOf(matchmakerId, imageHash), (t) => ({ task_id: t.task_id, status: t.status as "pending" }))),
    enqueue: (task) =>
      Effect.gen(function*() {
        const open = openOf(task.matchmaker_id, task.image_hash)
        if (Option.isSome(open)) {
          return { task_id: open.value.task_id, status: open.value.status as "pending" | "processing", created: false }
        }
        const row: FakeCardTask = {
          id: nextId(db, "cardTasks"),
          task_id: "ct_" + randomBytes(12).toString("hex"),
          matchmaker_id: task.matchmaker_id,
          company_id: task.company_id,
          image_hash: task.image_hash,
          image: new Uint8Array(task.image),
          content_type: task.content_type,
          overrides: structuredClone(task.overrides),
          client_app_key: task.client_app_key,
          status: "pending",
          attempts: 0,
          locked_by: null,
          lease_until: null,
          started_at: null,
          created_at: yield* now,
          completed_at: null,
          result: null,
          guest_id: null,
          error: null
        }
        db.tables.cardTasks.set(row.id, row)
        return { task_id: row.task_id, status: "pending" as const, created: true }
      }),
    find: (scope, taskId) =>
      Effect.map(
        PlatformTimeZone,
        (tz) =>
          Option.map(
            Option.fromNullishOr(rows().find((t) => t.task_id === taskId && Scopes.includes(scope, t.company_id))),
            (t): CardTask => ({
              task_id: t.task_id,
              status: t.status,
              created_at: formatIso(new Date(t.created_at), tz),
              completed_at: t.completed_at === null ? null : formatIso(new Date(t.completed_at), tz),
              ...(t.status === "done" && t.result !== null ? { result: structuredClone(t.result) as CardTask["result"] } : {}),
              ...(t.status === "failed" ? { error: t.error ?? "failed" } : {})
            })
          )
      ),
    claim: (worker, nowMs, leaseMs) =>
      Effect.sync(() => {
        const t = rows()
          .filter((r) => r.status === "pending" || (r.status === "processing" && r.lease_until! < nowMs))
          .sort((a, b) => a.created_at - b.created_at || a.id - b.id)[0]
        if (t === undefined) return Option.none<ClaimedCardTask>()
        t.status = "processing"
        t.attempts++
        t.locked_by = worker
        t.lease_until = nowMs + leaseMs
        t.started_at ??= nowMs
        return Option.some<ClaimedCardTask>({
          id: t.id,
          task_id: t.task_id,
          matchmaker_id: t.matchmaker_id,
          company_id: t.company_id,
          image_hash: t.image_hash,
          image: new Uint8Array(t.image),
          overrides: structuredClone(t.overrides),
          attempts: t.attempts,
          client_app_key: t.client_app_key
        })
      }),
    lockHeld: (id, worker) => Effect.sync(() => held(id, worker) !== undefined),
    finish: (id, outcome) =>
      Effect.gen(function*() {
        const t = db.tables.cardTasks.get(id)
        if (t === undefined) return
        const nowMs = yield* now
        Object.assign(t, { completed_at: nowMs, lease_until: null, image: new Uint8Array(0) })
        if (outcome.status === "done") {
          Object.assign(t, { status: "done", result: structuredClone(outcome.result), guest_id: outcome.guest_id })
        } else Object.assign(t, { status: "failed", error: outcome.error })
      }),
    release: (id, worker) =>
      Effect.sync(() => {
        const t = held(id, worker)
        if (t !== undefined) {
          Object.assign(t, { status: "pending", locked_by: null, lease_until: null, attempts: Math.max(t.attempts - 1, 0) })
        }
      }),
    renew: (id, worker, untilMs) =>
      Effect.sync(() => {
        const t = held(id, worker)
        if (t !== undefined) t.lease_until = untilMs
      })
  })
})

export const FakeCardTasksRepo: Layer.Layer<CardTasksRepo, never, FakeDb> = Layer.effect(CardTasksRepo, makeFakeCardTasksRepo)
