// Rules that turn the text of a guest card (OCR output) into a ParsedCard: labelled fields, units,
// synonyms, the partner requirement's tags, and how confident a result is. Pure (no I/O per call).
import { Education, type MaritalStatus } from "../../schema/Guests.js"
import { parseIncomeText } from "../domain/income.js"
import { CITIES, PROVINCES } from "../domain/regions.js"
import { type CardRequirementTags, type Confidence, emptyParsedCard, PARSED_CARD_KEYS, type ParsedCard } from "./types.js"

// ---------------------------------------------------------------------------------------------
// Labels

type Field =
  | "name"
  | "gender"
  | "age"
  | "birth"
  | "height"
  | "weight"
  | "education"
  | "occupation"
  | "workplace"
  | "income"
  | "reqIncome"
  | "marital"
  | "nativePlace"
  | "phone"
  | "selfIntro"
  | "requirement"
  | "other"

/** Free-text fields run over several lines, until a label opens a line (see splitFields). */
const FREE_FIELDS: ReadonlySet<Field> = new Set(["selfIntro", "requirement", "reqIncome"])
/** The fields a table gives a tall cell of its own (see liftValuesAboveLabels). */
const TALL_CELL_FIELDS: ReadonlySet<Field> = new Set(["selfIntro", "requirement", "reqIncome"])
/** Labels of the form's footer: at the start of a line they end free text even without a colon. */
const FOOTER_WORDS: ReadonlySet<string> = new Set(["登记日期", "登记时间", "填表日期", "日期", "红娘", "编号"])

interface LabelDef {
  readonly word: string
  readonly field: Field
  /** Recognised in the middle of a line without a colon after it (`姓名李明性别男`). */
  readonly weak: boolean
}

const defs = (field: Field, strongOnly: ReadonlyArray<string>, weak: ReadonlyArray<string>): Array<LabelDef> => [
  ...weak.map((word) => ({ word, field, weak: true })),
  ...strongOnly.map((word) => ({ word, field, weak: false }))
]

/**
 * The label vocabulary of real registration forms (嘉宾登记表). Weak labels are the ones a table
 * prints in a cell of its own: tesseract reads a row of cells as `姓名 陈思远 性别 男`, without
 * colons. A few spellings are tesseract's usual misreadings of a label (`箱贯` for 籍贯: 籍 and 箱
 * differ by a stroke group), listed as labels of their own.
 */
const LABELS: ReadonlyArray<LabelDef> = [
  ...defs("name", ["名字", "真实姓名"], ["姓名"]),
  ...defs("gender", [], ["性别"]),
  ...defs("age", ["年纪"], ["年龄"]),
  ...defs("birth", ["出生", "生日", "出生年份"], ["出生年月", "出生日期"]),
  ...defs("height", [], ["身高"]),
  ...defs("weight", [], ["体重"]),
  ...defs("education", ["教育程度", "文化程度"], ["学历", "最高学历"]),
  ...defs("occupation", ["职务"], ["职业", "工作"]),
  ...defs("workplace", ["单位", "工作地点", "工作地", "公司"], ["工作单位"]),
  ...defs("income", ["年入", "工资", "薪资", "月入"], ["收入", "年收入", "月收入", "年薪", "月薪"]),
  ...defs("reqIncome", ["经济要求", "收入条件"], ["收入要求"]),
  ...defs("marital", ["婚史"], ["婚姻状况", "婚姻状态", "婚姻", "婚况"]),
  ...defs("nativePlace", ["老家", "家乡", "祖籍", "户口", "户口所在地"], ["籍贯", "户籍", "箱贯", "藉贯", "户箱", "户藉"]),
  ...defs("phone", ["电话", "手机", "手机号", "手机号码", "联系电话", "联系方式", "电话号码"], []),
  ...defs("selfIntro", ["个人介绍", "个人简介", "自我评价", "自我描述", "关于我"], ["自我介绍"]),
  ...defs(
    "requirement",
    ["择偶条件", "择偶意向", "对另一半的要求", "对另一半要求", "对方要求"],
    ["择偶要求", "择偶标准"]
  ),
  ...defs(
    "other",
    [
      "星座",
      "属相",
      "生肖",
      "登记日期",
      "登记时间",
      "填表日期",
      "日期",
      "身份证",
      "身份证号",
      "现居地",
      "现居",
      "居住地",
      "住址",
      "房产",
      "车辆",
      "房车",
      "住房",
      "兴趣爱好",
      "爱好",
      "家庭情况",
      "家庭成员",
      "子女情况",
      "子女",
      "血型",
      "编号",
      "红娘",
      "QQ",
      "邮箱",
      "宗教",
      "信仰",
      "性格"
    ],
    ["微信", "民族"]
  )
]

const LABEL_BY_WORD: ReadonlyMap<string, LabelDef> = new Map(LABELS.map((l) => [l.word, l]))

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Colon-like characters tesseract produces after a label (NFKC already made `：` into `:`). */
const COLON = "[:;∶﹕]"
const LABEL_RE = new RegExp(
  `(${[...LABEL_BY_WORD.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp).join("|")})(\\s*${COLON}+)?`,
  "g"
)
/** The short labels of the main fields that are also recognised with one character misread. */
const SHORT_FUZZY: ReadonlySet<string> = new Set(["姓名", "性别", "年龄", "身高", "体重", "学历", "籍贯", "户籍", "职业"])

/**
 * Labels with one character misread (`择仇要求:` for `择偶要求:`, `身商:` for `身高:`), each
 * variant mapped to its label: labels of four or more characters, and the short labels of the main
 * fields; only recognised when a colon follows, where a misread is unlikely to be anything else.
 * A variant that could stand for labels of two fields (`年X:`: 年龄 or 年薪) is not used.
 */
