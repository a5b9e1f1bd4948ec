// OCR for real: the committed fixture cards go through normalisation, the tesseract.js pool and the
// text rules, and their fields come back. One pool of 2 workers for the whole file.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as zlib from "node:zlib"

import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"

import { normalizeForParsing } from "../../src/card/image.js"
import { CardOcr, checkLanguageData, languageDataFiles, OCR_INSTALL_HINT, ocrLanguageDataAvailable, OcrLive } from "../../src/card/ocr.js"
import { parseCardText } from "../../src/card/rules.js"
import { expected, type FixtureCard } from "../fixtures/cards/expected.js"

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "cards")
const fixture = (name: string): Buffer => fs.readFileSync(path.join(fixtures, name))

const readCard = (name: string) =>
  Effect.gen(function*() {
    const ocr = yield* CardOcr
    const png = yield* Effect.promise(() => normalizeForParsing(fixture(name)))
    const text = yield* ocr.recognize(png)
    return parseCardText(text)
  })

describe("OCR language data", () => {
  it("both languages are found in the installed @tesseract.js-data packages", () => {
    expect(ocrLanguageDataAvailable()).toBe(true)
    const files = languageDataFiles()
    expect(files.chi_sim).toMatch(/@tesseract\.js-data[/\\]chi_sim[/\\]4\.0\.0_best_int[/\\]chi_sim\.traineddata\.gz$/)
    expect(files.eng).toMatch(/@tesseract\.js-data[/\\]eng[/\\]4\.0\.0_best_int[/\\]eng\.traineddata\.gz$/)
    expect(languageDataFiles(undefined, "4.0.0").chi_sim).toMatch(/chi_sim[/\\]4\.0\.0[/\\]chi_sim\.traineddata\.gz$/)
  })

  it("a langPath without the data makes them unavailable", () => {
    expect(ocrLanguageDataAvailable(os.tmpdir())).toBe(false)
  })

  it("the installed files pass the damage check (gunzip, table of contents, LSTM model)", () => {
    for (const model of ["4.0.0_best_int", "4.0.0"] as const) {
      const files = languageDataFiles(undefined, model)
      expect(checkLanguageData(files.chi_sim!)).toBeNull()
      expect(checkLanguageData(files.eng!)).toBeNull()
    }
  })
})

/** Worker threads hold a MessagePort each while they run. */
const messagePorts = () => process.getActiveResourcesInfo().filter((r) => r === "MessagePort").length

describe("the pool", () => {
  it.live("is created once, on first use, and its workers stop when the layer's scope closes", () =>
    Effect.gen(function*() {
      const baseline = messagePorts()
      const logs: Array<string> = []
      const logger = Logger.make(({ message }) => {
        logs.push(Array.isArray(message) ? message.join(" ") : String(message))
      })
      const png = yield* Effect.promise(() => normalizeForParsing(fixture("card-table.png")))
      yield* Effect.gen(function*() {
        const ocr = yield* CardOcr
        expect(messagePorts()).toBe(baseline) // nothing started before the first image
        yield* Effect.forEach([png, png, png], ocr.recognize, { concurrency: "unbounded" })
        yield* ocr.recognize(png)
        expect(messagePorts()).toBe(baseline + 2)
      }).pipe(Effect.provide(OcrLive({ poolSize: 2 })), Effect.scoped, Effect.provide(Logger.layer([logger])))
      expect(logs.filter((l) => l.includes("OCR pool started"))).toHaveLength(1)
      // tesseract.js stops its threads without waiting for them: allow them a moment.
      for (let i = 0; i < 50 && messagePorts() > baseline; i++) yield* Effect.sleep("20 millis")
      expect(messagePorts()).toBe(baseline)
    }), 60_000)

  it.effect("damaged language data is refused with ParserUnavailable before any worker starts", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "card-ocr-damaged-"))
      fs.writeFileSync(path.join(dir, "chi_sim.traineddata.gz"), zlib.gzipSync(Buffer.from("not tesseract data")))
      fs.writeFileSync(path.join(dir, "eng.traineddata.gz"), "not even gzip")
      const error = yield* Effect.flip(
        Effect.flatMap(CardOcr, (ocr) => ocr.recognize(fixture("card-clean.png"))).pipe(
          Effect.provide(OcrLive({ poolSize: 1, langPath: dir }))
        )
      )
      fs.rmSync(dir, { recursive: true, force: true })
      expect(error._tag).toBe("ParserUnavailable")
      expect(error.message).toContain("reinstall")
      expect(error.message).toContain("does not gunzip")
    }))
})

