// Guest-card parsing: the shape of a parsed card, the outcome of a parse, its errors, and the
// CardParser service tag that the AI and OCR implementations sit behind.
import { Context, Data, type Effect } from "effect"

/** Education levels, lowest first; the code used by `requirementTags.education_min` is position + 1. */
export const EDUCATIONS = ["高中及以下", "大专", "本科", "硕士", "博士"] as const
export type Education = (typeof EDUCATIONS)[number]

/** Marital statuses; the code used by `requirementTags.marriage_status` is position + 1. */
export const MARITAL_STATUSES = ["未婚", "离异", "丧偶"] as const
export type MaritalStatus = (typeof MARITAL_STATUSES)[number]

/** The structured partner requirement read from a card (a subset of the API's requirement_tags). */
export interface CardRequirementTags {
  age_min?: number | null
  age_max?: number | null
  height_min?: number | null
  height_max?: number | null
  /** 1 高中及以下, 2 大专, 3 本科, 4 硕士, 5 博士. */
  education_min?: number | null
  locations?: Array<string> | null
  /** 1 未婚, 2 离异, 3 丧偶. */
  marriage_status?: Array<number> | null
  has_house?: 0 | 1 | null
  has_car?: 0 | 1 | null
  other?: string
}

/** What was read from one card (SPEC keys in camelCase); null wherever nothing was recognised. */
export interface ParsedCard {
  name: string | null
  gender: "male" | "female" | null
  age: number | null
  /** cm. */
  height: number | null
  education: Education | null
  occupation: string | null
  /** Own yearly income, yuan. */
  incomeAmount: number | null
  /** Lower bound of the partner's income asked for, yearly yuan. */
  reqIncomeAmount: number | null
  selfIntro: string | null
  /** The free text of 择偶要求. */
  requirement: string | null
  requirementTags: CardRequirementTags | null
  // Extra keys beyond SPEC's list (clients ignore unknown keys):
  /** kg. */
  weight: number | null
  maritalStatus: MaritalStatus | null
  nativePlace: string | null
  phone: string | null
  workplace: string | null
}

/** The ParsedCard keys, in a stable order (used by the AI prompt and by confidence counting). */
export const PARSED_CARD_KEYS = [
  "name", "gender", "age", "height", "education", "occupation", "incomeAmount", "reqIncomeAmount",
  "selfIntro", "requirement", "requirementTags", "weight", "maritalStatus", "nativePlace", "phone",
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

export class CardParser extends Context.Tag("Card/Parser")<
  CardParser,
  {
    readonly parse: (image: Uint8Array) => Effect.Effect<ParseOutcome, CardParseError | ParserUnavailable>
  }
>() {}
