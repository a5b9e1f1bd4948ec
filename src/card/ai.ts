// AI parsing of a card image with a Claude vision model (@anthropic-ai/sdk): the image and an
// instruction go in, one JSON object with the ParsedCard keys comes out, checked with effect/Schema.
import Anthropic from "@anthropic-ai/sdk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaTransformation from "effect/SchemaTransformation"

import { Education, MaritalStatus } from "../../schema/Guests.js"
import { errorMessage } from "../domain/text.js"
import { confidenceOf } from "./rules.js"
import { CardParseError, type Confidence, type ParsedCard } from "./types.js"

export const DEFAULT_AI_MODEL = "claude-sonnet-4-5"
export const DEFAULT_AI_TIMEOUT_MS = 30_000

export interface AiConfig {
  readonly apiKey: string
  /** Default DEFAULT_AI_MODEL. */
  readonly model?: string
  /** Whole-request limit, default 30 s. */
  readonly timeoutMs?: number
  /** Default: the SDK's (api.anthropic.com); tests point it at a local fake server. */
  readonly baseURL?: string
  /** 0 (default) or 1: a failed call falls back to OCR rather than being retried at length. */
  readonly maxRetries?: 0 | 1
}

export type AiParsed = ParsedCard & { readonly confidence: Confidence }

export const AI_INSTRUCTION = `这是一张婚恋平台红娘拍摄的纸质嘉宾资料卡。请读出卡片上的信息。
只回答一个 JSON 对象，不要任何其他文字，不要解释。对象恰好包含以下键，卡片上没有或看不清的值一律写 null，不要猜测：
- "name": 姓名，字符串
- "gender": 性别，"male"（男）或 "female"（女）
- "age": 年龄，整数（周岁）
- "height": 身高，整数，单位厘米（1.75米 写 175）
- "weight": 体重，数字，单位公斤（斤 除以 2）
- "education": 学历，只能是 "高中及以下"、"大专"、"本科"、"硕士"、"博士" 之一（研究生 算 硕士，中专 算 高中及以下）
- "occupation": 职业，字符串
- "workplace": 工作单位或工作地点，字符串
- "incomeAmount": 本人年收入，整数，单位元，按年计算（月薪 8千 写 96000；范围取下限，20-30万 写 200000）
- "maritalStatus": 婚姻状况，只能是 "未婚"、"离异"、"丧偶" 之一
- "nativePlace": 籍贯或老家，字符串
- "phone": 电话或手机号，只写数字
- "selfIntro": 自我介绍的原文，字符串
- "requirement": 择偶要求的原文，字符串
- "reqIncomeAmount": 择偶要求中对对方收入的下限，整数，单位元，按年计算（年薪20万以上 写 200000）
- "requirementTags": 从择偶要求中提取的结构化条件，对象或 null，键为 "age_min"、"age_max"（整数，岁），"height_min"、"height_max"（整数，厘米），"education_min"（1 高中及以下，2 大专，3 本科，4 硕士，5 博士），"locations"（地名字符串数组），"marriage_status"（整数数组：1 未婚，2 离异，3 丧偶），"has_house"、"has_car"（要求有房/有车时为 1），没提到的条件写 null
- "confidence": 你对整体识别结果的把握，"high"、"medium" 或 "low"`

// ---------------------------------------------------------------------------------------------
// The answer's schema: lenient where models are (numbers as strings, "" for nothing, 男/女),
// strict about everything else.

/** A finite number, also given as a numeric string ("28"); "" is null. */
const NumericString = Schema.String.pipe(
  Schema.decodeTo(Schema.NullOr(Schema.Number), {
    decode: SchemaGetter.transformEffect((s: string) => {
      const t = s.trim().replace(/,/g, "")
      if (t === "") return Effect.succeed(null)
      const n = Number(t)
      return /^-?\d+(\.\d+)?$/.test(t) && Number.isFinite(n)
        ? Effect.succeed(n)
        : Effect.fail(new SchemaIssue.InvalidValue({ message: `not a number: ${JSON.stringify(s)}` }, s))
    }),
    encode: SchemaGetter.transform((n: number | null) => (n === null ? "" : String(n)))
  })
)

const Num = Schema.NullOr(
  Schema.Union([Schema.Number, NumericString]).check(
    Schema.makeFilter((n) => n === null || Number.isFinite(n) || "not a finite number")
  )
)

