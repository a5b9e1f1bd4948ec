// Guest-card parsing: the outcome of a parse, its errors, and the CardParser service tag that the
// AI and OCR implementations sit behind. The parsed card's shape is the domain's (domain/card.ts);
// education and marital values are the contract's (schema/Guests.ts).
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"

import type { ParsedCard } from "../domain/card.js"

export type { CardRequirementTags, ParsedCard } from "../domain/card.js"

/** The ParsedCard keys, in a stable order (used by the AI prompt and by confidence counting). */
export const PARSED_CARD_KEYS = [
  "name",
  "gender",
  "age",
  "height",
  "education",
  "occupation",
  "incomeAmount",
  "reqIncomeAmount",
  "selfIntro",
  "requirement",
  "requirementTags",
  "weight",
  "maritalStatus",
  "nativePlace",
  "phone",
  "workplace"
] as const satisfies ReadonlyArray<keyof ParsedCard>

/** A card where nothing was recognised. */
export const emptyParsedCard = (): ParsedCard => ({
  name: null,
  gender: null,
  age: null,
  height: null,
  education: null,
  occupation: null,
  incomeAmount: null,
  reqIncomeAmount: null,
  selfIntro: null,
  requirement: null,
  requirementTags: null,
  weight: null,
  maritalStatus: null,
  nativePlace: null,
  phone: null,
  workplace: null
})

export type Confidence = "high" | "medium" | "low"

export interface ParseOutcome {
  readonly method: "ai" | "ocr"
  readonly parsed: ParsedCard
  readonly confidence: Confidence
}

/** The image could not be read or parsed (not an image, too many pixels, AI answer unusable …). */
export class CardParseError extends Data.TaggedError("CardParseError")<{
  message: string
  cause?: unknown
}> {}

/** No AI key and no OCR language data: the message names what to install or configure. */
export class ParserUnavailable extends Data.TaggedError("ParserUnavailable")<{ message: string }> {}

export class CardParser extends Context.Service<
  CardParser,
  {
    readonly parse: (image: Uint8Array) => Effect.Effect<ParseOutcome, CardParseError | ParserUnavailable>
  }
>()("Card/Parser") {}
