// OCR of card images with tesseract.js: one lazily created, reused pool of workers (a scheduler)
// reading Simplified Chinese + English from the local @tesseract.js-data packages, never a CDN.
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import * as zlib from "node:zlib"

import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Semaphore from "effect/Semaphore"
import Tesseract from "tesseract.js"

import { errorMessage } from "../domain/text.js"
import { CardParseError, ParserUnavailable } from "./types.js"

export const OCR_LANGUAGES = ["chi_sim", "eng"] as const
export type OcrLanguage = (typeof OCR_LANGUAGES)[number]

/** What to run when the language data is missing. */
export const OCR_INSTALL_HINT = "npm install @tesseract.js-data/chi_sim @tesseract.js-data/eng"

/**
 * The model folders inside each @tesseract.js-data package: `4.0.0_best_int` (LSTM only, integer
 * "best" models; what tesseract.js itself fetches for LSTM) and `4.0.0` (tessdata: LSTM + legacy).
 * On the fixture cards both read the same fields (293 of 306 over text heights 20–40 px);
 * best_int does it about 25% faster with about 100 MB per worker instead of about 375 MB.
 */
export const OCR_MODELS = ["4.0.0_best_int", "4.0.0"] as const
export type OcrModel = typeof OCR_MODELS[number]
export const DEFAULT_OCR_MODEL: OcrModel = "4.0.0_best_int"

export interface OcrConfig {
  /** Number of tesseract workers (threads) in the pool; at least 1. */
  readonly poolSize: number
  /**
   * A folder holding `chi_sim.traineddata.gz` and `eng.traineddata.gz`. Default: each language's
   * folder inside its installed @tesseract.js-data package.
   */
  readonly langPath?: string
  /** Which model folder of the packages to use (ignored with `langPath`); default DEFAULT_OCR_MODEL. */
  readonly model?: OcrModel
  /** Longest a worker may take to start, default 60 s. */
  readonly startTimeout?: Duration.Input
  /** Longest one recognition may take (queueing included), default 60 s. */
  readonly jobTimeout?: Duration.Input
}

const require = createRequire(import.meta.url)

const dataFileName = (lang: OcrLanguage): string => `${lang}.traineddata.gz`

/** Where each language's data file is; null for a language whose file cannot be found. */
export const languageDataFiles = (
  langPath?: string,
  model: OcrModel = DEFAULT_OCR_MODEL
): Readonly<Record<OcrLanguage, string | null>> => {
  const locate = (lang: OcrLanguage): string | null => {
    let file: string
    if (langPath !== undefined) {
      file = path.join(langPath, dataFileName(lang))
    } else {
      try {
        const pkg = require.resolve(`@tesseract.js-data/${lang}/package.json`)
        file = path.join(path.dirname(pkg), model, dataFileName(lang))
      } catch {
        return null
      }
    }
    try {
      return fs.statSync(file).isFile() ? file : null
    } catch {
      return null
    }
  }
  return { chi_sim: locate("chi_sim"), eng: locate("eng") }
}

/** Whether the data of both OCR languages is installed (or present in `langPath`). */
export const ocrLanguageDataAvailable = (langPath?: string, model?: OcrModel): boolean => {
  const files = languageDataFiles(langPath, model)
  return OCR_LANGUAGES.every((l) => files[l] !== null)
}

/** The index of the LSTM model in a traineddata file's table of contents (tesseract's TESSDATA_LSTM). */
const TESSDATA_LSTM = 17

/**
 * Why a `.traineddata.gz` file cannot be used, or null when it looks sound: it must gunzip, and its
 * table of contents (int32 count, then one int64 offset per entry, -1 for absent) must fit the file
 * and include an LSTM model. tesseract.js 7 cannot be trusted with a damaged file: its worker
 * reports the failed start-up twice, and the second report throws an uncaught TypeError in the
 * main thread (the process dies), so damaged data is refused before a worker sees it.
 */
export const checkLanguageData = (file: string): string | null => {
  let data: Buffer
  try {
    data = zlib.gunzipSync(fs.readFileSync(file))
  } catch (e) {
    return `${file} does not gunzip (${errorMessage(e)})`
  }
  if (data.length < 4) return `${file} is empty`
  const entries = data.readInt32LE(0)
  if (entries < TESSDATA_LSTM + 1 || entries > 100 || data.length < 4 + 8 * entries) {
    return `${file} is not tesseract language data`
  }
  for (let i = 0; i < entries; i++) {
    const offset = data.readBigInt64LE(4 + 8 * i)
    if (offset !== -1n && (offset < BigInt(4 + 8 * entries) || offset >= BigInt(data.length))) {
      return `${file} is damaged (entry ${i} points outside the file)`
    }
  }
  if (data.readBigInt64LE(4 + 8 * TESSDATA_LSTM) === -1n) return `${file} has no LSTM model`
  return null
}