layer(OcrLive({ poolSize: 2 }), { timeout: 120_000, excludeTestServices: true })("OcrLive (pool of 2, real tesseract.js)", (it) => {
  // Live: the pool's timeouts run on the real clock, as in the daemon.
  it.effect("the clean card's fields are read back (name, gender, age, height, education, income …)", () =>
    Effect.gen(function*() {
      const card = yield* readCard("card-clean.png")
      expect(card).toMatchObject(expected["card-clean.png"])
      expect(card.requirementTags).toMatchObject({ age_min: 28, age_max: 35, height_min: 175, education_min: 3, has_house: 1 })
      expect(card.selfIntro).toContain("喜欢旅行和读书")
    }), 60_000)

  it.effect("the photographed card (JPEG, EXIF-rotated, tilted, noisy) is read upright", () =>
    Effect.gen(function*() {
      const card = yield* readCard("card-photo.jpg")
      expect(card).toMatchObject(expected["card-photo.jpg"])
      expect(card.requirementTags).toMatchObject({ age_min: 25, age_max: 30, education_min: 2, marriage_status: [1, 2] })
    }), 60_000)

  it.effect("the ruled table card is read once its rules are erased (labels without colons)", () =>
    Effect.gen(function*() {
      const card = yield* readCard("card-table.png")
      expect(card).toMatchObject(expected["card-table.png"])
      expect(card.requirementTags).toMatchObject({ age_min: 30, age_max: 38, height_min: 160, has_car: 1, locations: ["成都"] })
    }), 60_000)

  it.effect("read gives the text and the words recognised with low confidence (letters or digits only)", () =>
    Effect.gen(function*() {
      const ocr = yield* CardOcr
      const png = yield* Effect.promise(() => normalizeForParsing(fixture("card-table.png")))
      const reading = yield* ocr.read(png)
      expect(reading.text).toBe(yield* ocr.recognize(png))
      expect(Array.isArray(reading.uncertain)).toBe(true)
      for (const w of reading.uncertain) expect(w).toMatch(/[\p{L}\p{N}]/u)
    }), 60_000)

  it.effect("concurrent cards share the one pool and each gets its own text", () =>
    Effect.gen(function*() {
      const names: ReadonlyArray<FixtureCard> = ["card-table.png", "card-clean.png", "card-photo.jpg", "card-clean.png"]
      const cards = yield* Effect.forEach(names, readCard, { concurrency: "unbounded" })
      cards.forEach((card, i) => expect(card.name).toBe(expected[names[i]!].name))
    }), 60_000)

  it.effect("no language data is written into the working folder (cacheMethod none)", () =>
    Effect.sync(() => {
      const written = fs.readdirSync(process.cwd()).filter((f) => f.endsWith(".traineddata"))
      expect(written).toEqual([])
    }))
})

layer(OcrLive({ poolSize: 1, langPath: path.join(os.tmpdir(), "no-such-tessdata") }))("OcrLive without language data", (it) => {
  it.effect("the service starts but recognize fails with ParserUnavailable naming the npm packages", () =>
    Effect.gen(function*() {
      const ocr = yield* CardOcr
      expect(ocr.available).toBe(false)
      const error = yield* Effect.flip(ocr.recognize(fixture("card-clean.png")))
      expect(error._tag).toBe("ParserUnavailable")
      expect(error.message).toContain(OCR_INSTALL_HINT)
      expect(error.message).toContain("chi_sim, eng")
    }))
})
