// `npm run bench` (third part): the generated phone photos of paper cards (test/fixtures/cards/photos)
// read by our OCR path (photo correction + OcrLive pool of 1 + rules) and by bare tesseract.js on
// the same files (one reused worker, default settings, our rules on its text: the floor). Prints
// fields right per difficulty and per field, seconds per card, and the ratios.
// `node --import tsx bench/card-photos.ts [--no-bare] [--verbose] [name-filter]`
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import Tesseract from "tesseract.js"

import { normalizeForParsing } from "../src/card/image.js"
import { CardOcr, languageDataFiles, OcrLive } from "../src/card/ocr.js"
import { confidenceOf, currentYearIn, readCard } from "../src/card/rules.js"
import type { Confidence, ParsedCard } from "../src/card/types.js"
import {
  type Difficulty,
  expectedFields,
  loadPhotoTruth,
  photoBytes,
  type PhotoTruth,
  SCORED_FIELDS,
  type ScoredField
} from "../test/fixtures/cards/photos/truth.js"

const args = process.argv.slice(2)
const bare = !args.includes("--no-bare")
const verbose = args.includes("--verbose")
const filter = args.find((a) => !a.startsWith("--"))
const photos = loadPhotoTruth().filter((t) => filter === undefined || t.file.includes(filter))
const images = photos.map(photoBytes)
const currentYear = currentYearIn("Asia/Shanghai", new Date())
const DIFFICULTIES: ReadonlyArray<Difficulty> = ["clean", "medium", "hard"]

interface CardResult {
  readonly truth: PhotoTruth
  readonly parsed: ParsedCard
  readonly ms: number
  /** CPU time of the whole process (main thread and the OCR worker thread), ms. */
  readonly cpuMs: number
  readonly right: ReadonlyArray<ScoredField>
  readonly wrong: ReadonlyArray<ScoredField>
  readonly confidence: Confidence
  readonly doubts: ReadonlyArray<string>
}

const score = (truth: PhotoTruth, text: string, ms: number, cpuMs: number, uncertain: ReadonlyArray<string> = []): CardResult => {
  const { parsed, doubts } = readCard(text, { currentYear, uncertain })
  const want = expectedFields(truth, currentYear)
  const fields = SCORED_FIELDS.filter((f) => want[f] !== undefined)
  const right = fields.filter((f) => parsed[f] === want[f])
  const wrong = fields.filter((f) => parsed[f] !== want[f])
  return { truth, parsed, ms, cpuMs, right, wrong, confidence: confidenceOf(parsed, doubts), doubts }
}

const pct = (a: number, b: number) => (b === 0 ? "  -  " : `${((100 * a) / b).toFixed(1).padStart(5)}%`)

interface Summary {
  readonly byDifficulty: Record<Difficulty, { right: number; total: number; ms: number; cards: number }>
  readonly byField: Record<ScoredField, { right: number; total: number }>
  readonly all: { right: number; total: number; ms: number; maxMs: number; cpuMs: number; maxCpuMs: number }
}

const summarise = (results: ReadonlyArray<CardResult>): Summary => {
  const byDifficulty = Object.fromEntries(DIFFICULTIES.map((d) => [d, { right: 0, total: 0, ms: 0, cards: 0 }])) as Summary["byDifficulty"]
  const byField = Object.fromEntries(SCORED_FIELDS.map((f) => [f, { right: 0, total: 0 }])) as Summary["byField"]
  const all = { right: 0, total: 0, ms: 0, maxMs: 0, cpuMs: 0, maxCpuMs: 0 }
  for (const r of results) {
    const d = byDifficulty[r.truth.difficulty]
    d.right += r.right.length
    d.total += r.right.length + r.wrong.length
    d.ms += r.ms
    d.cards++
    for (const f of r.right) byField[f].right++
    for (const f of [...r.right, ...r.wrong]) byField[f].total++
    all.right += r.right.length
    all.total += r.right.length + r.wrong.length
    all.ms += r.ms
    all.maxMs = Math.max(all.maxMs, r.ms)
    all.cpuMs += r.cpuMs
    all.maxCpuMs = Math.max(all.maxCpuMs, r.cpuMs)
  }
  return { byDifficulty, byField, all }
}

const printSummary = (label: string, s: Summary) => {
  console.log(`\n${label}`)
  for (const d of DIFFICULTIES) {
    const x = s.byDifficulty[d]
    console.log(
      `  ${d.padEnd(6)} ${pct(x.right, x.total)} fields right (${x.right}/${x.total}), ${
        (x.ms / 1000 / Math.max(1, x.cards)).toFixed(2)
      } s/card`
    )
  }
  console.log(
    `  all    ${pct(s.all.right, s.all.total)} fields right (${s.all.right}/${s.all.total}), ` +
      `${(s.all.ms / 1000 / photos.length).toFixed(2)} s/card mean, ${(s.all.maxMs / 1000).toFixed(2)} s slowest (wall); ` +
      `CPU ${(s.all.cpuMs / 1000 / photos.length).toFixed(2)} s/card mean, ${(s.all.maxCpuMs / 1000).toFixed(2)} s most`
  )
  console.log("  per field: " + SCORED_FIELDS.map((f) => `${f} ${pct(s.byField[f].right, s.byField[f].total).trim()}`).join(", "))
}