const unavailable = (langPath: string | undefined, model: OcrModel | undefined): ParserUnavailable => {
  const files = languageDataFiles(langPath, model)
  const missing = OCR_LANGUAGES.filter((l) => files[l] === null).join(", ")
  const where = langPath === undefined ? "" : ` in ${langPath}`
  return new ParserUnavailable({
    message: `OCR language data missing (${missing}${where}): run \`${OCR_INSTALL_HINT}\`, or configure an AI key`
  })
}

/** What OCR read: the text, and the words it was unsure of. */
export interface OcrReading {
  readonly text: string
  /**
   * Words (for Chinese mostly single characters) recognised with a confidence below
   * UNCERTAIN_WORD: on the generated card photos the misread characters of names scored 0–42,
   * the right ones 59–96.
   */
  readonly uncertain: ReadonlyArray<string>
}

/** tesseract's word confidence (0–100) below which a word is uncertain. */
export const UNCERTAIN_WORD = 50

export class CardOcr extends Context.Service<
  CardOcr,
  {
    /** False when the language data is missing: `recognize` then fails with ParserUnavailable. */
    readonly available: boolean
    /** The text of a (normalised PNG) image. */
    readonly recognize: (png: Buffer) => Effect.Effect<string, CardParseError | ParserUnavailable>
    /** The text of a (normalised PNG) image with the words tesseract was unsure of. */
    readonly read: (png: Buffer) => Effect.Effect<OcrReading, CardParseError | ParserUnavailable>
  }
>()("Card/Ocr") {}

/** The uncertain words of a recognition's blocks (punctuation left out: it carries no field). */
const uncertainWords = (blocks: ReadonlyArray<Tesseract.Block> | null): Array<string> =>
  (blocks ?? []).flatMap((b) =>
    b.paragraphs.flatMap((p) =>
      p.lines.flatMap((l) => l.words.filter((w) => w.confidence < UNCERTAIN_WORD && /[\p{L}\p{N}]/u.test(w.text)).map((w) => w.text))
    )
  )

/**
 * tesseract.js reads every language from one `langPath` folder, but the two packages install
 * their data in two folders: when they differ, a private temporary folder of links to both files
 * is made for the workers' start-up and removed right after.
 */
const stageLangPath = (files: Readonly<Record<OcrLanguage, string>>) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const dirs = new Set(OCR_LANGUAGES.map((l) => path.dirname(files[l])))
        if (dirs.size === 1) return { dir: [...dirs][0]!, temporary: false }
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "card-ocr-lang-"))
        for (const lang of OCR_LANGUAGES) {
          const target = path.join(dir, dataFileName(lang))
          try {
            fs.symlinkSync(files[lang], target)
          } catch {
            fs.copyFileSync(files[lang], target)
          }
        }
        return { dir, temporary: true }
      },
      catch: (e) => new CardParseError({ message: "OCR: cannot prepare the language data folder", cause: e })
    }),
    ({ dir, temporary }) => temporary ? Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })) : Effect.void
  )

/**
 * Set at initialisation: tesseract's diagnostics go nowhere. Among them: best_int's chi_sim asks
 * for the vertical-text sub-language chi_sim_vert, which the package does not ship (not needed for
 * horizontal cards); tesseract would print "Failed loading language" on every start.
 */
const INIT_CONFIG = "debug_file /dev/null"

const PARAMETERS: Partial<Tesseract.WorkerParams> = {
  // One uniform block: keeps the two columns of a row on one line (`姓名:… 性别:…`); automatic
  // page segmentation drops or reorders the right-hand column of such cards.
  tessedit_pageseg_mode: Tesseract.PSM.SINGLE_BLOCK,
  // Normalised images carry no useful resolution; without this tesseract warns on every image.
  user_defined_dpi: "300",
  // Diagnostics while recognising ("Estimating resolution…") would otherwise reach the output.
  debug_file: "/dev/null"
}

/** Starts one worker; fails (instead of hanging, as tesseract.js does on a load error) with a clear error. */
const startWorker = (langPath: string, timeout: Duration.Input) =>
  Effect.callback<Tesseract.Worker, CardParseError>((resume) => {
    let settled = false
    const fail = (reason: unknown) => {
      if (settled) return
      settled = true
      resume(Effect.fail(new CardParseError({ message: `OCR worker failed to start: ${String(reason)}`, cause: reason })))
    }
    Tesseract.createWorker([...OCR_LANGUAGES], Tesseract.OEM.LSTM_ONLY, {
      langPath,
      gzip: true,
      cacheMethod: "none",
      logger: () => {},
      // Without a handler tesseract.js throws job errors from its message listener (an uncaught
      // exception); job failures also reject the job's promise, which is where they are handled.
      errorHandler: (e: unknown) => fail(e)
    }, INIT_CONFIG).then(
      (worker) => {
        if (settled) void worker.terminate() // timed out or interrupted meanwhile
        else {
          settled = true
          resume(Effect.succeed(worker))
        }
      },
      fail
    )
    return Effect.sync(() => {
      settled = true
    })
  }).pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.fail(
          new CardParseError({ message: `OCR worker did not start within ${Duration.format(Duration.fromInputUnsafe(timeout))}` })
        )
    }),
    Effect.tap((worker) =>
      Effect.tryPromise({
        try: () => worker.setParameters(PARAMETERS),
        catch: (e) => new CardParseError({ message: `OCR worker rejected its parameters: ${String(e)}`, cause: e })
      }).pipe(Effect.tapError(() => Effect.promise(() => worker.terminate())))
    )
  )

