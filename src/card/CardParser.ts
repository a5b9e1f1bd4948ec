// The card parser the API uses: normalise the image, ask the AI when a key is configured, and fall
// back to OCR + rules when it is not or when the AI fails; plus a fake for other tests. The AI and
// the OCR are layers of their own (CardAi, CardOcr), so tests can put fakes in their place.
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"

import { atLeastOne, optionalHttpUrl, PlatformTimeZone, setting, timerMillis } from "../Config.js"
import { type AiConfig, type AiParsed, DEFAULT_AI_MODEL, DEFAULT_AI_TIMEOUT_MS, makeAiParser } from "./ai.js"
import { ImageError, normalizeForParsing, type NormalizeOptions } from "./image.js"
import { CardOcr, DEFAULT_OCR_MODEL, OCR_INSTALL_HINT, OCR_MODELS, OcrLive, type OcrModel } from "./ocr.js"
import { confidenceOf, currentYearIn, readCard } from "./rules.js"
import { CardParseError, CardParser, type ParseOutcome, ParserUnavailable } from "./types.js"

export interface CardParserConfig {
  /** null: no AI, OCR only. */
  readonly ai: AiConfig | null
  /** Workers in the OCR pool. */
  readonly ocrPoolSize: number
  /** A folder with chi_sim/eng `.traineddata.gz` instead of the installed packages (tests). */
  readonly ocrLangPath?: string
  /** The packages' model folder for OCR; default DEFAULT_OCR_MODEL (4.0.0_best_int). */
  readonly ocrModel?: OcrModel
}

/** Longest side of the image sent to the AI: larger images are scaled down by the API anyway. */
export const AI_IMAGE_MAX_SIDE = 1568

/**
 * From the environment: ANTHROPIC_API_KEY (absent or empty: no AI), CARD_AI_MODEL (default
 * claude-sonnet-4-5), CARD_AI_TIMEOUT_MS (at least 1; default 30000), ANTHROPIC_BASE_URL (optional),
 * CARD_OCR_POOL_SIZE (at least 1; default 2), CARD_OCR_MODEL (4.0.0_best_int or 4.0.0; default 4.0.0_best_int).
 */
export const cardParserConfig: Config.Config<CardParserConfig> = Config.all({
  apiKey: Config.option(Config.Redacted("ANTHROPIC_API_KEY")),
  model: Config.String("CARD_AI_MODEL").pipe(Config.withDefault(DEFAULT_AI_MODEL)),
  timeoutMs: timerMillis("CARD_AI_TIMEOUT_MS").pipe(Config.withDefault(DEFAULT_AI_TIMEOUT_MS)),
  baseURL: optionalHttpUrl("ANTHROPIC_BASE_URL"),
  ocrPoolSize: atLeastOne("CARD_OCR_POOL_SIZE").pipe(Config.withDefault(2)),
  ocrModel: setting("CARD_OCR_MODEL", (raw): Result.Result<OcrModel, string> => {
    const model = OCR_MODELS.find((m) => m === raw.trim())
    return model === undefined
      ? Result.fail(`expected ${OCR_MODELS.join(" or ")}; got ${JSON.stringify(raw)}`)
      : Result.succeed(model)
  }).pipe(Config.withDefault(DEFAULT_OCR_MODEL))
}).pipe(
  Config.map(({ apiKey, model, timeoutMs, baseURL, ocrPoolSize, ocrModel }) => {
    const key = Option.getOrUndefined(apiKey)
    const ai: AiConfig | null = key === undefined || Redacted.value(key).trim() === ""
      ? null
      : {
        apiKey: Redacted.value(key).trim(),
        model,
        timeoutMs,
        maxRetries: 0,
        ...(Option.isSome(baseURL) ? { baseURL: baseURL.value } : {})
      }
    return { ai, ocrPoolSize, ocrModel }
  })
)

/** The ImageError behind a CardParseError when the image itself was refused (→ HTTP 400); else null. */
export const imageErrorOf = (e: CardParseError): ImageError | null => (e.cause instanceof ImageError ? e.cause : null)

/** For OCR: the defaults (text rescaled for tesseract, rules erased). For the AI: bounded, as drawn. */
const OCR_IMAGE: NormalizeOptions = {}
const AI_IMAGE: NormalizeOptions = { maxSide: AI_IMAGE_MAX_SIDE, removeLines: false, textHeight: null }

const normalize = (image: Uint8Array, options: NormalizeOptions) =>
  Effect.tryPromise({
    try: () => normalizeForParsing(image, options),
    catch: (e) =>
      e instanceof ImageError
        ? new CardParseError({ message: e.message, cause: e })
        : new CardParseError({ message: `image could not be prepared: ${String(e)}`, cause: e })
  })

