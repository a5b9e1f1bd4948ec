// Income levels and the reading of free-text income requirements (DECISIONS §6).
import { describe, expect, it } from "@effect/vitest"

import {
  INCOME_LEVELS,
  type IncomeLevel,
  incomeLevelCode,
  incomeLevelLowerBound,
  incomeLevelMinAmount,
  incomeLevelOf,
  parseIncomeText
} from "../../src/domain/income.js"

describe("income levels", () => {
  const table: ReadonlyArray<readonly [IncomeLevel, number, number]> = [
    ["10万以下", 1, 0],
    ["10-20万", 2, 100_000],
    ["20-30万", 3, 200_000],
    ["30-50万", 4, 300_000],
    ["50-100万", 5, 500_000],
    ["100万以上", 6, 1_000_000]
  ]
  for (const [level, code, bound] of table) {
    it(`level ${level} has code ${code} and starts at ${bound} yuan`, () => {
      expect(incomeLevelCode(level)).toBe(code)
      expect(incomeLevelLowerBound(level)).toBe(bound)
      expect(incomeLevelMinAmount(code)).toBe(bound)
      expect(incomeLevelOf(bound)).toBe(level)
    })
  }

  it("the levels are listed lowest first", () => {
    expect(INCOME_LEVELS.map(incomeLevelLowerBound)).toEqual([0, 100_000, 200_000, 300_000, 500_000, 1_000_000])
  })

  const amounts: ReadonlyArray<readonly [string, number, IncomeLevel]> = [
    ["zero is the lowest level", 0, "10万以下"],
    ["just below a bound stays in the level below", 99_999, "10万以下"],
    ["a bound belongs to the level it starts (lower-inclusive)", 100_000, "10-20万"],
    ["a bound belongs to the level it starts: 20万", 200_000, "20-30万"],
    ["just below 30万 is 20-30万", 299_999, "20-30万"],
    ["30万 starts 30-50万", 300_000, "30-50万"],
    ["49.9万 is 30-50万", 499_999, "30-50万"],
    ["50万 starts 50-100万", 500_000, "50-100万"],
    ["just below 100万 is 50-100万", 999_999, "50-100万"],
    ["100万 starts the top level", 1_000_000, "100万以上"],
    ["anything above 100万 is the top level", 50_000_000, "100万以上"],
    ["a negative amount is the lowest level", -5, "10万以下"],
    ["NaN is the lowest level", Number.NaN, "10万以下"]
  ]
  for (const [rule, amount, level] of amounts) {
    it(`incomeLevelOf: ${rule}`, () => expect(incomeLevelOf(amount)).toBe(level))
  }

  const badCodes: ReadonlyArray<readonly [string, number]> = [
    ["code 0 is outside 1-6", 0],
    ["code 7 is outside 1-6", 7],
    ["a negative code is outside 1-6", -1],
    ["a fractional code is not a level", 2.5],
    ["NaN is not a level", Number.NaN]
  ]
  for (const [rule, code] of badCodes) {
    it(`incomeLevelMinAmount: ${rule}`, () => expect(incomeLevelMinAmount(code)).toBeNull())
  }
})

