// The match score of DECISIONS §6: each guest's hard filters against the other, both directions
// averaged, unknown values half met.
import { describe, expect, it } from "@effect/vitest"

import {
  type Criterion,
  criterionOutcome,
  directionScore,
  type MatchProfile,
  matchScore,
  regionCovers
} from "../../src/domain/matchScore.js"

/** A guest with nothing known and no requirements. */
const blank: MatchProfile = {
  age: null,
  height: null,
  weight: null,
  education: null,
  income_amount: null,
  marital_status: null,
  has_children: null,
  has_house: null,
  has_car: null,
  native_place_code: null,
  req_age_min: null,
  req_age_max: null,
  req_height_min: null,
  req_weight_min: null,
  req_weight_max: null,
  req_education_min: null,
  req_income_amount: null,
  req_location_codes: [],
  requirement_tags: null
}
const guest = (fields: Partial<MatchProfile>): MatchProfile => ({ ...blank, ...fields })

describe("each filter against the candidate: met 1, not met 0, unknown ½, no filter undefined", () => {
  const table: ReadonlyArray<readonly [string, Criterion, Partial<MatchProfile>, Partial<MatchProfile>, 1 | 0 | 0.5 | undefined]> = [
    ["no age filter", "age", {}, { age: 30 }, undefined],
    ["age within both bounds", "age", { req_age_min: 25, req_age_max: 35 }, { age: 30 }, 1],
    ["age on the lower bound (inclusive)", "age", { req_age_min: 30 }, { age: 30 }, 1],
    ["age on the upper bound (inclusive)", "age", { req_age_max: 30 }, { age: 30 }, 1],
    ["age below the minimum", "age", { req_age_min: 31 }, { age: 30 }, 0],
    ["age above the maximum", "age", { req_age_max: 29 }, { age: 30 }, 0],
    ["age unknown", "age", { req_age_min: 25 }, {}, 0.5],
    ["height at least req_height_min", "height", { req_height_min: 170 }, { height: 175 }, 1],
    ["height below req_height_min", "height", { req_height_min: 170 }, { height: 165 }, 0],
    ["height over the tags' height_max", "height", { requirement_tags: { height_max: 180 } }, { height: 185 }, 0],
    ["height unknown", "height", { req_height_min: 170 }, {}, 0.5],
    ["weight within bounds", "weight", { req_weight_min: 45, req_weight_max: 60 }, { weight: 50 }, 1],
    ["weight over the maximum", "weight", { req_weight_max: 60 }, { weight: 70 }, 0],
    ["education at the minimum (本科 = 3)", "education", { req_education_min: 3 }, { education: "本科" }, 1],
    ["education above the minimum", "education", { req_education_min: 3 }, { education: "博士" }, 1],
    ["education below the minimum", "education", { req_education_min: 3 }, { education: "大专" }, 0],
    ["education unknown", "education", { req_education_min: 3 }, {}, 0.5],
    ["income at least req_income_amount", "income", { req_income_amount: 200_000 }, { income_amount: 250_000 }, 1],
    ["income below req_income_amount", "income", { req_income_amount: 200_000 }, { income_amount: 150_000 }, 0],
    ["income above the tags' income_max level", "income", { requirement_tags: { income_max: 3 } }, { income_amount: 400_000 }, 0],
    ["income within the tags' income_max level", "income", { requirement_tags: { income_max: 3 } }, { income_amount: 250_000 }, 1],
    ["income unknown", "income", { req_income_amount: 200_000 }, {}, 0.5],
    ["marital history accepted", "marital_status", { requirement_tags: { marriage_status: [1, 2] } }, { marital_status: "离异" }, 1],
    ["marital history not accepted", "marital_status", { requirement_tags: { marriage_status: [1] } }, { marital_status: "丧偶" }, 0],
    ["an empty marriage_status list sets no filter", "marital_status", { requirement_tags: { marriage_status: [] } }, {}, undefined],
    ["marital history unknown", "marital_status", { requirement_tags: { marriage_status: [1] } }, {}, 0.5],
    ["has_children 0 wants none: has none", "has_children", { requirement_tags: { has_children: 0 } }, { has_children: "no" }, 1],
    ["has_children 0 wants none: has some", "has_children", { requirement_tags: { has_children: 0 } }, { has_children: "yes" }, 0],
    ["has_house 1 wants a house: has one", "has_house", { requirement_tags: { has_house: 1 } }, { has_house: "yes" }, 1],
    ["has_house 1 wants a house: has none", "has_house", { requirement_tags: { has_house: 1 } }, { has_house: "no" }, 0],
    ["has_car null sets no filter", "has_car", { requirement_tags: { has_car: null } }, { has_car: "no" }, undefined],
    ["has_car unknown", "has_car", { requirement_tags: { has_car: 1 } }, {}, 0.5],
    ["location: a province covers its cities", "location", { req_location_codes: ["430000"] }, { native_place_code: "430100" }, 1],
    ["location: a city covers its districts", "location", { req_location_codes: ["110000", "430100"] }, { native_place_code: "430102" }, 1],
    ["location: another province", "location", { req_location_codes: ["430000"] }, { native_place_code: "310115" }, 0],
    ["location: a district does not cover its city", "location", { req_location_codes: ["430102"] }, { native_place_code: "430100" }, 0],
    ["location unknown", "location", { req_location_codes: ["430000"] }, {}, 0.5]
  ]
  for (const [name, criterion, requirer, candidate, expected] of table) {
    it(name, () => expect(criterionOutcome(criterion, guest(requirer), guest(candidate))).toBe(expected))
  }
})

