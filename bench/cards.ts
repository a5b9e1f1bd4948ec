// `npm run bench` (second part): OCR on the fixture cards, our path (normalisation + OcrLive pool
// + rules) at pool sizes 1 and 2 against bare tesseract.js on the same images — seconds per card,
// cards per second, and fields read correctly. `node --import tsx bench/cards.ts [rounds]`.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

import * as Effect from "effect/Effect"
import Tesseract from "tesseract.js"

import { normalizeForParsing } from "../src/card/image.js"
import { CardOcr, languageDataFiles, OcrLive } from "../src/card/ocr.js"
import { parseCardText } from "../src/card/rules.js"
import type { ParsedCard } from "../src/card/types.js"
import { expected, FIXTURE_CARDS } from "../test/fixtures/cards/expected.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const images = FIXTURE_CARDS.map((f) => fs.readFileSync(path.join(here, "..", "test", "fixtures", "cards", f)))
const rounds = Number(process.argv[2] ?? process.env.BENCH_CARD_ROUNDS ?? 5)
const totalFields = FIXTURE_CARDS.reduce((n, f) => n + Object.keys(expected[f]).length, 0)

const seconds = (ms: number) => (ms / 1000).toFixed(2)

/** Fields of the card's expectation that the text gives correctly (through our rules). */
const correctFields = (i: number, text: string): number => {
  const want = expected[FIXTURE_CARDS[i]!]
  const got = parseCardText(text)
  return (Object.keys(want) as Array<keyof ParsedCard>).filter((k) => got[k] === want[k]).length
}

const line = (label: string, perCard: ReadonlyArray<number>, correct: number, extra = "") =>
  console.log(
    `${label}: ` + FIXTURE_CARDS.map((f, i) => `${f} ${seconds(perCard[i]! / rounds)} s`).join(", ") +
      ` | mean ${seconds(perCard.reduce((a, b) => a + b, 0) / rounds / FIXTURE_CARDS.length)} s/card` +
      ` (${(rounds * FIXTURE_CARDS.length / (perCard.reduce((a, b) => a + b, 0) / 1000)).toFixed(2)} cards/s one at a time)` +
      ` | fields right ${correct}/${totalFields}${extra}`
  )

const measurePool = (poolSize: number) =>
  Effect.gen(function*() {
    const ocr = yield* CardOcr
    // Warm-up: starts the pool and gives every worker its first (slower) recognition.
    const t0 = performance.now()
    const first = yield* Effect.promise(() => normalizeForParsing(images[0]!))
    yield* Effect.forEach(Array.from({ length: poolSize }, () => first), ocr.recognize, { concurrency: "unbounded" })
    const warm = performance.now() - t0
    // Sequential: one card at a time (latency per card, normalisation included).
    const perCard: Array<number> = FIXTURE_CARDS.map(() => 0)
    let correct = 0
    for (let r = 0; r < rounds; r++) {
      for (const [i, img] of images.entries()) {
        const s = performance.now()
        const png = yield* Effect.promise(() => normalizeForParsing(img))
        const text = yield* ocr.recognize(png)
        parseCardText(text)
        perCard[i]! += performance.now() - s
        if (r === 0) correct += correctFields(i, text)
      }
    }
    // Concurrent: all cards of all rounds at once (throughput).
    const jobs = Array.from({ length: rounds }, () => images).flat()
    const c0 = performance.now()
    yield* Effect.forEach(
      jobs,
      (img) => Effect.flatMap(Effect.promise(() => normalizeForParsing(img)), ocr.recognize),
      { concurrency: "unbounded" }
    )
    const total = performance.now() - c0
    line(
      `ours, pool ${poolSize}`,
      perCard,
      correct,
      ` | concurrent: ${jobs.length} cards in ${seconds(total)} s = ${(jobs.length / (total / 1000)).toFixed(2)} cards/s` +
        ` | pool start + first card per worker ${seconds(warm)} s`
    )
  }).pipe(Effect.provide(OcrLive({ poolSize })), Effect.scoped)

const measureBare = async () => {
  // Bare tesseract.js with local data (there is no network here): a folder with both languages.
  const files = languageDataFiles()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bare-ocr-"))
  fs.symlinkSync(files.chi_sim!, path.join(dir, "chi_sim.traineddata.gz"))
  fs.symlinkSync(files.eng!, path.join(dir, "eng.traineddata.gz"))
  const opts = { langPath: dir, cacheMethod: "none", gzip: true }

  // As its README shows it: Tesseract.recognize(image, langs) starts a worker, recognises, stops it.
  const perCall: Array<number> = FIXTURE_CARDS.map(() => 0)
  let correctCall = 0
  for (let r = 0; r < rounds; r++) {
    for (const [i, img] of images.entries()) {
      const s = performance.now()
      const { data } = await Tesseract.recognize(img, "chi_sim+eng", opts)
      perCall[i]! += performance.now() - s
      if (r === 0) correctCall += correctFields(i, data.text)
    }
  }
  line("bare Tesseract.recognize (worker per call, raw file, default settings)", perCall, correctCall)

  // One reused worker, raw file, default page segmentation, no normalisation.
  const worker = await Tesseract.createWorker(["chi_sim", "eng"], Tesseract.OEM.LSTM_ONLY, opts)
  const reused: Array<number> = FIXTURE_CARDS.map(() => 0)
  let correctReused = 0
  for (let r = 0; r < rounds; r++) {
    for (const [i, img] of images.entries()) {
      const s = performance.now()
      const { data } = await worker.recognize(img)
      reused[i]! += performance.now() - s
      if (r === 0) correctReused += correctFields(i, data.text)
    }
  }
  await worker.terminate()
  fs.rmSync(dir, { recursive: true, force: true })
  line("bare worker.recognize (one reused worker, raw file, default settings)", reused, correctReused)
}

console.log(`${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), ${rounds} rounds, node ${process.version}`)
await Effect.runPromise(measurePool(1))
await Effect.runPromise(measurePool(2))
await measureBare()
