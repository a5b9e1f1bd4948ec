// Card import with the real parser and no AI key: OCR reads a photographed-style card, and a phone
// photo of a filled-in paper form, and the daemon's runner creates the guest from each, polled
// through GET /guests/card-task.
import { readFileSync } from "node:fs"

import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { CardTasksJob } from "../jobs/CardTasks.js"
import { CardParserLive } from "../src/card/CardParser.js"
import { eventually } from "./support/eventually.js"
import { cardForm } from "./support/forms.js"
import { signedClient, testServerLayer } from "./support/harness.js"

const PHOTO = new Uint8Array(readFileSync(new URL("./fixtures/cards/card-photo.jpg", import.meta.url)))
/** A medium-difficulty phone photo (generated, test/fixtures/cards/photos): tilted 3.2°, in
 * perspective, a ruled form filled in with a hand-like 楷体, JPEG quality 65. */
const FORM_PHOTO = new Uint8Array(readFileSync(new URL("./fixtures/cards/photos/14-medium-underlined-hand.jpg", import.meta.url)))

const parser = CardParserLive({ ai: null, ocrPoolSize: 1 })

/**
 * Uploads `photo` through create-from-card under a new company and matchmaker, runs the daemon's
 * card runner until the task ends, and returns the task with the guest it created.
 */
const importCard = (photo: Uint8Array, fileName: string, names: { readonly company: string; readonly matchmaker: string }) =>
  Effect.gen(function*() {
    const { client } = yield* signedClient()
    const company = yield* client.companies.create({ payload: { name: names.company } })
    const matchmaker = yield* client.matchmakers.create({ payload: { name: names.matchmaker, company_id: company.id } })
    const accepted = yield* client.guests.createFromCard({
      payload: cardForm(photo, { matchmaker_id: String(matchmaker.id) }, fileName, "image/jpeg")
    })
    const taskId = (accepted as { task_id: string }).task_id
    const task = yield* Effect.scoped(Effect.gen(function*() {
      yield* Layer.build(CardTasksJob)
      return yield* eventually(
        `card task ${taskId}`,
        client.guests.cardTask({ params: { task_id: taskId } }),
        (t) => t.status === "done" || t.status === "failed",
        90_000
      )
    }))
    expect(task).toMatchObject({ status: "done", result: { method: "ocr", saved: true } })
    const guest = yield* client.guests.get({ params: { id: task.result!.guest_id! } })
    return { task, guest }
  })

layer(testServerLayer({ cardTaskPollSeconds: 0.2, rateLimitBurst: 1_000_000 }, parser), { timeout: 120_000 })(
  "card import with OCR",
  (it) => {
    it.effect("an operator without an AI key uploads a photographed card and sees the guest created from it", () =>
      Effect.gen(function*() {
        const { guest, task } = yield* importCard(PHOTO, "card.jpg", { company: "实拍婚介", matchmaker: "实拍红娘" })
        expect(guest).toMatchObject({
          name: "王建国",
          gender: "male",
          age: 32,
          height: 178,
          education: "本科",
          occupation: "软件工程师",
          income_amount: 240000,
          marital_status: "离异",
          native_place_code: "420100",
          source: "card"
        })
        expect(task.result!.summary).toBe("王建国 男 32岁 本科 软件工程师")
      }), { timeout: 120_000 })

    it.effect(
      "a phone photo of a filled-in paper form (tilted, in perspective, hand-like writing) creates the right guest",
      () =>
        Effect.gen(function*() {
          const { guest, task } = yield* importCard(FORM_PHOTO, "form.jpg", { company: "纸质登记婚介", matchmaker: "纸质红娘" })
          expect(guest).toMatchObject({
            name: "韩雪",
            gender: "female",
            age: 27,
            height: 166,
            weight: 57,
            education: "硕士",
            occupation: "护士",
            income_amount: 84000,
            req_income_amount: 120000,
            marital_status: "离异",
            native_place_code: "320100",
            source: "card"
          })
          expect(task.result!.summary).toBe("韩雪 女 27岁 硕士 护士")
        }),
      { timeout: 120_000 }
    )
  }
)
