// What the card import service and its daemon rely on from CardTasksRepo, run against the real
// repository (integration) and its in-memory fake (unit). The claim takes the oldest claimable
// task of the whole queue, so the suite's claim tests first drain what earlier tests left.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import * as Scopes from "../../src/domain/scope.js"
import { CardTasksRepo, type NewCardTask } from "../../src/repos/CardTasksRepo.js"
import { ContractSeed } from "./seed.js"

const LEASE = 60_000
/** Later than any lease the suite takes: everything open is claimable then. */
const FAR = Date.UTC(2100, 0, 1)
let seq = 0

const newTask = (matchmakerId: number, companyId: number, over: Partial<NewCardTask> = {}): NewCardTask => ({
  matchmaker_id: matchmakerId,
  company_id: companyId,
  image_hash: `${seq++}`.padStart(32, "a"),
  image: new Uint8Array([1, 2, 3, seq % 256]),
  content_type: "image/png",
  overrides: { phone: "13800138000" },
  client_app_key: "ak_card",
  ...over
})

const owner = Effect.gen(function*() {
  const seed = yield* ContractSeed
  const company = yield* seed.company
  return { company, matchmaker: yield* seed.matchmaker(company) }
})

/** Finishes every open task, so that the next claim can only take what the test enqueues. */
const drain = Effect.gen(function*() {
  const repo = yield* CardTasksRepo
  for (;;) {
    const t = yield* repo.claim("drain", FAR + 1000 * LEASE, 1)
    if (Option.isNone(t)) return
    yield* repo.finish(t.value.id, { status: "failed", error: "drained" })
  }
})

