// The outcomes of a queued card task (SPEC §4.2; DECISIONS §8): the real CardParser decisions (AI
// first, OCR + the card rules as the fallback) over scripted fakes of the AI and OCR, and the card
// import service over in-memory repositories: no database, no network, no OCR worker. End to end
// with the real daemon and PostgreSQL: test/cards.test.ts.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import sharp from "sharp"

import type { AiParsed } from "../../src/card/ai.js"
import { CardParserFromParts } from "../../src/card/CardParser.js"
import { emptyParsedCard } from "../../src/card/types.js"
import { appConfigWith } from "../../src/Config.js"
import * as Scopes from "../../src/domain/scope.js"
import { CardTasksRepo } from "../../src/repos/CardTasksRepo.js"
import { CompaniesRepo } from "../../src/repos/CompaniesRepo.js"
import { GuestsRepo } from "../../src/repos/GuestsRepo.js"
import { MatchmakersRepo } from "../../src/repos/MatchmakersRepo.js"
import { CardImport } from "../../src/services/CardImport.js"
import { Guests } from "../../src/services/Guests.js"
import { ImageBlacklist } from "../../src/services/ImageBlacklist.js"
import { type AiAnswer, CardPartsCalls, fakeCardParts, type OcrAnswer } from "../fakes/cardParts.js"
import { FakeDb } from "../fakes/db.js"
import { makeTestLayer } from "../fakes/makeTestLayer.js"
import { recordedEvents } from "../fakes/outboxRepo.js"
import { seedCompany, seedGuest, seedMatchmaker } from "../fakes/seed.js"
import { FakeStore } from "../fakes/store.js"

/** A small blank PNG: the parser still normalises it (sharp, local), the fakes ignore its content. */
const image = new Uint8Array(
  await sharp({ create: { width: 320, height: 200, channels: 3, background: "white" } }).png().toBuffer()
)
// 2026-11-24 12:00 in Asia/Shanghai.
const START = Date.UTC(2026, 10, 24, 4, 0, 0)
const LEASE_MS = 120_000

const TestLayer = (parts: { readonly ai: ReadonlyArray<AiAnswer> | null; readonly ocr: ReadonlyArray<OcrAnswer> | null }) =>
  CardImport.layerWithoutDependencies.pipe(
    Layer.provideMerge(Guests.layerWithoutDependencies),
    Layer.provideMerge(CardParserFromParts.pipe(Layer.provideMerge(fakeCardParts(parts)))),
    // Processing a claimed task looks up no matchmaker, company or blacklist entry: any call dies naming itself.
    Layer.provideMerge(
      Layer.mergeAll(makeTestLayer(MatchmakersRepo)({}), makeTestLayer(CompaniesRepo)({}), makeTestLayer(ImageBlacklist)({}))
    ),
    Layer.provideMerge(FakeStore),
    Layer.provideMerge(appConfigWith({})),
    Layer.provideMerge(Layer.effectDiscard(TestClock.setTime(START)))
  )

type Services = Layer.Success<ReturnType<typeof TestLayer>>

const test = <A, E>(
  name: string,
  parts: { readonly ai: ReadonlyArray<AiAnswer> | null; readonly ocr: ReadonlyArray<OcrAnswer> | null },
  body: () => Effect.Effect<A, E, Services>
) => it.effect(name, () => Effect.provide(body(), TestLayer(parts)))

const aiCard = (over: Partial<AiParsed> = {}): AiParsed => ({
  ...emptyParsedCard(),
  name: "李晓雯",
  gender: "female",
  age: 28,
  height: 165,
  education: "硕士",
  occupation: "中学教师",
  confidence: "high",
  ...over
})

const OCR_TEXT = "姓名：李明\n性别：男\n年龄：30岁\n身高：175cm\n学历：本科\n职业：工程师"