/** The AI reader of a card: a normalised PNG in, the card's fields out. `available` is false without an AI key. */
export class CardAi extends Context.Service<
  CardAi,
  {
    readonly available: boolean
    readonly parse: (png: Buffer) => Effect.Effect<AiParsed, CardParseError>
  }
>()("Card/Ai") {}

/** The AI of the configuration (the Anthropic SDK), or none (null: OCR only). */
export const CardAiLive = (config: AiConfig | null): Layer.Layer<CardAi> =>
  Layer.sync(CardAi, () =>
    config === null
      ? { available: false, parse: () => Effect.fail(new CardParseError({ message: "no AI is configured" })) }
      : { available: true, parse: makeAiParser(config).parse })

/**
 * CardParser over the AI (when available) and the OCR given as layers. `parse`:
 * - refuses images that are not JPEG/PNG, too large or damaged with CardParseError (cause: ImageError);
 * - with AI configured, sends the image to the model; any AI failure (HTTP error, timeout,
 *   unusable answer) is logged as a warning and OCR is used instead;
 * - without AI, or after an AI failure, reads the image with OCR and the text rules;
 * - fails with ParserUnavailable when there is no AI and the OCR language data is missing.
 */
export const CardParserFromParts: Layer.Layer<CardParser, never, CardAi | CardOcr> = Layer.effect(
  CardParser,
  Effect.gen(function*() {
    const ocr = yield* CardOcr
    const ai = yield* CardAi
    if (!ai.available && !ocr.available) {
      yield* Effect.logWarning(`card parsing unavailable: no AI key and no OCR data (${OCR_INSTALL_HINT})`)
    }

    const viaOcr: (image: Uint8Array) => Effect.Effect<ParseOutcome, CardParseError | ParserUnavailable> = Effect
      .fnUntraced(function*(image: Uint8Array) {
        const png = yield* normalize(image, OCR_IMAGE)
        const { text, uncertain } = yield* ocr.read(png)
        // 出生年月 gives the age in the platform time zone's current year (DECISIONS §10).
        const timeZone = yield* PlatformTimeZone
        const now = yield* Clock.currentTimeMillis
        const { parsed, doubts } = readCard(text, { currentYear: currentYearIn(timeZone, new Date(now)), uncertain })
        return { method: "ocr", parsed, confidence: confidenceOf(parsed, doubts) } as const
      })

    const parse: (image: Uint8Array) => Effect.Effect<ParseOutcome, CardParseError | ParserUnavailable> = Effect
      .fnUntraced(function*(image: Uint8Array) {
        if (!ai.available) {
          if (!ocr.available) {
            return yield* new ParserUnavailable({
              message: `card parsing is not available: set ANTHROPIC_API_KEY, or install the OCR language data (${OCR_INSTALL_HINT})`
            })
          }
          return yield* viaOcr(image)
        }
        const png = yield* normalize(image, AI_IMAGE)
        const fromAi = yield* Effect.result(ai.parse(png))
        if (Result.isSuccess(fromAi)) {
          const { confidence, ...parsed } = fromAi.success
          return { method: "ai", parsed, confidence } as const
        }
        yield* Effect.logWarning("AI card parsing failed; falling back to OCR").pipe(
          Effect.annotateLogs({ reason: fromAi.failure.message })
        )
        if (!ocr.available) {
          return yield* new CardParseError({
            message: `AI card parsing failed (${fromAi.failure.message}) and OCR is not installed (${OCR_INSTALL_HINT})`,
            cause: fromAi.failure
          })
        }
        return yield* viaOcr(image)
      }, (effect) => Effect.withSpan(effect, "CardParser.parse"))

    return { parse }
  })
)

/** CardParser over the configured AI (the Anthropic SDK) and the tesseract.js OCR pool. */
export const CardParserLive = (config: CardParserConfig): Layer.Layer<CardParser> =>
  CardParserFromParts.pipe(
    Layer.provide(CardAiLive(config.ai)),
    Layer.provide(
      OcrLive({
        poolSize: config.ocrPoolSize,
        ...(config.ocrLangPath !== undefined ? { langPath: config.ocrLangPath } : {}),
        ...(config.ocrModel !== undefined ? { model: config.ocrModel } : {})
      })
    )
  )

/** A fake CardParser for tests elsewhere: a fixed outcome, or a function of the image. */
export const CardParserTest = (
  f: ParseOutcome | ((image: Uint8Array) => Effect.Effect<ParseOutcome, CardParseError | ParserUnavailable>)
): Layer.Layer<CardParser> => Layer.succeed(CardParser, { parse: typeof f === "function" ? f : () => Effect.succeed(f) })
