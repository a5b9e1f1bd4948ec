// Masking rules of DECISIONS §3, applied by field name at any depth.
import { describe, expect, it } from "@effect/vitest"

import { maskDeep, maskPhone } from "../../src/domain/masking.js"

describe("maskPhone", () => {
  const table: ReadonlyArray<readonly [string, string]> = [
    ["13812345678", "138****5678"],
    ["1234567", "123****4567"],
    ["123456", "***"],
    ["1", "***"]
  ]
  for (const [input, expected] of table) {
    it(`masks ${input} as ${expected}`, () => expect(maskPhone(input)).toBe(expected))
  }
})

describe("maskDeep", () => {
  it("stars phones like a phone and the listed fields as ***, keeps the rest", () => {
    expect(
      maskDeep({
        id: 1,
        name: "张三",
        phone: "13812345678",
        contact_phone: "13912345678",
        wechat: "zs_wx",
        wechat_id: "wxid_1",
        workplace: "北京",
        birth_date: "1990-01-01",
        source_id: "S1",
        credit_code: "91110000100000000X",
        matchmaker_wechat: "mw",
        matchmaker_wechat_id: "mwid",
        wechat_number: "kept"
      })
    ).toEqual({
      id: 1,
      name: "张三",
      phone: "138****5678",
      contact_phone: "139****5678",
      wechat: "***",
      wechat_id: "***",
      workplace: "***",
      birth_date: "***",
      source_id: "***",
      credit_code: "***",
      matchmaker_wechat: "***",
      matchmaker_wechat_id: "***",
      wechat_number: "kept"
    })
  })

  it("masks inside lists and nested objects", () => {
    expect(maskDeep({ list: [{ phone: "13812345678", brief: { wechat: "x" } }], total: 1 })).toEqual({
      list: [{ phone: "138****5678", brief: { wechat: "***" } }],
      total: 1
    })
  })

  it("leaves empty and null values as they are", () => {
    expect(maskDeep({ phone: null, wechat: "", workplace: null })).toEqual({ phone: null, wechat: "", workplace: null })
  })
})