/** A trimmed string; "" is null. */
const Text = Schema.NullOr(Schema.String).pipe(
  Schema.decodeTo(
    Schema.NullOr(Schema.String),
    SchemaTransformation.transform({
      decode: (s) => (s === null || s.trim() === "" ? null : s.trim()),
      encode: (s) => s
    })
  )
)

/** A key that may be missing (or undefined): null then. */
const nullableKey = <S extends Schema.Codec<unknown, unknown> & { readonly Encoded: null | unknown }>(s: S) =>
  s.pipe(Schema.withDecodingDefault(Effect.succeed(null as S["Encoded"])))

/** "male"/"female", also 男/女. */
const Gender = Schema.NullOr(Schema.Literals(["male", "female", "男", "女", ""])).pipe(
  Schema.decodeTo(
    Schema.NullOr(Schema.Literals(["male", "female"])),
    SchemaTransformation.transform({
      decode: (g) => (g === "男" ? "male" : g === "女" ? "female" : g === "" ? null : g),
      encode: (g) => g
    })
  )
)

const orEmpty = <const L extends ReadonlyArray<string>>(literals: L) =>
  Schema.NullOr(Schema.Union([Schema.Literals(literals), Schema.Literal("")])).pipe(
    Schema.decodeTo(
      Schema.NullOr(Schema.Literals(literals)),
      SchemaTransformation.transform({
        decode: (v: L[number] | "" | null): L[number] | null => (v === "" ? null : v),
        encode: (v) => v
      })
    )
  )

const Flag = Schema.NullOr(
  Schema.Union([
    Schema.Literals([0, 1]),
    Schema.Boolean.pipe(
      Schema.decodeTo(
        Schema.Literals([0, 1]),
        SchemaTransformation.transform({ decode: (b): 0 | 1 => (b ? 1 : 0), encode: (n) => n === 1 })
      )
    )
  ])
)

const Tags = Schema.Struct({
  age_min: Schema.optional(Num),
  age_max: Schema.optional(Num),
  height_min: Schema.optional(Num),
  height_max: Schema.optional(Num),
  education_min: Schema.optional(Schema.NullOr(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 })))),
  locations: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
  marriage_status: Schema.optional(Schema.NullOr(Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3 }))))),
  has_house: Schema.optional(Flag),
  has_car: Schema.optional(Flag),
  other: Schema.optional(Schema.NullOr(Schema.String))
})

const AiAnswer = Schema.Struct({
  name: nullableKey(Text),
  gender: nullableKey(Gender),
  age: nullableKey(Num),
  height: nullableKey(Num),
  weight: nullableKey(Num),
  education: nullableKey(orEmpty(Education.literals)),
  occupation: nullableKey(Text),
  workplace: nullableKey(Text),
  incomeAmount: nullableKey(Num),
  maritalStatus: nullableKey(orEmpty(MaritalStatus.literals)),
  nativePlace: nullableKey(Text),
  phone: nullableKey(Text),
  selfIntro: nullableKey(Text),
  requirement: nullableKey(Text),
  reqIncomeAmount: nullableKey(Num),
  requirementTags: nullableKey(Schema.NullOr(Tags)),
  confidence: Schema.optional(Schema.NullOr(Schema.Literals(["high", "medium", "low"])))
})
type AiAnswer = typeof AiAnswer.Type

const decodeAnswer = Schema.decodeUnknownEffect(AiAnswer, { errors: "all", onExcessProperty: "ignore" })

const round = (n: number | null): number | null => (n === null ? null : Math.round(n))