describe("region codes cover the codes under them", () => {
  const table: ReadonlyArray<readonly [string, string, boolean]> = [
    ["430000", "430000", true],
    ["430000", "430102", true],
    ["430100", "430102", true],
    ["430100", "430200", false],
    ["110000", "110105", true],
    ["430102", "430102", true]
  ]
  for (const [required, code, covers] of table) {
    it(`${required} ${covers ? "covers" : "does not cover"} ${code}`, () => expect(regionCovers(required, code)).toBe(covers))
  }
})

describe("the score", () => {
  it("a guest without requirements is fully met", () => expect(directionScore(blank, guest({ age: 30 }))).toBe(1))

  it("a direction is the mean over the filters the requirer sets", () => {
    // age met, height not met, education unknown: (1 + 0 + 0.5) / 3.
    const requirer = guest({ req_age_min: 25, req_height_min: 180, req_education_min: 3 })
    expect(directionScore(requirer, guest({ age: 30, height: 170 }))).toBeCloseTo(0.5)
  })

  const table: ReadonlyArray<readonly [string, Partial<MatchProfile>, Partial<MatchProfile>, number]> = [
    ["neither sets a filter: 100", {}, {}, 100],
    ["each meets every filter of the other: 100", { age: 30, req_age_min: 25 }, { age: 28, req_age_max: 35 }, 100],
    ["one side fully met, the other not at all: 50", { age: 30, req_age_min: 31 }, { age: 32, req_age_min: 31 }, 50],
    ["all unknown on both sides: 50", { req_age_min: 25 }, { req_height_min: 170 }, 50],
    ["one side met, the other unknown: 75", { req_height_min: 170 }, { height: 175, req_age_min: 25 }, 75],
    ["one filter of two met on one side, the other side met: 75", { req_age_min: 25, req_height_min: 180 }, { age: 30, height: 170 }, 75],
    [
      "two decimals: one of three met, the other side fully met",
      {
        req_age_min: 25,
        req_height_min: 180,
        req_weight_max: 50
      },
      { age: 30, height: 170, weight: 60 },
      66.67
    ]
  ]
  for (const [name, a, b, score] of table) {
    it(name, () => {
      expect(matchScore(guest(a), guest(b))).toBe(score)
      // The score does not depend on which guest is a and which is b.
      expect(matchScore(guest(b), guest(a))).toBe(score)
    })
  }

  it("the score is always within 0-100", () => {
    const picky = guest({
      age: 20,
      req_age_min: 60,
      req_height_min: 240,
      req_education_min: 5,
      req_location_codes: ["650000"],
      requirement_tags: { has_car: 1, has_house: 1, marriage_status: [3] }
    })
    const other = guest({
      age: 30,
      height: 150,
      education: "高中及以下",
      native_place_code: "110000",
      has_car: "no",
      has_house: "no",
      marital_status: "未婚",
      req_age_min: 60
    })
    expect(matchScore(picky, other)).toBe(0)
  })
})