export const cardTasksRepoContract = (name: string, repo: Layer.Layer<CardTasksRepo | ContractSeed>) =>
  layer(repo)(`CardTasksRepo contract (${name})`, (it) => {
    it.effect("enqueue stores a pending task; the same image and matchmaker while it is open answers that task", () =>
      Effect.gen(function*() {
        const repo = yield* CardTasksRepo
        const { company, matchmaker } = yield* owner
        const task = newTask(matchmaker, company)
        const first = yield* repo.enqueue(task)
        expect(first).toMatchObject({ status: "pending", created: true })
        expect(first.task_id).toMatch(/^ct_[0-9a-f]{24}$/)
        expect(yield* repo.enqueue({ ...task, overrides: {} })).toEqual({ ...first, created: false })
        expect(Option.getOrThrow(yield* repo.findOpen(matchmaker, task.image_hash))).toEqual({ task_id: first.task_id, status: "pending" })
        const other = yield* owner
        expect((yield* repo.enqueue({ ...task, matchmaker_id: other.matchmaker })).created).toBe(true)
        const found = Option.getOrThrow(yield* repo.find(Scopes.all, first.task_id))
        expect(found).toMatchObject({ task_id: first.task_id, status: "pending", completed_at: null })
        expect(found.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/)
        expect(Option.isNone(yield* repo.find(Scopes.all, "ct_unknown"))).toBe(true)
      }))

    it.effect("claim takes the oldest claimable task with a lease and counts the attempt; after the lease it is claimed again", () =>
      Effect.gen(function*() {
        const repo = yield* CardTasksRepo
        yield* drain
        const { company, matchmaker } = yield* owner
        const older = newTask(matchmaker, company)
        yield* repo.enqueue(older)
        yield* repo.enqueue(newTask(matchmaker, company))
        const claimed = Option.getOrThrow(yield* repo.claim("w1", FAR, LEASE))
        expect(claimed).toMatchObject({
          matchmaker_id: matchmaker,
          company_id: company,
          image_hash: older.image_hash,
          overrides: older.overrides,
          attempts: 1,
          client_app_key: "ak_card"
        })
        expect([...claimed.image]).toEqual([...older.image])
        expect(Option.getOrThrow(yield* repo.find(Scopes.all, claimed.task_id)).status).toBe("processing")
        const second = Option.getOrThrow(yield* repo.claim("w2", FAR, LEASE))
        expect(second.id).not.toBe(claimed.id)
        expect(Option.isNone(yield* repo.claim("w3", FAR + LEASE - 1, LEASE))).toBe(true)
        const again = Option.getOrThrow(yield* repo.claim("w3", FAR + LEASE + 1, LEASE))
        expect(again).toMatchObject({ id: claimed.id, attempts: 2 })
        expect(yield* repo.lockHeld(claimed.id, "w1")).toBe(false)
        expect(yield* repo.lockHeld(claimed.id, "w3")).toBe(true)
        yield* drain
      }))

    it.effect("only the holder renews a lease: a renewed task is not claimable until the new lease ends", () =>
      Effect.gen(function*() {
        const repo = yield* CardTasksRepo
        yield* drain
        const { company, matchmaker } = yield* owner
        yield* repo.enqueue(newTask(matchmaker, company))
        const claimed = Option.getOrThrow(yield* repo.claim("w1", FAR, LEASE))
        // Someone else's renewal changes nothing; the holder's moves the lease on.
        yield* repo.renew(claimed.id, "w2", FAR + 10 * LEASE)
        expect(Option.isSome(yield* repo.claim("w3", FAR + LEASE + 1, LEASE))).toBe(true)
        yield* repo.renew(claimed.id, "w3", FAR + 10 * LEASE)
        expect(Option.isNone(yield* repo.claim("w4", FAR + 5 * LEASE, LEASE))).toBe(true)
        expect(yield* repo.lockHeld(claimed.id, "w3")).toBe(true)
        expect(Option.getOrThrow(yield* repo.claim("w4", FAR + 10 * LEASE + 1, LEASE))).toMatchObject({ id: claimed.id, attempts: 3 })
        yield* drain
      }))

    it.effect("only the holder gives a task back: pending again, the attempt not counted", () =>
      Effect.gen(function*() {
        const repo = yield* CardTasksRepo
        yield* drain
        const { company, matchmaker } = yield* owner
        yield* repo.enqueue(newTask(matchmaker, company))
        const claimed = Option.getOrThrow(yield* repo.claim("w1", FAR, LEASE))
        yield* repo.release(claimed.id, "w2")
        expect(yield* repo.lockHeld(claimed.id, "w1")).toBe(true)
        yield* repo.release(claimed.id, "w1")
        expect(yield* repo.lockHeld(claimed.id, "w1")).toBe(false)
        expect(Option.getOrThrow(yield* repo.find(Scopes.all, claimed.task_id)).status).toBe("pending")
        expect(Option.getOrThrow(yield* repo.claim("w2", FAR, LEASE))).toMatchObject({ id: claimed.id, attempts: 1 })
        yield* drain
      }))

    it.effect("a finished task shows its result (done) or error (failed) with completed_at, and is no longer open", () =>
      Effect.gen(function*() {
        const repo = yield* CardTasksRepo
        yield* drain
        const { company, matchmaker } = yield* owner
        const a = newTask(matchmaker, company)
        const b = newTask(matchmaker, company)
        const ta = yield* repo.enqueue(a)
        const tb = yield* repo.enqueue(b)
        const ca = Option.getOrThrow(yield* repo.claim("w1", FAR, LEASE))
        const cb = Option.getOrThrow(yield* repo.claim("w1", FAR, LEASE))
        const result = { method: "ai" as const, summary: "女 29岁", completeness: 0.5, saved: true, guest_id: 12 }
        yield* repo.finish(ca.id, { status: "done", result, guest_id: null })
        yield* repo.finish(cb.id, { status: "failed", error: "name or gender could not be recognised on the card" })
        const done = Option.getOrThrow(yield* repo.find(Scopes.all, ta.task_id))
        expect(done).toMatchObject({ status: "done", result })
        expect(done.completed_at).not.toBeNull()
        expect("error" in done).toBe(false)
        expect(Option.getOrThrow(yield* repo.find(Scopes.all, tb.task_id))).toMatchObject({
          status: "failed",
          error: "name or gender could not be recognised on the card"
        })
        expect(Option.isNone(yield* repo.findOpen(matchmaker, a.image_hash))).toBe(true)
        expect(yield* repo.lockHeld(ca.id, "w1")).toBe(false)
        // The image may be sent again once its task finished.
        expect((yield* repo.enqueue(a)).created).toBe(true)
        yield* drain
      }))

    it.effect("find answers a scoped client (DECISIONS §14) only the tasks of its companies", () =>
      Effect.gen(function*() {
        const repo = yield* CardTasksRepo
        const mine = yield* owner
        const other = yield* owner
        const a = yield* repo.enqueue(newTask(mine.matchmaker, mine.company))
        const b = yield* repo.enqueue(newTask(other.matchmaker, other.company))
        const scope = Scopes.of([mine.company])
        expect(Option.getOrThrow(yield* repo.find(scope, a.task_id)).task_id).toBe(a.task_id)
        expect(Option.isNone(yield* repo.find(scope, b.task_id))).toBe(true)
        expect(Option.getOrThrow(yield* repo.find(Scopes.all, b.task_id)).task_id).toBe(b.task_id)
      }))
  })
