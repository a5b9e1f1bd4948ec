// Fakes of the card parser's outside world: the AI (the Anthropic API behind CardAi) and the OCR
// engine (tesseract.js behind CardOcr). Each answers from a script, in order — a reading or a
// failure — and counts its calls; an AI or OCR asked once more than scripted dies, naming it.
// With CardParserFromParts they give the real parser's decisions (AI first, OCR as the fallback,
// the text rules on OCR's text) with no network and no OCR worker.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import type { AiParsed } from "../../src/card/ai.js"
import { CardAi } from "../../src/card/CardParser.js"
import { CardOcr, type OcrReading } from "../../src/card/ocr.js"
import { CardParseError, ParserUnavailable } from "../../src/card/types.js"

export type AiAnswer = AiParsed | { readonly fails: string }
export type OcrAnswer = OcrReading | { readonly fails: string }

export interface CallCounts {
  ai: number
  ocr: number
}

/** How often each part was called (for assertions). */
export class CardPartsCalls extends Context.Service<CardPartsCalls, CallCounts>()("Test/CardPartsCalls") {}

const scripted = <A extends object>(name: string, script: Array<A | { readonly fails: string }>, onCall: () => void) =>
  Effect.suspend(() => {
    onCall()
    const next = script.shift()
    if (next === undefined) return Effect.die(new Error(`fake ${name}: called more often than scripted`))
    return "fails" in next ? Effect.fail(new CardParseError({ message: next.fails })) : Effect.succeed(next as A)
  })

/**
 * CardAi and CardOcr from scripts. `ai: null` is no AI configured; `ocr: null` is OCR without its
 * language data (`available` false, every read ParserUnavailable).
 */
export const fakeCardParts = (o: {
  readonly ai: ReadonlyArray<AiAnswer> | null
  readonly ocr: ReadonlyArray<OcrAnswer> | null
}): Layer.Layer<CardAi | CardOcr | CardPartsCalls> =>
  Layer.unwrap(Effect.sync(() => {
    const calls: CallCounts = { ai: 0, ocr: 0 }
    const aiScript = [...(o.ai ?? [])]
    const ocrScript = [...(o.ocr ?? [])]
    const ai = o.ai === null
      ? { available: false, parse: () => Effect.die(new Error("fake AI: called although no AI is configured")) }
      : { available: true, parse: () => scripted<AiParsed>("AI", aiScript as Array<AiAnswer>, () => calls.ai++) }
    const read = (_png: Buffer): Effect.Effect<OcrReading, CardParseError | ParserUnavailable> =>
      o.ocr === null
        ? Effect.fail(new ParserUnavailable({ message: "fake OCR: no language data" }))
        : scripted<OcrReading>("OCR", ocrScript as Array<OcrAnswer>, () => calls.ocr++)
    return Layer.mergeAll(
      Layer.succeed(CardAi, ai),
      Layer.succeed(CardOcr, { available: o.ocr !== null, read, recognize: (png) => Effect.map(read(png), (r) => r.text) }),
      Layer.succeed(CardPartsCalls, calls)
    )
  }))
