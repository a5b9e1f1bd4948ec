// Income levels and the reading of free-text income requirements (DECISIONS.md §6). Pure: no I/O.

/** The six income levels, lowest first; the code of a level is its position + 1 (1..6). */
export const INCOME_LEVELS = ["10万以下", "10-20万", "20-30万", "30-50万", "50-100万", "100万以上"] as const
export type IncomeLevel = (typeof INCOME_LEVELS)[number]

const LOWER_BOUNDS: Readonly<Record<IncomeLevel, number>> = {
  "10万以下": 0,
  "10-20万": 100_000,
  "20-30万": 200_000,
  "30-50万": 300_000,
  "50-100万": 500_000,
  "100万以上": 1_000_000
}

/** The yearly amount in yuan at which a level starts (ranges are lower-inclusive). */
export const incomeLevelLowerBound = (level: IncomeLevel): number => LOWER_BOUNDS[level]

/**
 * The level a yearly amount in yuan falls in. Ranges are lower-inclusive; anything below
 * 100,000 (including negative amounts and NaN) is the lowest level.
 */
export const incomeLevelOf = (amountYuan: number): IncomeLevel => {
  for (let i = INCOME_LEVELS.length - 1; i > 0; i--) {
    const level = INCOME_LEVELS[i]!
    if (amountYuan >= LOWER_BOUNDS[level]) return level
  }
  return INCOME_LEVELS[0]
}

/** The code (1..6) of a level, as used by `requirement_tags.income_min`. */
export const incomeLevelCode = (level: IncomeLevel): number => INCOME_LEVELS.indexOf(level) + 1

/** The lower bound in yuan of the level with this code (1..6); null for any other value. */
export const incomeLevelMinAmount = (code: number): number | null => {
  if (!Number.isInteger(code) || code < 1 || code > INCOME_LEVELS.length) return null
  return LOWER_BOUNDS[INCOME_LEVELS[code - 1]!]
}

// ---------------------------------------------------------------------------------------------
// Free text → yearly lower bound in yuan.

const NUMBER = String.raw`\d+(?:\.\d+)?`
const UNIT = "(万|w|千|k)"
const RANGE_SEP = "[-~到至]"
/** First figure, its optional unit, and an optional second figure of a range with its unit. */
const FIGURES = new RegExp(`(${NUMBER})${UNIT}?(?:${RANGE_SEP}(${NUMBER})${UNIT}?)?`, "g")

const UNIT_FACTOR: Readonly<Record<string, number>> = { 万: 10_000, w: 10_000, 千: 1_000, k: 1_000 }

/** Chinese numerals accepted before a unit (`十万`, `二十万`, `五千`, `两万`). */
const CN_DIGITS: Readonly<Record<string, number>> = {
  一: 1,
  二: 2,
  两: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  七: 7,
  八: 8,
  九: 9
}
const CN_NUMBER_BEFORE_UNIT = /([一二两三四五六七八九]?十[一二三四五六七八九]?|[一二两三四五六七八九])(?=万|千)/g

const cnToNumber = (s: string): number => {
  const ten = s.indexOf("十")
  if (ten < 0) return CN_DIGITS[s] ?? 0
  const tens = ten === 0 ? 1 : (CN_DIGITS[s[0]!] ?? 0)
  const ones = ten === s.length - 1 ? 0 : (CN_DIGITS[s[ten + 1]!] ?? 0)
  return tens * 10 + ones
}

/** Words whose `年` is not a period marker. */
const NOT_A_YEAR = /年龄|年纪|年轻|年限/g

/** Phrases that make the figure an upper bound (no lower bound follows from it). */
const UPPER_BOUND_BEFORE = /(不超过|不高于|不多于|(?<!不)低于|(?<!不)少于|(?<!不)小于|最多|最高|<=?|≤)$/
const UPPER_BOUND_AFTER = /^(元|块)?(\/?(每)?(个)?(月|年))?(以下|以内|之内|内)/

const normalize = (text: string): string =>
  text
    .normalize("NFKC") // full-width digits and punctuation → ASCII
    .toLowerCase()
    .replace(/\s+/g, "")
    .replace(/[‐‑‒–—―−〜～]/g, (c) => (c === "〜" || c === "～" ? "~" : "-"))
    .replace(/(\d),(?=\d{3}(?!\d))/g, "$1") // thousands separators: 300,000
    .replace(/[过上](?=万)/g, "1") // 月入过万 / 上万 → 1万
    .replace(/(?<![\d一二两三四五六七八九十])百万/g, "100万") // 年薪百万
    .replace(CN_NUMBER_BEFORE_UNIT, (s) => String(cnToNumber(s)))

/**
 * Whether the figure spanning [start, end) is monthly: decided by the period marker (`月…` or
 * `年…`) nearest to it; without any marker the figure is yearly.
 */
const isMonthly = (s: string, start: number, end: number): boolean => {
  const text = s.replace(NOT_A_YEAR, (m) => "_".repeat(m.length))
  let best: { distance: number; monthly: boolean } | null = null
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c !== "月" && c !== "年") continue
    const distance = i < start ? start - i : i >= end ? i - end + 1 : 0
    if (best === null || distance < best.distance) best = { distance, monthly: c === "月" }
  }
  return best?.monthly ?? false
}

/**
 * The yearly lower bound in yuan that a free-text income requirement (`req_income_text`) asks
 * for, or null when it asks for none or cannot be read. Never throws.
 *
 * - `万`/`w` ×10,000, `千`/`k` ×1,000; a monthly figure (`月`, `月薪`, `月入`, `每月`, `/月`) ×12;
 *   a figure without a period is yearly.
 * - A range (`15-30万`, `15~30万`, `15到30万`, `15至30万`) gives its lower end; a unit written
 *   only after the second number applies to both.
 * - `以上`, `+`, `起`, `不低于`, `至少`, `>=`, `≥` do not change the figure.
 * - An upper bound (`10万以下`, `不超过10万`) is not a lower bound: it is skipped.
 * - A number without unit is yuan when at least 1000, otherwise ambiguous.
 * - The first usable figure is the one read: ambiguous numbers (`30岁`, `3年`) and upper bounds
 *   are skipped; with none left the result is null. Results are rounded to whole yuan.
 */
export const parseIncomeText = (text: string | null | undefined): number | null => {
  if (text === null || text === undefined) return null
  const s = normalize(text)
  for (const m of s.matchAll(FIGURES)) {
    const [whole, first, firstUnit, second, secondUnit] = m
    const unit = firstUnit ?? (second !== undefined ? secondUnit : undefined)
    const value = Number(first)
    if (!Number.isFinite(value)) continue
    if (unit === undefined && value < 1000) continue // ambiguous (`30岁`, `3年`, `800`)
    const start = m.index
    const end = start + whole.length
    if (second === undefined) {
      if (UPPER_BOUND_BEFORE.test(s.slice(0, start)) || UPPER_BOUND_AFTER.test(s.slice(end))) continue
    }
    const yuan = value * (unit === undefined ? 1 : (UNIT_FACTOR[unit] ?? 1))
    return Math.round(isMonthly(s, start, end) ? yuan * 12 : yuan)
  }
  return null
}