const FUZZY_LABELS: ReadonlyMap<string, LabelDef> = (() => {
  const byVariant = new Map<string, Array<LabelDef>>()
  for (const l of LABELS) {
    const chars = [...l.word]
    if (chars.length < 4 && !SHORT_FUZZY.has(l.word)) continue
    chars.forEach((_, i) => {
      const variant = chars.map((c, j) => (j === i ? "\0" : c)).join("")
      byVariant.set(variant, [...(byVariant.get(variant) ?? []), l])
    })
  }
  // Variants that are also exact labels' patterns of other fields are ambiguous too.
  for (const l of LABELS) {
    const chars = [...l.word]
    chars.forEach((_, i) => {
      const variant = chars.map((c, j) => (j === i ? "\0" : c)).join("")
      const defs = byVariant.get(variant)
      if (defs !== undefined && !defs.includes(l)) defs.push(l)
    })
  }
  // One main field among "other" labels (`性X:`: 性别 or 性格) is taken as the main field.
  const out = new Map<string, LabelDef>()
  for (const [variant, ls] of byVariant) {
    const main = ls.filter((l) => l.field !== "other")
    const fields = new Set((main.length > 0 ? main : ls).map((l) => l.field))
    if (fields.size === 1) out.set(variant, (main.length > 0 ? main : ls)[0]!)
  }
  return out
})()
const FUZZY_LABEL_RE = new RegExp(
  `(${
    [...new Set([...FUZZY_LABELS.keys()].map((k) => k.split("\0").map(escapeRegExp).join("\\p{Script=Han}")))]
      .sort((a, b) => b.length - a.length)
      .join("|")
  })(\\s*${COLON}+)`,
  "gu"
)
const fuzzyLabel = (text: string): LabelDef | null => {
  const chars = [...text]
  for (let i = 0; i < chars.length; i++) {
    const def = FUZZY_LABELS.get(chars.map((c, j) => (j === i ? "\0" : c)).join(""))
    if (def !== undefined) return def
  }
  return null
}

