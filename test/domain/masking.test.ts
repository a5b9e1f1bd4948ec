// Masking rules of DECISIONS §3, applied by field name at any depth, and what a masking client may
// search by (DECISIONS §1): both derived from one table of masked fields per resource.
import { describe, expect, it } from "@effect/vitest"

import {
  isMasked,
  KEYWORD_FIELDS,
  keywordFields,
  maskDeep,
  MASKED_FIELDS,
  maskedFieldNames,
  maskedFilters,
  maskPhone,
  REDACTED_PARAMETERS,
  type SearchedResource
} from "../../src/domain/masking.js"

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

describe("the masked fields", () => {
  it("the masker stars exactly the fields DECISIONS §3 lists, phones like a phone", () => {
    expect(Object.fromEntries([...maskedFieldNames()].sort(([a], [b]) => a.localeCompare(b)))).toEqual({
      birth_date: "stars",
      contact_phone: "phone",
      credit_code: "stars",
      matchmaker_wechat: "stars",
      matchmaker_wechat_id: "stars",
      phone: "phone",
      source_id: "stars",
      wechat: "stars",
      wechat_id: "stars",
      workplace: "stars"
    })
  })

  it("every field a resource masks is starred by the masker in that resource's records", () => {
    for (const [resource, fields] of Object.entries(MASKED_FIELDS)) {
      for (const field of Object.keys(fields)) {
        const masked = maskDeep({ [field]: "13812345678", other: "13812345678" }) as Record<string, unknown>
        expect(masked[field], `${resource}.${field}`).not.toBe("13812345678")
        expect(masked["other"]).toBe("13812345678")
      }
    }
  })
})

describe("keywordFields", () => {
  const table: ReadonlyArray<readonly [SearchedResource, boolean, ReadonlyArray<string>]> = [
    ["guest", false, ["name", "phone"]],
    ["guest", true, ["name"]],
    ["matchmaker", false, ["name", "phone", "wechat"]],
    ["matchmaker", true, ["name"]],
    ["work_wechat", false, ["wechat_number", "phone", "device_id", "wechat_nickname"]],
    ["work_wechat", true, ["wechat_number", "device_id", "wechat_nickname"]],
    ["company", true, ["name"]],
    ["work_group", true, ["name", "group_no", "remark"]]
  ]
  for (const [resource, masking, expected] of table) {
    it(`${resource}, masking ${masking}: keyword matches ${expected.join(", ")}`, () =>
      expect(keywordFields(resource, masking)).toEqual(expected))
  }

  it("a masking client's keyword never matches a field it sees masked, and keeps every other", () => {
    for (const resource of Object.keys(KEYWORD_FIELDS) as ReadonlyArray<SearchedResource>) {
      const searchable: ReadonlyArray<string> = keywordFields(resource, true)
      for (const field of KEYWORD_FIELDS[resource]) {
        expect(searchable.includes(field), `${resource}.${field}`).toBe(!isMasked(resource, field))
      }
    }
  })
})

describe("maskedFilters", () => {
  const table: ReadonlyArray<readonly [string, boolean, object, ReadonlyArray<string>]> = [
    ["a workplace filter of a masking client", true, { workplace: "华为", gender: "male" }, ["workplace"]],
    ["an empty workplace filter of a masking client", true, { workplace: "" }, ["workplace"]],
    ["a workplace filter of a plain client", false, { workplace: "华为" }, []],
    ["no workplace filter", true, { workplace: undefined, keyword: "x", status: "available" }, []],
    ["filters over unmasked fields", true, { gender: "male", company_id: 1 }, []]
  ]
  for (const [name, masking, query, expected] of table) {
    it(`guest list, ${name}: refused ${JSON.stringify(expected)}`, () => expect(maskedFilters("guest", masking, query)).toEqual(expected))
  }

  it("matchmaker: work_wechat_id (an account id) is not the masked wechat_id", () => {
    expect(maskedFilters("matchmaker", true, { work_wechat_id: 3 })).toEqual([])
    expect(maskedFilters("matchmaker", true, { wechat_id: "w", phone: "1" })).toEqual(["wechat_id", "phone"])
  })
})

describe("REDACTED_PARAMETERS", () => {
  it("names every field the masker stars, and keyword (it searches masked fields), and nothing else", () => {
    expect([...REDACTED_PARAMETERS].sort()).toEqual([...maskedFieldNames().keys(), "keyword"].sort())
    // The premise of `keyword`: some list's keyword matches a masked field.
    expect(Object.entries(KEYWORD_FIELDS).some(([r, fields]) => fields.some((f: string) => isMasked(r as SearchedResource, f)))).toBe(true)
  })
})
