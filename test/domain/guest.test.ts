// deriveGuest: the rules of DECISIONS §6 as one table, create and update alike.
import { describe, expect, it } from "@effect/vitest"

import { deriveGuest, emptyGuestState, type GuestSent, type GuestState } from "../../src/domain/guest.js"

const base = { name: "甲", gender: "male", company_id: 1 } as const
const create = (sent: GuestSent) => deriveGuest({ ...base, ...sent }, undefined)
const stored = (over: Partial<GuestState>): GuestState => ({ ...emptyGuestState(base), ...over })

describe("requirement_tags → req_*", () => {
  const table: ReadonlyArray<readonly [string, GuestSent, Partial<GuestState>]> = [
    ["each tag key is copied to its field", {
      requirement_tags: { age_min: 25, age_max: 35, height_min: 165, weight_min: 45, weight_max: 60, education_min: 3 }
    }, { req_age_min: 25, req_age_max: 35, req_height_min: 165, req_weight_min: 45, req_weight_max: 60, req_education_min: 3 }],
    ["an explicit req_* field wins over its tag", { requirement_tags: { age_min: 25 }, req_age_min: 30 }, { req_age_min: 30 }],
    ["a null tag is copied as null", { requirement_tags: { age_min: null } }, { req_age_min: null }],
    ["income_min is the level's lower bound", { requirement_tags: { income_min: 2 } }, { req_income_amount: 100000 }],
    ["income_min yields to req_income_text", { requirement_tags: { income_min: 2 }, req_income_text: "月入1万" }, {
      req_income_amount: 120000
    }],
    ["income_min yields to req_income_amount", { requirement_tags: { income_min: 2 }, req_income_amount: 5 }, { req_income_amount: 5 }],
    ["locations are joined with 、 and coded", { requirement_tags: { locations: ["北京", "湖南长沙"] } }, {
      req_location: "北京、湖南长沙",
      req_location_codes: ["110000", "430100"]
    }],
    ["health items are joined with 、", { requirement_tags: { health: ["健康", "无遗传病"] } }, { req_health: "健康、无遗传病" }],
    ["keys kept only in the tags touch no field", {
      requirement_tags: { height_max: 190, income_max: 5, has_car: 1, marriage_status: [1], other: "x" }
    }, { req_height_min: null, req_income_amount: null }]
  ]
  for (const [rule, sent, expected] of table) it(rule, () => expect(create(sent)).toMatchObject(expected))

  it("keys absent from new tags leave their fields as they are", () => {
    const next = deriveGuest({ requirement_tags: { height_min: 170 } }, stored({ req_age_min: 28, requirement_tags: { age_min: 28 } }))
    expect(next).toMatchObject({ req_age_min: 28, req_height_min: 170, requirement_tags: { height_min: 170 } })
  })
})

describe("income", () => {
  const table: ReadonlyArray<readonly [string, GuestSent, Partial<GuestState>]> = [
    ["the level is derived from the amount", { income_amount: 250000 }, { income_level: "20-30万" }],
    ["ranges are lower-inclusive", { income_amount: 100000 }, { income_level: "10-20万" }],
    ["a level alone gives its lower bound", { income_level: "50-100万" }, { income_amount: 500000, income_level: "50-100万" }],
    ["10万以下 alone gives 0", { income_level: "10万以下" }, { income_amount: 0 }],
    ["the amount wins over a conflicting level", { income_amount: 1200000, income_level: "10万以下" }, { income_level: "100万以上" }],
    ["family income follows the own income", { income_amount: 300000 }, { family_income_amount: 300000, family_income_level: "30-50万" }],
    ["a sent family income stays", { income_amount: 300000, family_income_amount: 900000 }, {
      family_income_amount: 900000,
      family_income_level: "50-100万"
    }],
    ["a family level alone gives its lower bound", { family_income_level: "100万以上" }, { family_income_amount: 1000000 }],
    ["req_income_text gives the amount", { req_income_text: "15-30万" }, { req_income_amount: 150000 }],
    ["不限 gives no amount and keeps the text", { req_income_text: "不限" }, { req_income_amount: null, req_income_text: "不限" }]
  ]
  for (const [rule, sent, expected] of table) it(rule, () => expect(create(sent)).toMatchObject(expected))

  it("an explicit family income survives a later own-income change; null makes it follow again", () => {
    const a = deriveGuest(
      { income_amount: 50000 },
      stored({ income_amount: 300000, family_income_amount: 800000, family_income_explicit: true })
    )
    expect(a).toMatchObject({ family_income_amount: 800000 })
    const b = deriveGuest({ family_income_amount: null }, a)
    expect(b).toMatchObject({ family_income_amount: 50000, family_income_level: "10万以下" })
  })
})

describe("codes, status and completeness", () => {
  it("native_place_code is the first place's code", () =>
    expect(create({ native_place: "湖南长沙、北京" }).native_place_code).toBe("430100"))
  it("derived fields sent by a client are ignored", () =>
    expect(create({ native_place: "北京", native_place_code: "999999", req_location_codes: ["1"], completeness: 1 })).toMatchObject({
      native_place_code: "110000",
      req_location_codes: [],
      completeness: 0.15
    }))
  it("status is incomplete at creation and ignored unless allowed", () => {
    expect(create({ status: "matched" }).status).toBe("incomplete")
    expect(deriveGuest({ status: "matched" }, stored({}), { allowStatus: true }).status).toBe("matched")
    expect(deriveGuest({ status: "matched" }, stored({})).status).toBe("incomplete")
  })
  it("completeness counts requirement_tags as the requirement", () =>
    expect(create({ requirement_tags: { age_min: 20 } }).completeness).toBe(0.15))
})