const printCards = (results: ReadonlyArray<CardResult>) => {
  for (const r of results) {
    const want = expectedFields(r.truth, currentYear)
    const misses = r.wrong.map((f) => `${f}=${JSON.stringify(r.parsed[f])}≠${JSON.stringify(want[f])}`).join(" ")
    console.log(
      `  ${r.truth.file.padEnd(30)} ${r.right.length}/${r.right.length + r.wrong.length} ${(r.ms / 1000).toFixed(2)} s ` +
        `(CPU ${(r.cpuMs / 1000).toFixed(2)} s) ${r.confidence}${r.doubts.length > 0 ? ` (doubts: ${r.doubts.join(",")})` : ""} ${misses}`
    )
  }
}

/** Confidence against truth: of the cards called high, how many had every scored field right. */
const printConfidence = (results: ReadonlyArray<CardResult>) => {
  for (const level of ["high", "medium", "low"] as const) {
    const rs = results.filter((r) => r.confidence === level)
    const perfect = rs.filter((r) => r.wrong.length === 0).length
    const fields = rs.reduce((n, r) => n + r.right.length, 0)
    const total = rs.reduce((n, r) => n + r.right.length + r.wrong.length, 0)
    console.log(
      `  confidence ${level.padEnd(6)}: ${String(rs.length).padStart(2)} cards, ${perfect} with every field right, ${
        pct(fields, total).trim()
      } of their fields right`
    )
  }
}

/** CPU time of this process so far (all threads), ms. */
const cpuNow = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

const ours = Effect.gen(function*() {
  const ocr = yield* CardOcr
  // Warm-up: starts the worker (not counted).
  yield* ocr.recognize(yield* Effect.promise(() => normalizeForParsing(images[0]!)))
  const results: Array<CardResult> = []
  for (const [i, img] of images.entries()) {
    const t0 = performance.now()
    const c0 = cpuNow()
    const png = yield* Effect.promise(() => normalizeForParsing(img))
    const { text, uncertain } = yield* ocr.read(png)
    results.push(score(photos[i]!, text, performance.now() - t0, cpuNow() - c0, uncertain))
    if (verbose) console.log(`--- ${photos[i]!.file}\n${text}`)
  }
  return results
}).pipe(Effect.provide(OcrLive({ poolSize: 1 })), Effect.scoped)

const bareTesseract = async (): Promise<Array<CardResult>> => {
  const files = languageDataFiles()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bare-ocr-"))
  fs.symlinkSync(files.chi_sim!, path.join(dir, "chi_sim.traineddata.gz"))
  fs.symlinkSync(files.eng!, path.join(dir, "eng.traineddata.gz"))
  const worker = await Tesseract.createWorker(["chi_sim", "eng"], Tesseract.OEM.LSTM_ONLY, {
    langPath: dir,
    cacheMethod: "none",
    gzip: true
  }, "debug_file /dev/null")
  await worker.recognize(images[0]!)
  const results: Array<CardResult> = []
  for (const [i, img] of images.entries()) {
    const t0 = performance.now()
    const c0 = cpuNow()
    const { data } = await worker.recognize(img)
    results.push(score(photos[i]!, data.text, performance.now() - t0, cpuNow() - c0))
  }
  await worker.terminate()
  fs.rmSync(dir, { recursive: true, force: true })
  return results
}

console.log(
  `card photos: ${photos.length} (${DIFFICULTIES.map((d) => `${photos.filter((p) => p.difficulty === d).length} ${d}`).join(", ")}), ` +
    `${os.cpus().length} CPUs, one card at a time on one OCR worker, node ${process.version}`
)
const mine = await Effect.runPromise(ours)
const s = summarise(mine)
printSummary("ours (photo correction + pool of 1 + rules):", s)
printCards(mine)
printConfidence(mine)
if (bare) {
  const floor = await bareTesseract()
  const b = summarise(floor)
  printSummary("bare tesseract.js (one reused worker, raw file, default settings; our rules on its text):", b)
  if (verbose) printCards(floor)
  console.log("\nours / bare:")
  for (const d of DIFFICULTIES) {
    const x = s.byDifficulty[d]
    const y = b.byDifficulty[d]
    console.log(
      `  ${d.padEnd(6)} fields right ×${(x.right / Math.max(1, y.right)).toFixed(2)} (${pct(x.right, x.total).trim()} vs ${
        pct(y.right, y.total).trim()
      }), ` +
        `time ×${(x.ms / Math.max(1, y.ms)).toFixed(2)}`
    )
  }
  console.log(
    `  all    fields right ×${(s.all.right / Math.max(1, b.all.right)).toFixed(2)}, time ×${
      (s.all.ms / Math.max(1, b.all.ms)).toFixed(2)
    } ` +
      `(${(s.all.ms / 1000 / photos.length).toFixed(2)} s vs ${(b.all.ms / 1000 / photos.length).toFixed(2)} s per card), ` +
      `CPU ×${(s.all.cpuMs / Math.max(1, b.all.cpuMs)).toFixed(2)} ` +
      `(${(s.all.cpuMs / 1000 / photos.length).toFixed(2)} s vs ${(b.all.cpuMs / 1000 / photos.length).toFixed(2)} s per card)`
  )
}