/** A task for a new matchmaker of a new company, claimed by `worker`. */
const claimedTask = (worker = "w1", overrides: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const tasks = yield* CardTasksRepo
    const company = yield* seedCompany
    const matchmaker = yield* seedMatchmaker(company)
    const queued = yield* tasks.enqueue({
      matchmaker_id: matchmaker,
      company_id: company,
      image_hash: `hash-${matchmaker}`.padEnd(32, "0"),
      image,
      content_type: "image/png",
      overrides,
      client_app_key: "ak_cards"
    })
    const task = Option.getOrThrow(yield* tasks.claim(worker, START, LEASE_MS))
    expect(task.task_id).toBe(queued.task_id)
    return { company, matchmaker, task }
  })

const polled = (taskId: string) => Effect.flatMap(CardTasksRepo, (t) => Effect.map(t.find(Scopes.all, taskId), Option.getOrThrow))
const guestRows = Effect.map(FakeDb, (db) => [...db.tables.guests.values()])

describe("card task outcomes over fake AI, OCR and repositories", () => {
  test("AI reads the card: the guest is made from its fields with the overrides over them, events recorded, task done by ai", {
    ai: [aiCard()],
    ocr: []
  }, () =>
    Effect.gen(function*() {
      const { company, matchmaker, task } = yield* claimedTask("w1", { phone: "13900001111", occupation: "大学教师" })
      expect(yield* (yield* CardImport).processTask(task, "w1")).toBe("done")
      const [guest, ...more] = yield* guestRows
      expect(more).toEqual([])
      expect(guest!.state).toMatchObject({
        name: "李晓雯",
        gender: "female",
        age: 28,
        education: "硕士",
        occupation: "大学教师",
        phone: "13900001111",
        source: "card",
        company_id: company,
        matchmaker_id: matchmaker
      })
      expect(guest!.image_hash).toBe(task.image_hash)
      const done = yield* polled(task.task_id)
      expect(done).toMatchObject({ status: "done", result: { method: "ai", saved: true, guest_id: guest!.id } })
      expect(done.completed_at).toBe("2026-11-24T12:00:00")
      // The guest, its matchmaker's guest_count, then the card event with its own keys.
      expect((yield* recordedEvents).map((e) => [e.type, (e.data as { id?: number }).id])).toEqual([
        ["guest.created", guest!.id],
        ["matchmaker.updated", matchmaker],
        ["guest.card_created", undefined]
      ])
      expect((yield* recordedEvents)[2]!.data).toMatchObject({ task_id: task.task_id, guest_id: guest!.id, matchmaker_id: matchmaker })
      expect(yield* CardPartsCalls).toEqual({ ai: 1, ocr: 0 })
      expect((yield* FakeDb).tables.matchmakers.get(matchmaker)!.guest_count).toBe(1)
    }))

  test("AI fails: OCR's text is read by the card rules and the guest is made from it, task done by ocr", {
    ai: [{ fails: "AI request failed (HTTP 529): overloaded" }],
    ocr: [{ text: OCR_TEXT, uncertain: [] }]
  }, () =>
    Effect.gen(function*() {
      const { task } = yield* claimedTask()
      expect(yield* (yield* CardImport).processTask(task, "w1")).toBe("done")
      expect((yield* guestRows)[0]!.state).toMatchObject({ name: "李明", gender: "male", age: 30, height: 175, education: "本科" })
      expect(yield* polled(task.task_id)).toMatchObject({ status: "done", result: { method: "ocr" } })
      expect(yield* CardPartsCalls).toEqual({ ai: 1, ocr: 1 })
    }))

  test("no AI configured: OCR alone reads the card", { ai: null, ocr: [{ text: OCR_TEXT, uncertain: [] }] }, () =>
    Effect.gen(function*() {
      const { task } = yield* claimedTask()
      expect(yield* (yield* CardImport).processTask(task, "w1")).toBe("done")
      expect(yield* polled(task.task_id)).toMatchObject({ status: "done", result: { method: "ocr" } })
      expect(yield* CardPartsCalls).toEqual({ ai: 0, ocr: 1 })
    }))

  test("AI and OCR both fail: the task fails with the OCR's error; no guest, no event", {
    ai: [{ fails: "AI request timed out" }],
    ocr: [{ fails: "OCR took longer than 1m" }]
  }, () =>
    Effect.gen(function*() {
      const { task } = yield* claimedTask()
      expect(yield* (yield* CardImport).processTask(task, "w1")).toBe("failed")
      expect(yield* polled(task.task_id)).toMatchObject({ status: "failed", error: "OCR took longer than 1m" })
      expect(yield* guestRows).toEqual([])
      expect(yield* recordedEvents).toEqual([])
    }))

  test("AI fails and no OCR is installed: the task fails naming the AI's failure and the missing OCR", {
    ai: [{ fails: "AI request timed out" }],
    ocr: null
  }, () =>
    Effect.gen(function*() {
      const { task } = yield* claimedTask()
      expect(yield* (yield* CardImport).processTask(task, "w1")).toBe("failed")
      const failed = yield* polled(task.task_id)
      expect(failed.error).toContain("AI card parsing failed (AI request timed out) and OCR is not installed")
      expect(yield* guestRows).toEqual([])
    }))

  test(
    "a card with no name or gender fails the task and creates nothing",
    { ai: [aiCard({ name: null })], ocr: [] },
    () =>
      Effect.gen(function*() {
        const { task } = yield* claimedTask()
        expect(yield* (yield* CardImport).processTask(task, "w1")).toBe("failed")
        expect(yield* polled(task.task_id)).toMatchObject({ status: "failed", error: "name or gender could not be recognised on the card" })
        expect(yield* guestRows).toEqual([])
      })
  )

  test(
    "a misread value (an age of 8) is dropped rather than failing the card",
    { ai: [aiCard({ age: 8, height: 17 })], ocr: [] },
    () =>
      Effect.gen(function*() {
        const { task } = yield* claimedTask()
        expect(yield* (yield* CardImport).processTask(task, "w1")).toBe("done")
        expect((yield* guestRows)[0]!.state).toMatchObject({ name: "李晓雯", age: null, height: null, education: "硕士" })
      })
  )

  test(
    "an invalid override fails the task naming the field, instead of being dropped",
    { ai: [aiCard()], ocr: [] },
    () =>
      Effect.gen(function*() {
        const { task } = yield* claimedTask("w1", { age: 3 })
        expect(yield* (yield* CardImport).processTask(task, "w1")).toBe("failed")
        expect(yield* polled(task.task_id)).toMatchObject({ status: "failed", error: "invalid guest fields: age" })
      })
  )

  test("a task whose lease another worker has taken since is lost: the first worker creates nothing and leaves it", {
    ai: [aiCard()],
    ocr: []
  }, () =>
    Effect.gen(function*() {
      const { task } = yield* claimedTask("w1")
      const retaken = Option.getOrThrow(yield* (yield* CardTasksRepo).claim("w2", START + LEASE_MS + 1, LEASE_MS))
      expect(retaken).toMatchObject({ id: task.id, attempts: 2 })
      expect(yield* (yield* CardImport).processTask(task, "w1")).toBe("lost")
      expect(yield* guestRows).toEqual([])
      expect(yield* polled(task.task_id)).toMatchObject({ status: "processing" })
      expect(yield* (yield* CardTasksRepo).lockHeld(task.id, "w2")).toBe(true)
    }))

  test("a guest already made from the image by the same matchmaker fails the task naming that guest; no second guest", {
    ai: [aiCard()],
    ocr: []
  }, () =>
    Effect.gen(function*() {
      const { company, matchmaker, task } = yield* claimedTask()
      const earlier = yield* seedGuest({ company_id: company, matchmaker_id: matchmaker })
      // The seeded guest has no image: give it this one, as a finished earlier import would have.
      const db = yield* FakeDb
      db.tables.guests.set(earlier.id, { ...db.tables.guests.get(earlier.id)!, image_hash: task.image_hash })
      expect(yield* (yield* CardImport).processTask(task, "w1")).toBe("failed")
      expect(yield* polled(task.task_id)).toMatchObject({
        status: "failed",
        error: `a guest was already created from this image: ${earlier.id}`
      })
      expect((yield* guestRows).map((g) => g.id)).toEqual([earlier.id])
      expect(Option.isSome(yield* (yield* GuestsRepo).findByImage(matchmaker, task.image_hash))).toBe(true)
    }))
})