/** Noise before the first word of a line: rules, bullets, brackets tesseract reads from borders. */
const LEADING_NOISE = /^[\s|_\-=·•*#>»«<[\]【】()（）'"“”‘’`~.,。、:;!]*/

// ---------------------------------------------------------------------------------------------
// Text clean-up

/** CJK characters and the punctuation next to which a space means nothing. */
const TIGHT = String.raw`[\p{Script=Han}\u3000-\u303f\uff00-\uffef:;,.!?()%]`
const SPACE_NEXT_TO_TIGHT = new RegExp(String.raw`(?<=${TIGHT})[ \t]+|[ \t]+(?=${TIGHT})`, "gu")

/**
 * One line as the rules read it: NFKC (full-width letters, digits and punctuation to ASCII),
 * dashes and tildes as `-`, no spaces next to CJK characters or punctuation (tesseract puts one
 * between every Chinese character), other runs of spaces as one.
 */
const cleanLine = (line: string): string =>
  line
    .normalize("NFKC")
    .replace(/[‐‑‒–—―−〜～~]/g, "-")
    .replace(SPACE_NEXT_TO_TIGHT, "")
    .replace(/[ \t]+/g, " ")
    .trim()

/** The lines of an OCR text, cleaned; empty lines dropped. */
const cleanLines = (text: string): Array<string> => text.split(/\r?\n|\r/).map(cleanLine).filter((l) => l.length > 0)

/** A bracket or bar before a figure of 万/千: a misread 1 (`] 万`), not noise (see repairIncomeText). */
const BRACKET_ONE = /^([\s'"“”‘’`:;,.。、]*)[\]|!](?=\s*\.?\d*\s*[万千])/u

/** A value without the noise around it (a bracket that stands for a 1 stays). */
const trimValue = (s: string): string => {
  const one = BRACKET_ONE.test(s)
  const trimmed = trimNoise(s.replace(BRACKET_ONE, "$1\u0001"))
  return one ? trimmed.replace("\u0001", "]") : trimmed
}

const trimNoise = (s: string): string =>
  s.replace(/^[\s|_\-=·•*#>»«<[\]【】'"“”‘’`:;,.。、!]+/u, "").replace(/[\s|_\-=·•*#>»«<[\]【】'"“”‘’`:;,、]+$/u, "")

/** Joins wrapped lines of free text: no space between CJK text, one between Latin words. */
const joinLines = (parts: ReadonlyArray<string>): string => {
  let out = ""
  for (const raw of parts) {
    // Each wrapped line may begin or end with a remnant of the sheet's edge or a border (`|`, `”`).
    const p = raw.trim().replace(/^[|丨[\]“”"'`]+\s*|\s*[|丨[\]“”"'`]+$/gu, "")
    if (p === "") continue
    if (out === "") out = p
    else if (/[A-Za-z0-9]$/.test(out) && /^[A-Za-z0-9]/.test(p)) out += " " + p
    else out += p
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Splitting the text into labelled values

interface LabelHit {
  readonly def: LabelDef
  /** Where the label starts in the line. */
  readonly start: number
  /** Where the value starts (after the label and its colon). */
  readonly end: number
  readonly colon: boolean
  readonly lineStart: boolean
}

const labelHits = (line: string): Array<LabelHit> => {
  const lead = LEADING_NOISE.exec(line)?.[0].length ?? 0
  const hits: Array<LabelHit> = []
  for (const m of line.matchAll(LABEL_RE)) {
    const def = LABEL_BY_WORD.get(m[1]!)!
    let end = m.index + m[0].length
    let colon = m[2] !== undefined
    // A long label followed by a comma or full stop: tesseract's reading of a colon (`择偶要求，`).
    const comma = colon || [...def.word].length < 4 ? null : /^\s*[,。.]/.exec(line.slice(end))
    if (comma !== null) {
      colon = true
      end += comma[0].length
    }
    hits.push({ def, start: m.index, end, colon, lineStart: m.index === lead })
  }
  for (const m of line.matchAll(FUZZY_LABEL_RE)) {
    const start = m.index
    const end = start + m[0].length
    const overlapping = hits.filter((h) => h.start < end && start < h.end)
    // An exact label with its colon wins; one without (`工作` in `工作单仕:`) gives way.
    if (overlapping.some((h) => h.colon)) continue
    const def = fuzzyLabel(m[1]!)
    if (def === null) continue
    for (const h of overlapping) hits.splice(hits.indexOf(h), 1)
    hits.push({ def, start, end, colon: true, lineStart: start === lead })
  }
  return hits.sort((a, b) => a.start - b.start)
}

interface Open {
  readonly label: LabelDef
  readonly parts: Array<string>
  /** A short field whose label ended its line: its value may be on the next line. */
  waitingForValue: boolean
}

interface Split {
  /** The first non-empty value of each field, with the label word that introduced it. */
  readonly values: Map<Field, { readonly word: string; readonly value: string }>
  /** Text outside any labelled value (titles, unlabelled cards). */
  readonly unlabelled: Array<string>
}

/**
 * Lines reordered where a table's tall cell was read out of order: its label is centred
 * vertically, so tesseract reads the value's first line before the label's line
 * (`40-46岁，身高176以上，…以` / `择偶要求 上。`). A line that opens with no label, between a line
 * whose last field is a short one and a line opening with the label of a tall cell, is moved
 * behind that label.
 */
const liftValuesAboveLabels = (lines: ReadonlyArray<string>): Array<string> => {
  const out = [...lines]
  for (let i = 1; i + 1 < out.length; i++) {
    if (labelHits(out[i]!).some((h) => h.lineStart)) continue
    const next = labelHits(out[i + 1]!).find((h) => h.lineStart)
    if (next === undefined || !TALL_CELL_FIELDS.has(next.def.field)) continue
    const last = labelHits(out[i - 1]!).at(-1)
    if (last === undefined || FREE_FIELDS.has(last.def.field) || last.def.field === "other") continue
    const label = out[i + 1]!.slice(0, next.end)
    out[i + 1] = label + (next.colon ? "" : ":") + out[i] + out[i + 1]!.slice(next.end)
    out.splice(i, 1)
  }
  return out
}

const splitFields = (lines: ReadonlyArray<string>): Split => {
  const values = new Map<Field, { word: string; value: string }>()
  const unlabelled: Array<string> = []
  let open: Open | null = null

  const close = () => {
    if (open === null) return
    const isFree = FREE_FIELDS.has(open.label.field)
    const value = trimValue(isFree ? joinLines(open.parts) : open.parts.join(" "))
    if (value !== "" && !values.has(open.label.field)) values.set(open.label.field, { word: open.label.word, value })
    open = null
  }

  const accepts = (hit: LabelHit): boolean => {
    if (open !== null && FREE_FIELDS.has(open.label.field)) {
      // Free text (self introduction, requirement) talks about age, height, education …: inside
      // it a label only ends it when it names a field not read yet (`年龄:25-30` under 择偶要求 is
      // part of the requirement when the guest's age was read above) and it opens a line with a
      // colon — or it is the other free-text label followed by a colon, or the form's footer.
      const field = hit.def.field
      if (field !== "other" && values.has(field)) return false
      if (FREE_FIELDS.has(field)) return hit.colon || hit.lineStart
      if (FOOTER_WORDS.has(hit.def.word)) return hit.lineStart
      return hit.lineStart && hit.colon
    }
    return hit.colon || hit.lineStart || hit.def.weak
  }

  for (const line of lines) {
    let pos = 0
    // In order: opening a free-text field changes what the later labels on the line mean.
    for (const hit of labelHits(line)) {
      if (!accepts(hit)) continue
      const before = line.slice(pos, hit.start)
      if (open !== null) {
        open.parts.push(before)
        close()
      } else if (trimValue(before) !== "") {
        unlabelled.push(before)
      }
      open = { label: hit.def, parts: [], waitingForValue: false }
      pos = hit.end
    }
    const rest = line.slice(pos)
    if (open === null) {
      if (trimValue(rest) !== "") unlabelled.push(rest)
      continue
    }
    const current: Open = open
    current.parts.push(rest)
    if (!FREE_FIELDS.has(current.label.field)) {
      // A short field ends with its line, unless its value is on the next line.
      if (trimValue(current.parts.join("")) === "" && !current.waitingForValue) current.waitingForValue = true
      else close()
    }
  }
  close()
  return { values, unlabelled }
}

// ---------------------------------------------------------------------------------------------
// Field readers (each takes the cleaned value text)

/** Digits tesseract split with a space (`2 8`, `1 .75`) joined again. */
const joinDigits = (s: string): string => s.replace(/(?<=\d) (?=[\d.])|(?<=\d\.) (?=\d)/g, "")

/** The first number; digits tesseract split with spaces (`2 8岁`) are joined first. */
const firstNumber = (s: string): number | null => {
  const m = /\d+(?:\.\d+)?/.exec(joinDigits(s))
  return m === null ? null : Number(m[0])
}

const inRange = (n: number | null, min: number, max: number): number | null =>
  n !== null && Number.isFinite(n) && n >= min && n <= max ? n : null

/** The name: the first run of Chinese characters, Latin letters or `·`, at most 20 long. */
export const readName = (value: string): string | null => {
  const m = /[\p{Script=Han}A-Za-z·]+(?: [A-Za-z]+)*/u.exec(value)
  if (m === null) return null
  const name = m[0].replace(/^·+|·+$/g, "")
  return name.length >= 1 && name.length <= 20 ? name : null
}

/** 男/男士/先生/男生 → male; 女/女士/女生/小姐 → female; whichever comes first. */
export const readGender = (value: string): "male" | "female" | null => {
  const m = /先生|小姐|男|女/.exec(value)
  if (m === null) return null
  return m[0] === "男" || m[0] === "先生" ? "male" : "female"
}

/** The first number, as whole years from 16 to 99 (`28岁`, `28周岁`, `32%` from a misread 岁). */
export const readAge = (value: string): number | null => {
  const n = firstNumber(value)
  return n === null ? null : inRange(Math.round(n), 16, 99)
}

/** cm: `175`, `175cm`, `175厘米`, `175公分`, `1.75米`, `1.75m`, `1米75`, `1米7`. */
export const readHeight = (value: string): number | null => {
  const v = joinDigits(value.toLowerCase())
  const meterWithCm = /(?<![\d.])([12])米(\d{1,2})/.exec(v)
  if (meterWithCm !== null) {
    const cm = meterWithCm[2]!.length === 1 ? Number(meterWithCm[2]) * 10 : Number(meterWithCm[2])
    return inRange(Number(meterWithCm[1]) * 100 + cm, 100, 250)
  }
  const meters = /(?<![\d.])([12]\.\d{1,2})(?!\d)/.exec(v)
  if (meters !== null) return inRange(Math.round(Number(meters[1]) * 100), 100, 250)
  const n = firstNumber(v)
  return n === null ? null : inRange(Math.round(n), 100, 250)
}

/**
 * kg, rounded: `65kg`, `65公斤`, `65千克`; `130斤` is 65 kg. A bare number above 100 is taken as
 * 斤 (`体重:120` on a Chinese card means 60 kg), otherwise as kg. 30–300 kg, else null.
 */
export const readWeight = (value: string): number | null => {
  const m = /(\d+(?:\.\d+)?)\s*(kg|公斤|千克|斤)?/i.exec(joinDigits(value))
  if (m === null) return null
  const n = Number(m[1])
  const unit = m[2]?.toLowerCase()
  const kg = unit === "斤" || (unit === undefined && n > 100) ? n / 2 : n
  return inRange(Math.round(kg), 30, 300)
}

const EDUCATION_WORDS: ReadonlyArray<readonly [RegExp, Education]> = [
  [/博士/, "博士"],
  [/硕士|研究生|mba|emba|mpa/i, "硕士"],
  [/本科|学士/, "本科"],
  [/大专|专科|高职/, "大专"],
  [/大学/, "本科"],
  [/高中|中专|初中|小学|职高|技校|中技|中职/, "高中及以下"]
]

/** 博士(研究生) → 博士; 硕士/研究生 → 硕士; (大学)本科/学士 → 本科; 大专/专科 → 大专; 高中/中专/初中 → 高中及以下. */
export const readEducation = (value: string): Education | null => {
  for (const [re, education] of EDUCATION_WORDS) if (re.test(value)) return education
  return null
}

/** 未婚/单身 → 未婚; 离异/离婚 → 离异; 丧偶 → 丧偶. */
export const readMaritalStatus = (value: string): MaritalStatus | null => {
  if (/丧偶/.test(value)) return "丧偶"
  if (/离异|离婚/.test(value)) return "离异"
  if (/未婚|单身/.test(value)) return "未婚"
  return null
}

/** Letters tesseract confuses with digits, as digits, where they stand among digits. */
const digitsOnly = (value: string): string =>
  value
    .replace(/(?<=[\d\s-])[Oo](?=[\d\s-])|(?<=[\d\s-])[Oo]$|^[Oo](?=[\d\s-])/g, "0")
    .replace(/(?<=[\d\s-])[lI|](?=[\d\s-])/g, "1")
    .replace(/(?<=\d)[\s-]+(?=\d)/g, "")

const MOBILE = /(?<!\d)1[3-9]\d{9}(?!\d)/
const LANDLINE = /(?<!\d)0\d{2,3}-?\d{7,8}(?!\d)/

/** A mainland mobile number (11 digits), else a landline with area code; spaces and dashes dropped. */
export const readPhone = (value: string): string | null => {
  const v = digitsOnly(value)
  const mobile = MOBILE.exec(v)
  if (mobile !== null) return mobile[0]
  const landline = LANDLINE.exec(v)
  return landline === null ? null : landline[0].replace("-", "")
}

const FULL_WIDTH: Readonly<Record<string, string>> = { ",": "，", ";": "；", ":": "：", "!": "！", "?": "？", "(": "（", ")": "）" }

/** ASCII punctuation next to Chinese text back to full width (NFKC made `，` into `,`). */
const chinesePunctuation = (s: string): string =>
  s.replace(/(?<=\p{Script=Han})[,;:!?()]|[,;:!?()](?=\p{Script=Han})/gu, (c) => FULL_WIDTH[c] ?? c)

/** A text value cut to `max` characters; null when empty. */
const readText = (value: string, max: number): string | null => {
  const v = chinesePunctuation(trimValue(value))
  return v === "" ? null : v.slice(0, max)
}

/**
 * The age from a date of birth (`1994年5月`, `1994.05`, `1994-05-12`): the current year minus the
 * year of birth (ages on cards count years, not birthdays), 16–99, else null.
 */
export const readBirthAge = (value: string, currentYear: number): number | null => {
  const m = /(?<!\d)((?:19|20)\d{2})(?!\d)/.exec(joinDigits(value.replace(/\s+/g, "")))
  return m === null ? null : inRange(currentYear - Number(m[1]), 16, 99)
}

/**
 * An income text with tesseract's confusions undone, and whether any was: `干`/`于` after a digit
 * is 千 (`8 干`), a bracket or bar before 万/千 or among digits is 1 (`] 万`), and a character
 * between 月/年 and a figure that is not 入/收/薪 is 薪 (`月新7千`, `年茜20万`).
 */
export const repairIncomeText = (value: string): { readonly text: string; readonly repaired: boolean } => {
  const v = value.normalize("NFKC").replace(/\s+/g, "")
  // 千 for 干 and 薪 for any character after 月/年 keep the figure and its period: certain repairs.
  const certain = v.replace(/(?<=\d)[干于](?![\d])/g, "千").replace(/(?<=[月年])(?![入收薪])\p{Script=Han}(?=\d)/gu, "薪")
  // A 1 for a bracket or bar is a guess at the figure itself.
  const text = certain.replace(/(?<![\dA-Za-z])[\][|lI!](?=\.?\d*[万千wk])|(?<=\d)[\][|lI!](?=\d)/g, "1")
  return { text, repaired: text !== certain }
}

/** The yearly income of an income field: its label (`月收入`) and its value, confusions undone. */
export const readIncome = (label: string, value: string): { readonly amount: number | null; readonly repaired: boolean } => {
  const { text, repaired } = repairIncomeText(value)
  const amount = parseIncomeText(label + text)
  return { amount: amount === null ? null : inRange(amount, 1_000, 100_000_000), repaired }
}

/** 男/女 and their forms (readGender), or 另 — tesseract's usual reading of a hand-written 男. */
const readGenderTolerant = (value: string): { readonly gender: "male" | "female" | null; readonly repaired: boolean } => {
  const gender = readGender(value)
  if (gender !== null) return { gender, repaired: false }
  return /^[^\p{Script=Han}]*另/u.test(value) ? { gender: "male", repaired: true } : { gender: null, repaired: false }
}

/**
 * Under a marital-status label, a value with one character misread is still read: `X偶` is 丧偶
 * (the only status with 偶), `未X` is 未婚, `离X`/`X异` is 离异.
 */
const readMaritalTolerant = (value: string): { readonly status: MaritalStatus | null; readonly repaired: boolean } => {
  const status = readMaritalStatus(value)
  if (status !== null) return { status, repaired: false }
  const v = value.replace(/[^\p{Script=Han}]/gu, "")
  if (/^\p{Script=Han}偶/u.test(v)) return { status: "丧偶", repaired: true }
  if (/^未/.test(v)) return { status: "未婚", repaired: true }
  if (/^离|^\p{Script=Han}异/u.test(v)) return { status: "离异", repaired: true }
  return { status: null, repaired: false }
}

const shortRegionName = (name: string): string =>
  name.replace(/(?:省|市|地区|盟|特别行政区|壮族自治区|回族自治区|维吾尔自治区|自治区)$/, "")

/** Provinces by short name, each with its prefecture-level cities by short name. */
const PROVINCE_CITIES: ReadonlyArray<{ readonly name: string; readonly cities: ReadonlyArray<string> }> = PROVINCES.map((p) => ({
  name: shortRegionName(p.name),
  cities: CITIES.filter((c) => c.code.startsWith(p.code) && !/市辖区|县$|直辖/.test(c.name)).map((c) => shortRegionName(c.name))
}))

/** How many characters of `word` differ from the start of `text` (Infinity when `text` is shorter). */
const prefixDistance = (text: ReadonlyArray<string>, word: ReadonlyArray<string>): number => {
  if (text.length < word.length) return Infinity
  let diff = 0
  for (let i = 0; i < word.length; i++) if (text[i] !== word[i]) diff++
  return diff
}

/**
 * A native place as province + city (`湖南长沙`), snapped to the real names when one character of
 * the pair is misread (`四川成者` → 四川成都; `安徽合肥了` → 安徽合肥: a stray last character
 * dropped); `checked` is false when no province and city of the region data was recognised (the
 * text is then kept as written).
 */
export const readNativePlace = (value: string): { readonly place: string | null; readonly checked: boolean } => {
  const v = trimValue(value).replace(/\s+/g, "")
  const han = [...v.replace(/[^\p{Script=Han}]/gu, "")]
  let best: { place: string; distance: number; length: number } | null = null
  for (const p of PROVINCE_CITIES) {
    const pd = prefixDistance(han, [...p.name])
    if (pd > 1) continue
    const rest = han.slice([...p.name].length)
    if (rest.length === 0 && pd === 0) best ??= { place: p.name, distance: 0, length: [...p.name].length }
    for (const c of p.cities) {
      const d = pd + prefixDistance(rest, [...c])
      const length = [...p.name].length + [...c].length
      // One misread character in all, and the other characters of each name right.
      if (d > 1 || (best !== null && (d > best.distance || (d === best.distance && length <= best.length)))) continue
      best = { place: p.name + c, distance: d, length }
    }
  }
  if (best === null) return { place: readText(v, 50), checked: false }
  const tail = han.slice(best.length).join("")
  // A trailing stray character is noise; a real suffix (市, 县, a district) is kept.
  const keep = tail.length > 1 || /^[市县区镇乡]/.test(tail) ? tail : ""
  return { place: best.place + keep, checked: true }
}

/** Common surnames (about 95% of the population), single and compound. */
const SURNAMES = new Set([
  ..."王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝",
  "欧阳",
  "司马",
  "上官",
  "诸葛",
  "东方",
  "皇甫",
  "令狐",
  "慕容",
  "夏侯",
  "尉迟",
  "公孙",
  "长孙",
  "宇文",
  "司徒",
  "端木"
])

/** Whether a name looks like a Chinese name: 2–4 Chinese characters after a common surname. */
export const plausibleName = (name: string): boolean => {
  const chars = [...name]
  if (!/^\p{Script=Han}{2,4}$/u.test(name)) return /^[A-Za-z][A-Za-z ]{1,30}$/.test(name)
  return SURNAMES.has(chars[0]!) || SURNAMES.has(chars.slice(0, 2).join(""))
}

// ---------------------------------------------------------------------------------------------
// The partner requirement

const EDUCATION_CODE: ReadonlyArray<readonly [RegExp, number]> = [
  [/博士/, 5],
  [/硕士|研究生/, 4],
  [/本科|大学/, 3],
  [/大专|专科/, 2],
  [/高中|中专/, 1]
]
const educationCode = (word: string): number | null => {
  for (const [re, code] of EDUCATION_CODE) if (re.test(word)) return code
  return null
}

const EDU_WORD = "博士|硕士|研究生|本科|大学|大专|专科|高中|中专"

/** Short region names that are also common words on a card; never read as places. */
const NOT_PLACES: ReadonlySet<string> = new Set(["中山", "大同", "安康", "来宾", "长治", "白城", "白山", "黑河", "普洱", "三沙"])

interface Place {
  readonly name: string
  /** 2 digits for a province, 4 for a city. */
  readonly code: string
}

/** Provinces and prefecture-level cities by short name (`湖南`, `长沙`), longest names first. */
const PLACES: ReadonlyArray<Place> = (() => {
  const out = new Map<string, Place>()
  const add = (name: string, code: string) => {
    if (name.length >= 2 && !NOT_PLACES.has(name) && !out.has(name)) out.set(name, { name, code })
  }
  for (const p of PROVINCES) add(shortRegionName(p.name), p.code)
  for (const c of CITIES) {
    if (/市辖区|县$|直辖|自治州$/.test(c.name)) continue
    add(shortRegionName(c.name), c.code)
  }
  add("香港", "81")
  add("澳门", "82")
  add("台湾", "71")
  return [...out.values()].sort((a, b) => b.name.length - a.name.length)
})()
const PLACE_RE = new RegExp(PLACES.map((p) => escapeRegExp(p.name)).join("|"), "g")
const PLACE_BY_NAME: ReadonlyMap<string, Place> = new Map(PLACES.map((p) => [p.name, p]))

/** Provinces and cities named in a text, in order, without repeats; `湖南长沙` gives only 长沙. */
export const readPlaces = (text: string): Array<string> => {
  const found: Array<{ place: Place; start: number; end: number }> = []
  for (const m of text.matchAll(PLACE_RE)) {
    found.push({ place: PLACE_BY_NAME.get(m[0])!, start: m.index, end: m.index + m[0].length })
  }
  const names: Array<string> = []
  found.forEach((f, i) => {
    const next = found[i + 1]
    const isProvinceOfNext = f.place.code.length === 2 && next !== undefined && next.start === f.end &&
      next.place.code.startsWith(f.place.code)
    if (!isProvinceOfNext && !names.includes(f.place.name)) names.push(f.place.name)
  })
  return names
}

const validAge = (n: number): boolean => n >= 18 && n <= 100
const validHeight = (n: number): boolean => n >= 100 && n <= 250

/** cm from `165`, `1.65`, `1米65`. */
const heightNumber = (s: string): number => {
  const mc = /^([12])米(\d{1,2})$/.exec(s)
  if (mc !== null) return Number(mc[1]) * 100 + (mc[2]!.length === 1 ? Number(mc[2]) * 10 : Number(mc[2]))
  const n = Number(s)
  return n < 3 ? Math.round(n * 100) : Math.round(n)
}

const NEGATED_BEFORE = /(?:不接受|不考虑|不要|不能|拒绝|谢绝|勿|非|无)$/
const NEGATED_AFTER = /^[^,;。]{0,4}?(?:不考虑|不接受|勿扰|免谈|者勿|不行|不要)/
const ACCEPTED_BEFORE = /(?:不介意|不在意|不排斥|不嫌弃|(?<!不)接受|可以|(?<!不)可)$/
const ACCEPTANCE = /不介意|不在意|不排斥|(?<!不)接受|均可|都可|也可|也行|可以|不限/

const readMarriageStatus = (text: string): Array<number> | null => {
  const positive = new Set<number>()
  let negated = false
  for (const m of text.matchAll(/未婚|离异|离婚|丧偶/g)) {
    const code = m[0] === "未婚" ? 1 : m[0] === "丧偶" ? 3 : 2
    const before = text.slice(Math.max(0, m.index - 4), m.index)
    const after = text.slice(m.index + m[0].length, m.index + m[0].length + 8)
    if ((NEGATED_BEFORE.test(before) && !ACCEPTED_BEFORE.test(before)) || NEGATED_AFTER.test(after)) negated = true
    else positive.add(code)
  }
  // Accepting a divorced or widowed partner implies accepting a never-married one.
  if ((positive.has(2) || positive.has(3)) && ACCEPTANCE.test(text)) positive.add(1)
  if (positive.size === 0 && negated) positive.add(1)
  return positive.size === 0 ? null : [...positive].sort((a, b) => a - b)
}

const BOTH = "(?:房车|车房)(?:齐全|都有|皆有|俱全)"
const ASKS: Readonly<Record<"房" | "车", RegExp>> = {
  房: new RegExp(`有房|${BOTH}`, "g"),
  车: new RegExp(`有车|有房车|${BOTH}`, "g")
}

/** 1 when the text asks for a house (`有房`, `有房有车`, `房车齐全`); null otherwise (`不要求有房`, `有房与否不限`). */
const asksFor = (text: string, thing: "房" | "车"): 1 | null => {
  for (const m of text.matchAll(ASKS[thing])) {
    const before = text.slice(Math.max(0, m.index - 4), m.index)
    if (/(?:不要求|无需|不需|不必|不用|没|无|不)$/.test(before)) continue
    const after = text.slice(m.index + m[0].length, m.index + m[0].length + 3)
    if (/^(?:无|与否|不限|均可|没)/.test(after)) continue
    return 1
  }
  return null
}

/**
 * The tags a requirement text states plainly: age range (`25-32岁`, `28岁以上`, `年龄25-32`),
 * height (`身高165以上`, `160cm以上`, `身高165-180`, `1.65米以上`), education floor (`本科以上`,
 * `学历本科`), marital statuses (`未婚`, `不介意离异` → [1, 2]), `有房`/`有车` → 1, and places
 * (provinces and cities). Null when none is found.
 */
export const readRequirementTags = (text: string): CardRequirementTags | null => {
  const t = text.normalize("NFKC").replace(/[‐‑‒–—―−〜～~至到]/g, "-").replace(/\s+/g, "")
  const tags: CardRequirementTags = {}

  const ageRange = /(?:年龄(?:要求)?:?)?(\d{2})(?:周?岁)?-(\d{2})(?:周?岁)/.exec(t) ?? /年龄(?:要求)?:?(\d{2})-(\d{2})/.exec(t)
  if (ageRange !== null) {
    const a = Number(ageRange[1])
    const b = Number(ageRange[2])
    if (validAge(a) && validAge(b) && a <= b) {
      tags.age_min = a
      tags.age_max = b
    }
  } else {
    const min = /(\d{2})周?岁(?:及|或)?(?:以上|起)/.exec(t)
    if (min !== null && validAge(Number(min[1]))) tags.age_min = Number(min[1])
    const max = /(\d{2})周?岁(?:及|或)?(?:以下|以内|之内)/.exec(t)
    if (max !== null && validAge(Number(max[1]))) tags.age_max = Number(max[1])
  }

  const H = String.raw`(\d{3}|[12]\.\d{1,2}|[12]米\d{1,2})`
  const HU = String.raw`(?:cm|厘米|公分|米|m)?`
  const heightRange = new RegExp(`身高(?:要求)?:?${H}${HU}-${H}${HU}`, "i").exec(t)
  if (heightRange !== null) {
    const a = heightNumber(heightRange[1]!)
    const b = heightNumber(heightRange[2]!)
    if (validHeight(a) && validHeight(b) && a <= b) {
      tags.height_min = a
      tags.height_max = b
    }
  } else {
    const minWithLabel = new RegExp(`身高(?:要求)?(?:在)?:?${H}${HU}(?:及|或)?(?:以上|起|\\+)`, "i").exec(t)
    const minWithUnit = new RegExp(`${H}(?:cm|厘米|公分|米|m)(?:及|或)?(?:以上|起|\\+)`, "i").exec(t)
    const min = minWithLabel ?? minWithUnit
    if (min !== null && validHeight(heightNumber(min[1]!))) tags.height_min = heightNumber(min[1]!)
    const max = new RegExp(`身高(?:要求)?(?:在)?:?${H}${HU}(?:及|或)?(?:以下|以内)`, "i").exec(t)
    if (max !== null && validHeight(heightNumber(max[1]!))) tags.height_max = heightNumber(max[1]!)
  }

  const edu = new RegExp(`(${EDU_WORD})(?:学历)?(?:及|或)?(?:以上|起)`).exec(t) ??
    new RegExp(`学历(?:要求)?(?:在)?:?(${EDU_WORD})`).exec(t)
  if (edu !== null) {
    const code = educationCode(edu[1]!)
    if (code !== null) tags.education_min = code
  }

  const marriage = readMarriageStatus(t)
  if (marriage !== null) tags.marriage_status = marriage
  const house = asksFor(t, "房")
  if (house !== null) tags.has_house = house
  const car = asksFor(t, "车")
  if (car !== null) tags.has_car = car
  const places = readPlaces(t)
  if (places.length > 0) tags.locations = places

  return Object.keys(tags).length === 0 ? null : tags
}

const INCOME_WORDS = /收入|薪|月入|年入|工资|挣/

/** The partner income floor (yearly yuan) from the first clause of the requirement that talks about income. */
export const readRequiredIncome = (text: string): number | null => {
  // Clauses wrap across lines (`年收入1` / `5万以上`): spaces between digits are joined first.
  for (const raw of joinDigits(text.normalize("NFKC")).split(/[,;。!?、]+/)) {
    const clause = repairIncomeText(raw).text
    if (!INCOME_WORDS.test(clause)) continue
    const amount = parseIncomeText(clause)
    if (amount !== null) return amount
  }
  return null
}

// ---------------------------------------------------------------------------------------------
// The whole card

/** Reads fields that stand without a label (`李明 男 28岁`) from text outside every labelled value. */
const fallbacks = (card: ParsedCard, unlabelled: string, allText: string): void => {
  if (card.gender === null) {
    const m = /(?:^|[\s,，(（/、])(男|女)(?:士|生)?(?=$|[\s,，)）/、\d])|男士|女士|先生|女生/.exec(unlabelled)
    if (m !== null) card.gender = readGender(m[0])
  }
  if (card.age === null) {
    const m = /(?<![\d-])(\d{2})周?岁(?![\d-]|以)/.exec(unlabelled)
    if (m !== null) card.age = readAge(m[1]!)
  }
  if (card.height === null) {
    const m = /(?<!\d)(\d{3})\s*(?:cm|厘米|公分)/i.exec(unlabelled)
    if (m !== null) card.height = readHeight(m[0])
  }
  if (card.phone === null) {
    const m = MOBILE.exec(digitsOnly(allText))
    if (m !== null) card.phone = m[0]
  }
}

/** What the rules need to know besides the text. */
export interface CardTextContext {
  /** The current year in the platform time zone (出生年月 → age); default: this year in Asia/Shanghai. */
  readonly currentYear?: number
  /** Words OCR was unsure of (see OcrReading): a short field whose value holds one is doubted. */
  readonly uncertain?: ReadonlyArray<string>
}

/**
 * The fields whose reading an uncertain OCR word puts in doubt, with the parsed key and which words
 * count: text kept as written (name, occupation, workplace) by any uncertain word in it; figures
 * by uncertain words of two or more characters with digits (an unsure 岁 or 厘米 changes nothing). Values read through a
 * vocabulary (gender, education, marital status) or checked against region data (native place)
 * are not: a known word read with low confidence is still that word.
 */
const UNCERTAINTY_CHECKED: Partial<Record<Field, { readonly key: keyof ParsedCard; readonly digitsOnly: boolean }>> = {
  name: { key: "name", digitsOnly: false },
  occupation: { key: "occupation", digitsOnly: false },
  workplace: { key: "workplace", digitsOnly: false },
  age: { key: "age", digitsOnly: true },
  birth: { key: "age", digitsOnly: true },
  height: { key: "height", digitsOnly: true },
  weight: { key: "weight", digitsOnly: true },
  income: { key: "incomeAmount", digitsOnly: true },
  reqIncome: { key: "reqIncomeAmount", digitsOnly: true },
  phone: { key: "phone", digitsOnly: true }
}

/** The calendar year of an instant in a time zone. */
export const currentYearIn = (timeZone: string, now: Date): number =>
  Number(new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric" }).format(now))

/** A card as read, with the fields whose reading needed a repair or failed a check. */
export interface CardReading {
  readonly parsed: ParsedCard
  /** Keys of `parsed` read by tolerating a misreading, or whose text did not pass its check. */
  readonly doubts: ReadonlyArray<keyof ParsedCard>
}

/**
 * Where a short text value ran on past its cell into the next one's unread label or figure
 * (`会计月新7千`: an occupation has no figures).
 */
const RUN_ON = /(?:[月年]\p{Script=Han}?)?\d|收入|年薪|月薪|婚姻|籍贯|户籍|学历|身高|体重|年龄|性别|登记/u

/** Reads a guest card from its text (OCR output): the fields (null where not found) and the doubts. Pure. */
export const readCard = (text: string, context: CardTextContext = {}): CardReading => {
  const currentYear = context.currentYear ?? currentYearIn("Asia/Shanghai", new Date())
  const lines = liftValuesAboveLabels(cleanLines(text))
  const { values, unlabelled } = splitFields(lines)
  const card = emptyParsedCard()
  const doubts = new Set<keyof ParsedCard>()
  const get = (f: Field): string | null => values.get(f)?.value ?? null
  const read = <A>(f: Field, reader: (v: string) => A | null): A | null => {
    const v = get(f)
    return v === null ? null : reader(v)
  }
  /** A short text value, cut where another field's label ran into it. */
  const shortText = (v: string, max: number, key: keyof ParsedCard): string | null => {
    const m = RUN_ON.exec(v)
    if (m !== null && m.index > 0) doubts.add(key)
    return readText(m !== null && m.index > 0 ? v.slice(0, m.index) : v, max)
  }

  card.name = read("name", readName)
  if (card.name !== null && !plausibleName(card.name)) doubts.add("name")
  const gender = read("gender", readGenderTolerant)
  card.gender = gender?.gender ?? null
  if (gender?.repaired) doubts.add("gender")
  card.age = read("age", readAge) ?? read("birth", (v) => readBirthAge(v, currentYear))
  card.height = read("height", readHeight)
  card.weight = read("weight", readWeight)
  card.education = read("education", readEducation)
  card.occupation = read("occupation", (v) => shortText(v, 50, "occupation"))
  card.workplace = read("workplace", (v) => readText(v, 100))
  const income = values.get("income")
  if (income !== undefined) {
    const { amount, repaired } = readIncome(income.word, income.value)
    card.incomeAmount = amount
    if (repaired) doubts.add("incomeAmount")
  }
  const marital = read("marital", readMaritalTolerant)
  card.maritalStatus = marital?.status ?? null
  if (marital?.repaired) doubts.add("maritalStatus")
  const place = read("nativePlace", readNativePlace)
  card.nativePlace = place?.place ?? null
  if (place !== null && !place.checked) doubts.add("nativePlace")
  card.phone = read("phone", readPhone)
  card.selfIntro = read("selfIntro", (v) => readText(v, 1000))
  card.requirement = read("requirement", (v) => readText(v, 1000))
  if (card.requirement !== null) {
    card.requirementTags = readRequirementTags(card.requirement)
    card.reqIncomeAmount = readRequiredIncome(card.requirement)
  }
  // A row of its own (收入要求: 月入1万以上) says it more plainly than a clause of the requirement.
  const reqIncome = values.get("reqIncome")
  if (reqIncome !== undefined) {
    const { amount, repaired } = readIncome("", reqIncome.value)
    if (amount !== null) {
      card.reqIncomeAmount = amount
      if (repaired) doubts.add("reqIncomeAmount")
    }
  }
  fallbacks(card, unlabelled.join("\n"), lines.join("\n"))
  // A value holding a word OCR was unsure of (a misread character of a name scores far lower
  // than the right ones) is doubted.
  const uncertain = (context.uncertain ?? []).map((w) => w.normalize("NFKC").replace(/\s+/g, "")).filter((w) => w !== "")
  if (uncertain.length > 0) {
    for (const [field, { value }] of values) {
      const check = UNCERTAINTY_CHECKED[field]
      if (check === undefined || card[check.key] === null) continue
      const compact = value.replace(/\s+/g, "")
      // A lone unsure digit is a stray mark (a border remnant read as `1`), not the figure.
      if (uncertain.some((w) => (!check.digitsOnly || (/\d/.test(w) && w.length >= 2)) && compact.includes(w))) doubts.add(check.key)
    }
  }
  return { parsed: card, doubts: [...doubts] }
}

/** Reads a guest card from its text (OCR output); fields it cannot find are null. Pure. */
export const parseCardText = (text: string, context: CardTextContext = {}): ParsedCard => readCard(text, context).parsed

/** How many of the card's fields were recognised (non-null). */
export const recognisedFieldCount = (parsed: ParsedCard): number => PARSED_CARD_KEYS.filter((k) => parsed[k] !== null).length

/**
 * The checks of a card's fields against each other: whether what was read hangs together (a
 * real-looking name, weight for height, an income of a plausible size, a birth age …). Each
 * failed check names the fields it doubts.
 */
export const crossCheckDoubts = (p: ParsedCard): Array<keyof ParsedCard> => {
  const doubts: Array<keyof ParsedCard> = []
  if (p.name !== null && !plausibleName(p.name)) doubts.push("name")
  if (p.age !== null && (p.age < 18 || p.age > 80)) doubts.push("age")
  if (p.height !== null && (p.height < 140 || p.height > 210)) doubts.push("height")
  if (p.height !== null && p.weight !== null) {
    const bmi = p.weight / (p.height / 100) ** 2
    if (bmi < 14 || bmi > 40) doubts.push("weight")
  }
  if (p.incomeAmount !== null && (p.incomeAmount < 12_000 || p.incomeAmount > 10_000_000)) doubts.push("incomeAmount")
  if (p.reqIncomeAmount !== null && (p.reqIncomeAmount < 12_000 || p.reqIncomeAmount > 10_000_000)) doubts.push("reqIncomeAmount")
  const tags = p.requirementTags
  if (tags?.age_min != null && tags.age_max != null && tags.age_max - tags.age_min > 30) doubts.push("requirementTags")
  return doubts
}

/**
 * high: name, gender and age and at least 5 fields, and every field passed its checks (no
 * misreading was tolerated, no cross-check failed: see readCard and crossCheckDoubts); medium:
 * name and gender; low otherwise.
 */
export const confidenceOf = (parsed: ParsedCard, doubts: ReadonlyArray<keyof ParsedCard> = []): Confidence => {
  const core = parsed.name !== null && parsed.gender !== null
  if (!core) return "low"
  const agree = doubts.length === 0 && crossCheckDoubts(parsed).length === 0
  return parsed.age !== null && recognisedFieldCount(parsed) >= 5 && agree ? "high" : "medium"
}

/** The education code (1..5) of a level, as `requirementTags.education_min` uses it. */
export const educationLevelCode = (education: Education): number => Education.literals.indexOf(education) + 1
