// Profile completeness: the share of the 20 profile fields a guest has filled.
import { describe, expect, it } from "@effect/vitest"

import { completeness, COMPLETENESS_FIELDS } from "../../src/domain/completeness.js"

const full: Readonly<Record<string, unknown>> = {
  name: "张三",
  gender: "male",
  age: 30,
  phone: "13800138000",
  height: 175,
  weight: 70,
  education: "本科",
  occupation: "工程师",
  income_amount: 300000,
  marital_status: "未婚",
  has_children: "no",
  has_house: "yes",
  has_car: "no",
  self_intro: "热爱生活",
  requirement: "善良",
  native_place: "浙江杭州",
  photos: ["https://example.com/a.jpg"],
  birth_date: "1995-01-01",
  personality: "开朗",
  workplace: "杭州"
}

/** The first `n` fields of COMPLETENESS_FIELDS, each with a filled value. */
const firstN = (n: number): Record<string, unknown> => Object.fromEntries(COMPLETENESS_FIELDS.slice(0, n).map((f) => [f, full[f]]))

describe("COMPLETENESS_FIELDS", () => {
  it("lists the 20 profile fields in order", () => {
    expect(COMPLETENESS_FIELDS).toEqual([
      "name",
      "gender",
      "age",
      "phone",
      "height",
      "weight",
      "education",
      "occupation",
      "income_amount",
      "marital_status",
      "has_children",
      "has_house",
      "has_car",
      "self_intro",
      "requirement",
      "native_place",
      "photos",
      "birth_date",
      "personality",
      "workplace"
    ])
  })
})

describe("completeness", () => {
  const table: ReadonlyArray<readonly [string, Readonly<Record<string, unknown>>, number]> = [
    ["an empty guest is 0", {}, 0],
    ["name and gender only is 2/20 = 0.1", { name: "张三", gender: "female" }, 0.1],
    ["all 20 fields filled is 1", full, 1],
    ["each field is 1/20 = 0.05", firstN(1), 0.05],
    ["7 of 20 is 0.35", firstN(7), 0.35],
    ["13 of 20 is 0.65", firstN(13), 0.65],
    ["19 of 20 is 0.95", firstN(19), 0.95],
    ["fields outside the 20 do not count", { id: 1, created_at: "2024-01-01", wechat: "x" }, 0],
    ["null does not count", { ...full, name: null }, 0.95],
    ["undefined does not count", { ...full, name: undefined }, 0.95],
    ["an empty string does not count", { ...full, name: "" }, 0.95],
    ["a whitespace-only string does not count", { ...full, name: " \t\u3000" }, 0.95],
    ["an empty photos array does not count", { ...full, photos: [] }, 0.95],
    ["NaN does not count", { ...full, age: Number.NaN }, 0.95],
    ["zero counts as filled", { age: 0, height: 0, weight: 0, income_amount: 0 }, 0.2],
    ["\"no\" counts as filled", { has_children: "no", has_house: "no", has_car: "no" }, 0.15],
    ["false counts as filled", { has_children: false, has_house: false }, 0.1],
    ["a non-empty photos array counts", { photos: ["a.jpg"] }, 0.05],
    ["requirement text counts", { requirement: "有房" }, 0.05],
    ["requirement counts via requirement_tags with a filled value", { requirement_tags: { age_min: 25 } }, 0.05],
    ["requirement_tags with a zero value counts", { requirement_tags: { income_min: 0 } }, 0.05],
    ["requirement_tags {} does not count", { requirement_tags: {} }, 0],
    ["requirement_tags with only null values does not count", { requirement_tags: { age_min: null } }, 0],
    [
      "requirement_tags with only empty values does not count",
      { requirement_tags: { age_min: undefined, city: "", tags: [] } },
      0
    ],
    ["requirement_tags that is an array does not count", { requirement_tags: ["x"] }, 0],
    ["requirement_tags that is null does not count", { requirement_tags: null }, 0],
    ["requirement text and tags together count once", { requirement: "有房", requirement_tags: { age_min: 25 } }, 0.05],
    ["tags fill requirement even when the text is empty", { requirement: "", requirement_tags: { age_min: 25 } }, 0.05],
    ["requirement_tags does not fill any other field", { ...full, requirement: null, requirement_tags: { a: 1 } }, 1]
  ]
  for (const [rule, guest, expected] of table) {
    it(rule, () => expect(completeness(guest)).toBe(expected))
  }
})
