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
  | "height"
  | "weight"
  | "education"
  | "occupation"
  | "workplace"
  | "income"
  | "marital"
  | "nativePlace"
  | "phone"
  | "selfIntro"
  | "requirement"
  | "other"

/** Free-text fields run over several lines, until a label opens a line (see splitFields). */
const FREE_FIELDS: ReadonlySet<Field> = new Set(["selfIntro", "requirement"])

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

const LABELS: ReadonlyArray<LabelDef> = [
  ...defs("name", ["名字"], ["姓名"]),
  ...defs("gender", [], ["性别"]),
  ...defs("age", ["年纪"], ["年龄"]),
  ...defs("height", [], ["身高"]),
  ...defs("weight", [], ["体重"]),
  ...defs("education", ["教育程度", "文化程度"], ["学历", "最高学历"]),
  ...defs("occupation", ["工作", "职务"], ["职业"]),
  ...defs("workplace", ["单位", "工作地点", "工作地", "公司"], ["工作单位"]),
  ...defs("income", ["收入", "年入", "工资", "薪资", "月入"], ["年收入", "月收入", "年薪", "月薪"]),
  ...defs("marital", ["婚史"], ["婚姻状况", "婚姻状态", "婚姻", "婚况"]),
  ...defs("nativePlace", ["老家", "户籍", "家乡", "祖籍", "户口"], ["籍贯"]),
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
      "出生年月",
      "出生日期",
      "出生",
      "生日",
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
/**
 * Labels of four or more characters with one character misread (`择仇要求:` for `择偶要求:`), each
 * variant mapped to its label; only recognised when a colon follows, where a misread is unlikely
 * to be anything else.
 */
const FUZZY_LABELS: ReadonlyMap<string, LabelDef> = new Map(
  LABELS.filter((l) => [...l.word].length >= 4).flatMap((l) => {
    const chars = [...l.word]
    return chars.map((_, i) => [chars.map((c, j) => (j === i ? "\0" : c)).join(""), l] as const)
  })
)
const FUZZY_LABEL_RE = new RegExp(
  `(${
    [...new Set([...FUZZY_LABELS.keys()].map((k) => k.split("\0").map(escapeRegExp).join("\\p{Script=Han}")))].join("|")
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

/** A value without the noise around it. */
const trimValue = (s: string): string =>
  s.replace(/^[\s|_\-=·•*#>»«<[\]【】'"“”‘’`:;,.。、!]+/u, "").replace(/[\s|_\-=·•*#>»«<[\]【】'"“”‘’`:;,、]+$/u, "")

/** Joins wrapped lines of free text: no space between CJK text, one between Latin words. */
const joinLines = (parts: ReadonlyArray<string>): string => {
  let out = ""
  for (const raw of parts) {
    const p = raw.trim()
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
    hits.push({ def, start: m.index, end: m.index + m[0].length, colon: m[2] !== undefined, lineStart: m.index === lead })
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
      // colon — or it is the other free-text label followed by a colon.
      const field = hit.def.field
      if (field !== "other" && values.has(field)) return false
      if (FREE_FIELDS.has(field)) return hit.colon || hit.lineStart
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

const shortName = (name: string): string => name.replace(/(?:省|市|地区|盟|特别行政区|壮族自治区|回族自治区|维吾尔自治区|自治区)$/, "")

/** Provinces and prefecture-level cities by short name (`湖南`, `长沙`), longest names first. */
const PLACES: ReadonlyArray<Place> = (() => {
  const out = new Map<string, Place>()
  const add = (name: string, code: string) => {
    if (name.length >= 2 && !NOT_PLACES.has(name) && !out.has(name)) out.set(name, { name, code })
  }
  for (const p of PROVINCES) add(shortName(p.name), p.code)
  for (const c of CITIES) {
    if (/市辖区|县$|直辖|自治州$/.test(c.name)) continue
    add(shortName(c.name), c.code)
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
  for (const clause of text.normalize("NFKC").split(/[,;。!?、\s]+/)) {
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

/** Reads a guest card from its text (OCR output); fields it cannot find are null. Pure. */
export const parseCardText = (text: string): ParsedCard => {
  const lines = cleanLines(text)
  const { values, unlabelled } = splitFields(lines)
  const card = emptyParsedCard()
  const get = (f: Field): string | null => values.get(f)?.value ?? null
  const read = <A>(f: Field, reader: (v: string) => A | null): A | null => {
    const v = get(f)
    return v === null ? null : reader(v)
  }

  card.name = read("name", readName)
  card.gender = read("gender", readGender)
  card.age = read("age", readAge)
  card.height = read("height", readHeight)
  card.weight = read("weight", readWeight)
  card.education = read("education", readEducation)
  card.occupation = read("occupation", (v) => readText(v, 50))
  card.workplace = read("workplace", (v) => readText(v, 100))
  const income = values.get("income")
  card.incomeAmount = income === undefined ? null : parseIncomeText(income.word + income.value)
  card.maritalStatus = read("marital", readMaritalStatus)
  card.nativePlace = read("nativePlace", (v) => readText(v, 50))
  card.phone = read("phone", readPhone)
  card.selfIntro = read("selfIntro", (v) => readText(v, 1000))
  card.requirement = read("requirement", (v) => readText(v, 1000))
  if (card.requirement !== null) {
    card.requirementTags = readRequirementTags(card.requirement)
    card.reqIncomeAmount = readRequiredIncome(card.requirement)
  }
  fallbacks(card, unlabelled.join("\n"), lines.join("\n"))
  return card
}

/** How many of the card's fields were recognised (non-null). */
export const recognisedFieldCount = (parsed: ParsedCard): number => PARSED_CARD_KEYS.filter((k) => parsed[k] !== null).length

/** high: name, gender and age and at least 5 fields; medium: name and gender; low otherwise. */
export const confidenceOf = (parsed: ParsedCard): Confidence => {
  const core = parsed.name !== null && parsed.gender !== null
  if (core && parsed.age !== null && recognisedFieldCount(parsed) >= 5) return "high"
  return core ? "medium" : "low"
}

/** The education code (1..5) of a level, as `requirementTags.education_min` uses it. */
export const educationLevelCode = (education: Education): number => Education.literals.indexOf(education) + 1