/**
 * The pool of `poolSize` workers behind one tesseract.js scheduler, over the language data staged
 * for it; ParserUnavailable when that data is damaged.
 */
const startPool = Effect.fnUntraced(function*(
  files: Readonly<Record<OcrLanguage, string | null>>,
  poolSize: number,
  startTimeout: Duration.Input
) {
  const damage = OCR_LANGUAGES.map((l) => checkLanguageData(files[l]!)).filter((d) => d !== null)
  if (damage.length > 0) {
    return yield* new ParserUnavailable({
      message: `OCR language data unusable: ${damage.join("; ")}; reinstall it: \`${OCR_INSTALL_HINT}\``
    })
  }
  const { dir } = yield* stageLangPath({ chi_sim: files.chi_sim!, eng: files.eng! })
  const started = yield* Effect.forEach(
    Array.from({ length: poolSize }, (_, i) => i),
    () => Effect.result(startWorker(dir, startTimeout)),
    { concurrency: "unbounded" }
  )
  const workers = started.flatMap((r) => (Result.isSuccess(r) ? [r.success] : []))
  const failure = started.find(Result.isFailure)
  if (failure !== undefined) {
    yield* Effect.promise(() => Promise.all(workers.map((w) => w.terminate().catch(() => undefined))))
    return yield* Effect.fail(failure.failure)
  }
  const s = Tesseract.createScheduler()
  for (const w of workers) s.addWorker(w)
  yield* Effect.logInfo("OCR pool started").pipe(Effect.annotateLogs({ workers: poolSize }))
  return s
})

/** The OCR service of OcrLive (its layer's construction, once per layer built). */
const makeOcr = Effect.fnUntraced(function*(config: OcrConfig) {
  const poolSize = Math.max(1, Math.floor(config.poolSize))
  const startTimeout = config.startTimeout ?? Duration.seconds(60)
  const jobTimeout = config.jobTimeout ?? Duration.seconds(60)
  const files = languageDataFiles(config.langPath, config.model)
  const available = ocrLanguageDataAvailable(config.langPath, config.model)
  if (!available) {
    yield* Effect.logWarning(unavailable(config.langPath, config.model).message)
  }

  const lock = yield* Semaphore.make(1)
  let scheduler: Tesseract.Scheduler | null = null
  let closed = false

  yield* Effect.addFinalizer(() =>
    lock.withPermits(1)(
      Effect.promise(async () => {
        closed = true
        const s = scheduler
        scheduler = null
        if (s !== null) await s.terminate().catch(() => undefined)
      })
    )
  )

  const createPool = Effect.scoped(startPool(files, poolSize, startTimeout))

  const pool = lock.withPermits(1)(
    Effect.suspend(() => {
      if (closed) return Effect.fail(new CardParseError({ message: "OCR service is shutting down" }))
      if (scheduler !== null) return Effect.succeed(scheduler)
      // Uninterruptible: an interrupted start-up would leave worker threads behind.
      return Effect.uninterruptible(Effect.tap(createPool, (s) => Effect.sync(() => (scheduler = s))))
    })
  )

  const read = (png: Buffer): Effect.Effect<OcrReading, CardParseError | ParserUnavailable> =>
    available
      ? Effect.flatMap(pool, (s) =>
        Effect.tryPromise({
          try: () => s.addJob("recognize", png, {}, { text: true, blocks: true }),
          catch: (e) => new CardParseError({ message: `OCR failed: ${String(e)}`, cause: e })
        }).pipe(
          Effect.timeoutOrElse({
            duration: jobTimeout,
            orElse: () =>
              Effect.fail(
                new CardParseError({ message: `OCR took longer than ${Duration.format(Duration.fromInputUnsafe(jobTimeout))}` })
              )
          }),
          Effect.map((r) => ({ text: r.data.text, uncertain: uncertainWords(r.data.blocks) }))
        ))
      : Effect.fail(unavailable(config.langPath, config.model))

  const recognize = (png: Buffer) => Effect.map(read(png), (r) => r.text)

  return { available, recognize, read }
})

/**
 * The OCR service. The pool (`poolSize` workers behind one tesseract.js scheduler) is created on
 * the first recognition, shared by all later ones, and terminated when the layer's scope closes.
 * The layer always builds: without language data `recognize` fails with ParserUnavailable.
 */
export const OcrLive = (config: OcrConfig): Layer.Layer<CardOcr> => Layer.effect(CardOcr, makeOcr(config))