const toParsed = (a: AiAnswer): AiParsed => {
  const tags = a.requirementTags
  const parsed: ParsedCard = {
    name: a.name,
    gender: a.gender,
    age: round(a.age),
    height: round(a.height),
    education: a.education,
    occupation: a.occupation,
    incomeAmount: round(a.incomeAmount),
    reqIncomeAmount: round(a.reqIncomeAmount),
    selfIntro: a.selfIntro,
    requirement: a.requirement,
    requirementTags: tags === null
      ? null
      : {
        ...(tags.age_min != null ? { age_min: Math.round(tags.age_min) } : {}),
        ...(tags.age_max != null ? { age_max: Math.round(tags.age_max) } : {}),
        ...(tags.height_min != null ? { height_min: Math.round(tags.height_min) } : {}),
        ...(tags.height_max != null ? { height_max: Math.round(tags.height_max) } : {}),
        ...(tags.education_min != null ? { education_min: tags.education_min } : {}),
        ...(tags.locations != null && tags.locations.length > 0 ? { locations: [...tags.locations] } : {}),
        ...(tags.marriage_status != null && tags.marriage_status.length > 0
          ? { marriage_status: [...tags.marriage_status] }
          : {}),
        ...(tags.has_house != null ? { has_house: tags.has_house } : {}),
        ...(tags.has_car != null ? { has_car: tags.has_car } : {}),
        ...(tags.other != null && tags.other !== "" ? { other: tags.other } : {})
      },
    weight: round(a.weight),
    maritalStatus: a.maritalStatus,
    nativePlace: a.nativePlace,
    phone: a.phone === null ? null : a.phone.replace(/[\s-]/g, ""),
    workplace: a.workplace
  }
  if (parsed.requirementTags !== null && Object.keys(parsed.requirementTags).length === 0) parsed.requirementTags = null
  return { ...parsed, confidence: a.confidence ?? confidenceOf(parsed) }
}

/** The JSON object in a model's text: inside ```json fences if there are any, else from the first `{` to the last `}`. */
export const extractJson = (text: string): string | null => {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text)
  const body = fenced !== null ? fenced[1]! : text
  const start = body.indexOf("{")
  const end = body.lastIndexOf("}")
  return start >= 0 && end > start ? body.slice(start, end + 1) : null
}

/** The ParsedCard in a model's answer text; CardParseError when it holds no valid object. */
export const parseAiAnswer: (text: string) => Effect.Effect<AiParsed, CardParseError> = Effect.fnUntraced(function*(text: string) {
  const json = extractJson(text)
  if (json === null) return yield* new CardParseError({ message: "AI answer holds no JSON object" })
  const value = yield* Effect.try({
    try: (): unknown => JSON.parse(json),
    catch: (e) => new CardParseError({ message: "AI answer is not valid JSON", cause: e })
  })
  const answer = yield* decodeAnswer(value).pipe(
    Effect.mapError((e) => new CardParseError({ message: `AI answer has the wrong shape: ${e.message}`, cause: e }))
  )
  return toParsed(answer)
})

const describeError = (e: unknown): string => {
  if (e instanceof Anthropic.APIConnectionTimeoutError) return "AI request timed out"
  if (e instanceof Anthropic.APIError) return `AI request failed${e.status === undefined ? "" : ` (HTTP ${e.status})`}: ${e.message}`
  return `AI request failed: ${errorMessage(e)}`
}

/** A parser that sends a (normalised PNG) card image to the model and reads its JSON answer. */
export const makeAiParser = (config: AiConfig) => {
  const timeoutMs = config.timeoutMs ?? DEFAULT_AI_TIMEOUT_MS
  const model = config.model ?? DEFAULT_AI_MODEL
  const client = new Anthropic({
    apiKey: config.apiKey,
    ...(config.baseURL !== undefined ? { baseURL: config.baseURL } : {}),
    timeout: timeoutMs,
    maxRetries: config.maxRetries ?? 0
  })

  const parse = (png: Buffer): Effect.Effect<AiParsed, CardParseError> =>
    Effect.tryPromise({
      try: (signal) =>
        client.messages.create(
          {
            model,
            max_tokens: 2048,
            temperature: 0,
            messages: [
              {
                role: "user",
                content: [
                  { type: "image", source: { type: "base64", media_type: "image/png", data: png.toString("base64") } },
                  { type: "text", text: AI_INSTRUCTION }
                ]
              }
            ]
          },
          { signal }
        ),
      catch: (e) => new CardParseError({ message: describeError(e), cause: e })
    }).pipe(
      // Backstop for the SDK's own timeout (which covers each attempt, not retries together).
      Effect.timeoutOrElse({
        duration: Duration.millis(timeoutMs * ((config.maxRetries ?? 0) + 1) + 1000),
        orElse: () => Effect.fail(new CardParseError({ message: "AI request timed out" }))
      }),
      Effect.flatMap((message) => {
        const block = message.content.find((b) => b.type === "text")
        return block === undefined || block.type !== "text"
          ? Effect.fail(new CardParseError({ message: `AI answer has no text (stop reason: ${message.stop_reason ?? "none"})` }))
          : parseAiAnswer(block.text)
      })
    )

  return { parse } as const
}