describe("parseIncomeText", () => {
  const table: ReadonlyArray<readonly [string, string | null | undefined, number | null]> = [
    // units and periods
    ["w after 年薪 is ×10,000 yearly", "年薪30w", 300_000],
    ["千 after 月入 is ×1,000 monthly (×12)", "月入8千", 96_000],
    ["月薪 marks a monthly figure", "月薪1万", 120_000],
    ["k with /月 is monthly", "8k/月", 96_000],
    ["upper-case W and K are units too", "年薪30W", 300_000],
    ["upper-case K is ×1,000", "月薪8K", 96_000],
    ["a figure without a period is yearly", "50万", 500_000],
    ["每月 marks a monthly figure", "每月收入不低于6千", 72_000],
    ["/年 marks a yearly figure", "30万/年", 300_000],
    ["万元 reads as 万", "年收入20万元以上", 200_000],
    ["decimals are allowed with 万", "1.5万", 15_000],
    ["decimals are allowed with w after 年薪", "年薪1.2w", 12_000],
    ["decimal monthly figure is rounded to whole yuan", "月薪1.25万", 150_000],
    ["a monthly k figure with 月入 prefix", "月入1.5k", 18_000],
    // ranges
    ["a range gives its lower end; the unit after the second number applies to both", "15-30万", 150_000],
    ["~ is a range separator", "15~30万", 150_000],
    ["到 is a range separator", "15到30万", 150_000],
    ["至 is a range separator", "15至30万", 150_000],
    ["an em dash is a range separator", "15—30w", 150_000],
    ["a monthly range gives its monthly lower end ×12", "月薪8千-1万", 96_000],
    ["a range where both ends carry the unit", "20万-40万", 200_000],
    ["a bare-yuan monthly range", "月入5000-8000", 60_000],
    ["a yearly range with 年薪 and w", "年薪20-30w", 200_000],
    // lower-bound phrasing
    ["以上 keeps the figure", "20万以上", 200_000],
    ["+ keeps the figure", "20万+", 200_000],
    ["w+ keeps the figure", "10w+", 100_000],
    ["不低于 keeps the figure", "不低于20万", 200_000],
    ["年收入不低于 is a yearly lower bound", "年收入不低于20万", 200_000],
    ["至少 keeps the figure", "至少20万", 200_000],
    ["起 keeps the figure", "20万起", 200_000],
    [">= keeps the figure", ">=20万", 200_000],
    ["≥ keeps the figure", "≥20万", 200_000],
    ["a bare monthly figure with 以上 is yuan ×12", "月收入5000以上", 60_000],
    // no requirement
    ["不限 asks for nothing", "不限", null],
    ["无要求 asks for nothing", "无要求", null],
    ["都可以 asks for nothing", "都可以", null],
    ["无所谓 asks for nothing", "无所谓", null],
    ["收入不限 asks for nothing", "收入不限", null],
    ["empty text asks for nothing", "", null],
    ["whitespace-only text asks for nothing", "   ", null],
    ["null asks for nothing", null, null],
    ["undefined asks for nothing", undefined, null],
    ["text with no figure gives null", "有房有车", null],
    ["vague text with no figure gives null", "收入稳定，有上进心", null],
    // bare numbers
    ["a bare number of at least 1000 is yuan", "300000", 300_000],
    ["a bare number of exactly 1000 is yuan", "1000", 1_000],
    ["a bare 8000 is yearly yuan", "8000", 8_000],
    ["a bare number below 1000 is ambiguous", "30", null],
    ["a bare number below 1000 with a period is still ambiguous", "月薪800", null],
    ["a bare number with 元 is yuan", "年收入150000元", 150_000],
    ["thousands separators are ignored", "300,000元", 300_000],
    // full-width, spaces
    ["full-width digits are read", "２０万", 200_000],
    ["a full-width dash separates a range", "１５－３０万", 150_000],
    ["a full-width plus keeps the figure", "２０万＋", 200_000],
    ["a full-width tilde separates a range", "15～30万", 150_000],
    ["spaces inside are tolerated", "年薪 30 w", 300_000],
    ["an ideographic space is tolerated", "月入\u30008千", 96_000],
    ["full-width >= keeps the figure", "＞＝２０万", 200_000],
    // beyond the listed forms (decisions)
    ["an upper bound only (以下) gives no lower bound", "10万以下", null],
    ["an upper bound only (不超过) gives no lower bound", "不超过10万", null],
    ["a Chinese numeral before 万 is read", "年薪十万以上", 100_000],
    ["a two-character Chinese numeral before 万 is read", "二十万", 200_000],
    ["a Chinese numeral before 千 with a month marker", "月入五千", 60_000],
    ["过万 is one 万", "月入过万", 120_000],
    ["百万 is one million", "年薪百万", 1_000_000],
    ["the first figure is the one read", "年薪20万，有房有车，存款50万", 200_000],
    ["the period marker nearest the figure decides", "月薪1万（年薪12万以上）", 120_000],
    ["年龄 is not a period marker", "年龄相仿，收入20万以上", 200_000],
    ["a figure wins over a no-requirement word", "不限，最好20万以上", 200_000],
    ["an ambiguous small number is skipped for the next figure", "工作3年以上，月入8千", 96_000],
    ["an age is skipped for the income figure", "35岁以下，年收入10万以上", 100_000],
    ["an upper bound is skipped for a later lower bound", "不要10万以下的，20万以上", 200_000]
  ]
  for (const [rule, text, expected] of table) {
    it(`${rule}: ${JSON.stringify(text)}`, () => expect(parseIncomeText(text)).toBe(expected))
  }

  it("results are whole yuan", () => {
    for (const [, text] of table) {
      const r = parseIncomeText(text)
      if (r !== null) expect(Number.isInteger(r)).toBe(true)
    }
  })
})
