// Card text rules: OCR text (with tesseract's spacing, colons and noise) → ParsedCard fields,
// the partner requirement's tags, and the confidence of a result.
import { describe, expect, it } from "@effect/vitest"

import {
  confidenceOf,
  crossCheckDoubts,
  currentYearIn,
  parseCardText,
  plausibleName,
  readBirthAge,
  readCard,
  readEducation,
  readHeight,
  readNativePlace,
  readPlaces,
  readRequiredIncome,
  readRequirementTags,
  readWeight,
  repairIncomeText
} from "../../src/card/rules.js"
import { emptyParsedCard, type ParsedCard } from "../../src/card/types.js"

type Case = readonly [rule: string, text: string, expected: Partial<ParsedCard>]

const cards: ReadonlyArray<Case> = [
  [
    "a typed card with full-width colons, one field per line",
    "姓名：李明\n性别：男\n年龄：30岁\n身高：175cm\n体重：70kg\n学历：本科\n职业：工程师\n年薪：30万\n婚姻状况：未婚\n籍贯：湖南长沙\n电话：13800138000",
    {
      name: "李明",
      gender: "male",
      age: 30,
      height: 175,
      weight: 70,
      education: "本科",
      occupation: "工程师",
      incomeAmount: 300_000,
      maritalStatus: "未婚",
      nativePlace: "湖南长沙",
      phone: "13800138000"
    }
  ],
  [
    "tesseract's spaces between Chinese characters are ignored (姓 名 ： 李 明)",
    "姓 名 ： 李 明\n性 别 ： 男\n年 龄 ： 30 岁\n学 历 ： 硕 士\n职 业 ： 软 件 工 程 师",
    { name: "李明", gender: "male", age: 30, education: "硕士", occupation: "软件工程师" }
  ],
  [
    "digits tesseract split with a space are joined in numbers (2 8 岁, 1 7 5 cm)",
    "年 龄 : 2 8 岁\n身 高 : 1 7 5 cm\n体 重 : 5 2 公 斤",
    { age: 28, height: 175, weight: 52 }
  ],
  [
    "two fields on one line: the second label ends the first value",
    "姓 名 : 李 晓 雯 性 别 : 女\n年 龄 : 28 岁 身 高 : 165cm\n体 重 : 52 公 斤 学 历 : 硕 士 研 究 生\n职 业 : 中 学 教 师 婚 姻 状 况 : 未 婚\n年 薪 : 15 万 籍 贯 : 湖 南 长 沙",
    {
      name: "李晓雯",
      gender: "female",
      age: 28,
      height: 165,
      weight: 52,
      education: "硕士",
      occupation: "中学教师",
      maritalStatus: "未婚",
      incomeAmount: 150_000,
      nativePlace: "湖南长沙"
    }
  ],
  [
    "half-width colons and semicolons tesseract reads for a colon all separate label and value",
    "姓名:王芳\n性 别 ;: 女\n工 作 单 位 ; 长 沙 市 第 一 中 学\n年龄∶26",
    { name: "王芳", gender: "female", workplace: "长沙市第一中学", age: 26 }
  ],
  [
    "labels without colons (table cells read as lines) are recognised",
    "单 身 嘉 宾 信 息 表\n姓 名 陈 思 远 性 别 男\n年 龄 35 身 高 172 厘 米\n体 重 70kg 学 历 博 士\n职 业 大 学 讲 师 婚 姻 丧 偶\n月 收 入 1.5 万 籍 贯 四 川 成 都",
    {
      name: "陈思远",
      gender: "male",
      age: 35,
      height: 172,
      weight: 70,
      education: "博士",
      occupation: "大学讲师",
      maritalStatus: "丧偶",
      incomeAmount: 180_000,
      nativePlace: "四川成都"
    }
  ],
  [
    "a value on the line after its label belongs to that label",
    "姓名：\n张伟\n性别：\n男\n年龄：29",
    { name: "张伟", gender: "male", age: 29 }
  ],
  [
    "noise characters around labels and values (rules, brackets, bars) are dropped",
    "| 姓名: 李明 |\n【性别】男\n_ 年龄: 30岁 _\n» 学历: 本科 «",
    { name: "李明", gender: "male", age: 30, education: "本科" }
  ],
  [
    "age: 28周岁 is 28, and a misread 岁 (32%) still gives the number",
    "年龄：28周岁\n身高：1.78米",
    { age: 28, height: 178 }
  ],
  [
    "age: a misread 岁 (32%) still gives 32",
    "年 龄 : 32%",
    { age: 32 }
  ],
  [
    "height written in metres: 1.75米 is 175 cm",
    "身高：1.75米\n",
    { height: 175 }
  ],
  [
    "height in 公分 and weight in 斤 (1 斤 = 0.5 kg)",
    "身高：168公分\n体重：110斤",
    { height: 168, weight: 55 }
  ],
  [
    "gender words: 男士 is male",
    "姓名：周杰\n性别：男士",
    { gender: "male" }
  ],
  [
    "gender words: 女士 and 女生 are female",
    "性别：女生",
    { gender: "female" }
  ],
  [
    "education: 研究生 is 硕士, 博士研究生 is 博士",
    "学历：研究生",
    { education: "硕士" }
  ],
  [
    "education: 专科 is 大专",
    "学历：专科",
    { education: "大专" }
  ],
  [
    "education: 中专 is 高中及以下",
    "学历:中专",
    { education: "高中及以下" }
  ],
  [
    "income: 月薪8千 is 96,000 a year",
    "月薪：8千",
    { incomeAmount: 96_000 }
  ],
  [
    "income: 月入1.5w is 180,000 a year",
    "收入：月入1.5w",
    { incomeAmount: 180_000 }
  ],
  [
    "income: 年收入20-30万 gives the lower bound 200,000",
    "年收入：20-30万",
    { incomeAmount: 200_000 }
  ],
  [
    "income: a monthly figure under a 收入 label is made yearly (8000/月 → 96,000)",
    "收入：8000/月",
    { incomeAmount: 96_000 }
  ],
  [
    "marital status: 婚况 离异 and 单身 as 未婚",
    "婚况：离异",
    { maritalStatus: "离异" }
  ],
  [
    "marital status: 单身 is 未婚; 老家 is the native place",
    "婚姻：单身\n老家：湖北武汉",
    { maritalStatus: "未婚", nativePlace: "湖北武汉" }
  ],
  [
    "phone: spaces and dashes are dropped, an O misread for 0 among digits is a 0",
    "手机：139-1234-5678\n电话：138 0013 800O",
    { phone: "13912345678" }
  ],
  [
    "phone: a mobile number without a label is still found",
    "姓名：李明\n联系我 13800138000",
    { name: "李明", phone: "13800138000" }
  ],
  [
    "occupation 电话销售 is not cut at the word 电话 (no colon, mid-line)",
    "职业：电话销售\n工作单位：华为",
    { occupation: "电话销售", workplace: "华为" }
  ],
  [
    "工作 alone is the occupation, 工作单位 the workplace",
    "工作：护士\n工作单位：湘雅医院",
    { occupation: "护士", workplace: "湘雅医院" }
  ],
  [
    "self introduction over several lines is joined and keeps Chinese punctuation",
    "自 我 介 绍 : 性 格 开 朗 , 喜 欢 旅 行 和 读 书 , 周 末 常 去 爬 山 , 会\n做 一 手 好 菜 。\n择偶要求：善良",
    { selfIntro: "性格开朗，喜欢旅行和读书，周末常去爬山，会做一手好菜。", requirement: "善良" }
  ],
  [
    "age, height and education inside the requirement do not overwrite the guest's own",
    "年龄：30岁\n身高：180cm\n学历：本科\n择偶要求：年龄25-28岁，身高160以上，\n学历，大专以上",
    { age: 30, height: 180, education: "本科", requirement: "年龄25-28岁，身高160以上，学历，大专以上" }
  ],
  [
    "requirement sub-labels with colons stay in the requirement when the guest's own field was read",
    "年龄：30岁\n身高：180cm\n择偶要求：\n年龄：25-28岁\n身高：160以上；学历：本科以上\n电话：13800138000",
    {
      age: 30,
      height: 180,
      education: null,
      phone: "13800138000",
      requirement: "年龄：25-28岁身高：160以上；学历：本科以上",
      requirementTags: { age_min: 25, age_max: 28, height_min: 160, education_min: 3 }
    }
  ],
  [
    "a semicolon inside a requirement does not make a label of the word before it",
    "学历：本科\n择偶要求：本科以上学历；有房；年薪20万以上",
    { requirement: "本科以上学历；有房；年薪20万以上", reqIncomeAmount: 200_000, requirementTags: { education_min: 3, has_house: 1 } }
  ],
  [
    "self introduction and requirement on one line are split at the second label",
    "自我介绍：开朗大方。择偶要求：善良孝顺",
    { selfIntro: "开朗大方。", requirement: "善良孝顺" }
  ],
  [
    "a wrapped requirement line that begins with 学历 stays in the requirement",
    "择 偶 要 求 : 年 龄 28-35 岁 , 身 高 175 以 上 , 本 科 以 上\n学 历 , 有 房 , 长 沙 本 地 优 先 , 年 薪 20 万 以 上 。",
    {
      requirement: "年龄28-35岁，身高175以上，本科以上学历，有房，长沙本地优先，年薪20万以上。",
      reqIncomeAmount: 200_000,
      requirementTags: { age_min: 28, age_max: 35, height_min: 175, education_min: 3, has_house: 1, locations: ["长沙"] },
      education: null,
      age: null
    }
  ],
  [
    "个人介绍 and 择偶标准 are accepted label variants",
    "个人介绍：爱运动\n择偶标准：本科以上，有车",
    { selfIntro: "爱运动", requirement: "本科以上，有车", requirementTags: { education_min: 3, has_car: 1 } }
  ],
  [
    "an unlabelled card line (李明，男，28岁，175cm) gives gender, age and height",
    "李明，男，28岁，175cm",
    { gender: "male", age: 28, height: 175 }
  ],
  [
    "a title without labels is not a field",
    "嘉缘婚恋 · 嘉宾资料卡\n姓名：王芳",
    { name: "王芳", occupation: null, gender: null }
  ],
  [
    "an empty text gives an empty card",
    "",
    emptyParsedCard()
  ],
  [
    "English words in values keep their spaces",
    "职业：IT project manager\n姓名：Anna Li",
    { occupation: "IT project manager", name: "Anna Li" }
  ],
  [
    "a label of four characters with one misread (择仇要求:) is still a label when a colon follows",
    "手 机 : 139-1234-5678 |\n择 仇 要 求 : 25-30 岁 , 身 高 160 以 上\n工 作 单 仕 : 华 为",
    { phone: "13912345678", requirement: "25-30岁，身高160以上", workplace: "华为" }
  ],
  [
    "a misread label without a colon is not guessed at",
    "择仇要求25-30岁",
    { requirement: null }
  ],
  [
    "full-width digits and letters are read as ASCII",
    "年龄：２９岁\n身高：１６８ｃｍ",
    { age: 29, height: 168 }
  ]
]

describe("parseCardText", () => {
  for (const [rule, text, expected] of cards) {
    it(rule, () => {
      expect(parseCardText(text)).toMatchObject(expected)
    })
  }

  it("has at least 25 table cases", () => {
    expect(cards.length).toBeGreaterThanOrEqual(25)
  })

  it("the first value of a field wins over later ones", () => {
    expect(parseCardText("姓名：李明\n姓名：王伟").name).toBe("李明")
  })

  it("fields that are not on the card are null", () => {
    const p = parseCardText("姓名：李明")
    expect(p).toEqual({ ...emptyParsedCard(), name: "李明" })
  })
})

/** OCR text of phone photos of paper forms (嘉宾登记表), as tesseract reads them; the year is 2025. */
const photoCards: ReadonlyArray<Case> = [
  [
    "出生年月 gives the age in the current year (1994年5月 in 2025 → 31)",
    "姓名：李明\n出 生 年 月 : 1994 年 5 月",
    { name: "李明", age: 31 }
  ],
  [
    "出生日期 in dotted form (1988.02) and with a quote-mark border remnant (“1993年4月)",
    "出生日期 1988.02\n",
    { age: 37 }
  ],
  [
    "a quote mark before a table value (a border remnant) is not part of it",
    "出 生年 月 “1993 年 4 月 身高 164\n婚姻 状况 ”离异 无 孩 籍贯 福建 厦门",
    { age: 32, height: 164, maritalStatus: "离异", nativePlace: "福建厦门" }
  ],
  [
    "a table row read without colons: every cell label is a label (工作, 收入 mid-line)",
    "学 历 大 学 本 科 工作 中 学 教师\n职业 会 计 收入 月 薪 7 千",
    { education: "本科", occupation: "中学教师", incomeAmount: 84_000 }
  ],
  [
    "8 干 is 8千 (干 after a figure is 千)",
    "月 收入 : 8 干",
    { incomeAmount: 96_000 }
  ],
  [
    "月新7千 and 年茜20万: any character between 月/年 and a figure is 薪",
    "收入 : 月 新 7 千\n收入 要 求 : 年 茜 20 万 以 上",
    { incomeAmount: 84_000, reqIncomeAmount: 200_000 }
  ],
  [
    "a bracket before 万 is a 1 (月收入: ] 万)",
    "月 收入 : ] 万",
    { incomeAmount: 120_000 }
  ],
  [
    "a row of its own 收入要求 / 月入1万以上 gives reqIncomeAmount",
    "择偶要求：28-35岁，本科以上\n收入要求：月入1万以上",
    { reqIncomeAmount: 120_000, requirement: "28-35岁，本科以上" }
  ],
  [
    "收入要求 in a table cell, its value beginning with another income label (年收入15万以上)",
    "收入 要 求 年 收入 15 万 以 上",
    { reqIncomeAmount: 150_000, incomeAmount: null }
  ],
  [
    "the requirement does not run into the form's footer (登记日期 without a colon)",
    "择偶要求：25-30岁，身高160以上\n登记 日 期 2024 年 3 月 12 日 红娘 : 张老师",
    { requirement: "25-30岁，身高160以上" }
  ],
  [
    "a tall table cell read out of order: the value's first line above the label's line",
    "婚姻 状况 未 婚 籍贯 河南 郑州\n40-46 岁 ， 身 高 176 以 上 ， 大 专 以 上 ， 年 薪 20 万 以\n择偶 要 求 上 。\n登记 日 期 2024 年",
    { requirement: "40-46岁，身高176以上，大专以上，年薪20万以上。", reqIncomeAmount: 200_000, height: null, maritalStatus: "未婚" }
  ],
  [
    "a long label followed by a comma (择偶要求，) is a label with its colon",
    "婚姻 状况 ， 未 婚\n择偶 要 求 ， 22-28 岁 ， 身 高 161 以 上",
    { maritalStatus: "未婚", requirement: "22-28岁，身高161以上", requirementTags: { age_min: 22, age_max: 28, height_min: 161 } }
  ],
  [
    "short labels with one character misread are labels when a colon follows (身商:, 性唱:)",
    "姓 各 :王建国 性 唱 : 男\n身 商 : 1.55 米",
    { name: "王建国", gender: "male", height: 155 }
  ],
  [
    "箱贯 and 户箱 (籍 misread as 箱) are the native place's labels",
    "箱 贯 安徽 合肥",
    { nativePlace: "安徽合肥" }
  ],
  [
    "heights in metres with a space (1 .64m) and 研究生 / 大学本科",
    "身高 : 1 .64m\n学 历 : 研究 生",
    { height: 164, education: "硕士" }
  ],
  [
    "a marital status with one character misread under its label (辫偶 → 丧偶, 未才 → 未婚)",
    "婚姻 状况 : 辫 偶",
    { maritalStatus: "丧偶" }
  ]
]

describe("parseCardText on photos of paper forms", () => {
  for (const [rule, text, expected] of photoCards) {
    it(rule, () => {
      expect(parseCardText(text, { currentYear: 2025 })).toMatchObject(expected)
    })
  }

  it("a hand-written 男 read as 另 is male, and doubted", () => {
    const { parsed, doubts } = readCard("姓名：李明\n性 别 。 另", { currentYear: 2025 })
    expect(parsed.gender).toBe("male")
    expect(doubts).toContain("gender")
  })

  it("a value that ran into the next cell is cut at the label and doubted", () => {
    const { parsed, doubts } = readCard("职业：会计月新7千", { currentYear: 2025 })
    expect(parsed.occupation).toBe("会计")
    expect(doubts).toContain("occupation")
  })

  it("the current year is taken in the given time zone (New Year's Eve UTC is already next year in Shanghai)", () => {
    const instant = new Date("2024-12-31T17:00:00Z")
    expect(currentYearIn("Asia/Shanghai", instant)).toBe(2025)
    expect(currentYearIn("UTC", instant)).toBe(2024)
  })
})

describe("photo readers", () => {
  it("birth ages: the year of birth anywhere in the value; out-of-range years give null", () => {
    const table: ReadonlyArray<readonly [string, number | null]> = [
      ["1994年5月", 31],
      ["1994.05", 31],
      ["1994-05-12", 31],
      ["“1993 年 4 月", 32],
      ["4005.02", null],
      ["2020年1月", null],
      ["不详", null]
    ]
    for (const [text, age] of table) expect([text, readBirthAge(text, 2025)]).toEqual([text, age])
  })

  it("income repairs: 干 → 千 and 月X → 月薪 are certain; a bracket read as 1 is a guess", () => {
    expect(repairIncomeText("8 干")).toEqual({ text: "8千", repaired: false })
    expect(repairIncomeText("月 新 7 千")).toEqual({ text: "月薪7千", repaired: false })
    expect(repairIncomeText("] 万")).toEqual({ text: "1万", repaired: true })
    expect(repairIncomeText("年收入20万")).toEqual({ text: "年收入20万", repaired: false })
  })

  it("native places snap to the region data when one character is misread", () => {
    const table: ReadonlyArray<readonly [string, string | null, boolean]> = [
      ["湖南长沙", "湖南长沙", true],
      ["四 川 成 者", "四川成都", true],
      ["安徽合肥了", "安徽合肥", true],
      ["河南郑州", "河南郑州", true],
      ["广东广州", "广东广州", true],
      ["湖南长沙县", "湖南长沙县", true],
      ["火星", "火星", false]
    ]
    for (const [text, place, checked] of table) {
      expect([text, readNativePlace(text)]).toEqual([text, { place, checked }])
    }
  })

  it("plausible names: 2–4 Chinese characters after a common surname, or Latin letters", () => {
    expect(plausibleName("李晓雯")).toBe(true)
    expect(plausibleName("欧阳娜娜")).toBe(true)
    expect(plausibleName("Anna Li")).toBe(true)
    expect(plausibleName("栖息笋")).toBe(false)
    expect(plausibleName("王建国性唱")).toBe(false)
    expect(plausibleName("王")).toBe(false)
  })
})

describe("readers", () => {
  const heights: ReadonlyArray<readonly [string, number | null]> = [
    ["175", 175],
    ["175cm", 175],
    ["175 CM", 175],
    ["175厘米", 175],
    ["175公分", 175],
    ["1.75米", 175],
    ["1.75m", 175],
    ["1米75", 175],
    ["1米7", 170],
    ["172.5cm", 173],
    ["不详", null],
    ["75", null]
  ]
  it("height: cm, 厘米, 公分, metres and 1米75 forms; out-of-range numbers are null", () => {
    for (const [text, cm] of heights) expect([text, readHeight(text)]).toEqual([text, cm])
  })

  const weights: ReadonlyArray<readonly [string, number | null]> = [
    ["65kg", 65],
    ["65 KG", 65],
    ["65公斤", 65],
    ["65千克", 65],
    ["130斤", 65],
    ["125斤", 63],
    ["60", 60],
    ["120", 60],
    ["5", null]
  ]
  it("weight: kg, 公斤, 千克 and 斤 (÷2); a bare number above 100 is 斤", () => {
    for (const [text, kg] of weights) expect([text, readWeight(text)]).toEqual([text, kg])
  })

  const educations: ReadonlyArray<readonly [string, string | null]> = [
    ["博士研究生", "博士"],
    ["博士", "博士"],
    ["硕士研究生", "硕士"],
    ["研究生", "硕士"],
    ["MBA", "硕士"],
    ["大学本科", "本科"],
    ["本科学历", "本科"],
    ["学士", "本科"],
    ["大专", "大专"],
    ["专科", "大专"],
    ["大学专科", "大专"],
    ["高中", "高中及以下"],
    ["中专", "高中及以下"],
    ["初中", "高中及以下"],
    ["保密", null]
  ]
  it("education synonyms map onto the five levels", () => {
    for (const [text, level] of educations) expect([text, readEducation(text)]).toEqual([text, level])
  })
})

describe("readRequirementTags", () => {
  const table: ReadonlyArray<readonly [string, string, ReturnType<typeof readRequirementTags>]> = [
    ["an age range 25-32岁 gives age_min and age_max", "25-32岁", { age_min: 25, age_max: 32 }],
    ["年龄25到32 without 岁 is also a range", "年龄25到32，", { age_min: 25, age_max: 32 }],
    ["28岁以上 gives only age_min", "28岁以上", { age_min: 28 }],
    ["35岁以下 gives only age_max", "35岁以下", { age_max: 35 }],
    ["身高165以上 gives height_min", "身高165以上", { height_min: 165 }],
    ["160cm以上 without 身高 gives height_min", "160cm以上", { height_min: 160 }],
    ["身高1.65米以上 is 165", "身高1.65米以上", { height_min: 165 }],
    ["身高160-175 gives a height range", "身高160-175", { height_min: 160, height_max: 175 }],
    ["本科以上 gives education_min 3", "本科以上", { education_min: 3 }],
    ["研究生及以上 gives education_min 4", "研究生及以上学历", { education_min: 4 }],
    ["学历要求大专 gives education_min 2", "学历要求大专", { education_min: 2 }],
    ["未婚 gives marriage_status [1]", "未婚", { marriage_status: [1] }],
    ["不介意离异 accepts 未婚 and 离异", "不介意离异", { marriage_status: [1, 2] }],
    ["未婚或离异均可 is [1, 2]", "未婚或离异均可", { marriage_status: [1, 2] }],
    ["不接受离异 leaves only 未婚", "不接受离异", { marriage_status: [1] }],
    ["有房有车 asks for both", "有房有车", { has_house: 1, has_car: 1 }],
    ["房车齐全 asks for both", "房车齐全", { has_house: 1, has_car: 1 }],
    ["不要求有房 asks for no house", "不要求有房", null],
    ["有无房车均可 asks for nothing", "有无房车均可", null],
    ["cities and provinces are locations, in order", "武汉或长沙，北京也行", { locations: ["武汉", "长沙", "北京"] }],
    ["a province before its own city names just the city", "湖南长沙本地", { locations: ["长沙"] }],
    ["nothing plain is null", "善良孝顺", null]
  ]
  for (const [rule, text, tags] of table) {
    it(rule, () => {
      expect(readRequirementTags(text)).toEqual(tags)
    })
  }

  it("common words that are also city names are not places (中山大学, 身体安康)", () => {
    expect(readPlaces("中山大学毕业，祝身体安康")).toEqual([])
  })
})

describe("readRequiredIncome", () => {
  const table: ReadonlyArray<readonly [string, number | null]> = [
    ["年薪20万以上", 200_000],
    ["身高170以上，月收入不低于1万", 120_000],
    ["年收入20-30万", 200_000],
    ["月薪8千以上", 96_000],
    ["年龄25-30岁，身高165以上", null],
    ["存款50万", null]
  ]
  it("the first clause about income gives a yearly lower bound; other figures are not income", () => {
    for (const [text, amount] of table) expect([text, readRequiredIncome(text)]).toEqual([text, amount])
  })
})

describe("confidenceOf", () => {
  const base = emptyParsedCard()
  const full: ParsedCard = {
    ...base,
    name: "李明",
    gender: "male",
    age: 30,
    height: 175,
    weight: 70,
    education: "本科",
    incomeAmount: 200_000
  }
  it("high needs every field's checks to agree: a doubted field makes it medium", () => {
    expect(confidenceOf(full)).toBe("high")
    expect(confidenceOf(full, ["incomeAmount"])).toBe("medium")
  })
  it("cross-checks: an implausible name, weight for height, or income size makes it medium", () => {
    expect(crossCheckDoubts(full)).toEqual([])
    expect(confidenceOf({ ...full, name: "栖息笋" })).toBe("medium")
    expect(crossCheckDoubts({ ...full, weight: 140 })).toEqual(["weight"])
    expect(confidenceOf({ ...full, weight: 140 })).toBe("medium")
    expect(crossCheckDoubts({ ...full, incomeAmount: 2_024 })).toEqual(["incomeAmount"])
  })
  it("a field holding a word OCR was unsure of is doubted, and the card is not high", () => {
    const text = "姓名：林慧雍\n性别：女\n年龄：30\n身高：165cm\n学历：本科\n职业：会计"
    const sure = readCard(text, { currentYear: 2025 })
    expect(confidenceOf(sure.parsed, sure.doubts)).toBe("high")
    const { parsed, doubts } = readCard(text, { currentYear: 2025, uncertain: ["雍", "。"] })
    expect(doubts).toEqual(["name"])
    expect(confidenceOf(parsed, doubts)).toBe("medium")
  })
  it("a card whose income was read from a guessed figure is not high", () => {
    const { parsed, doubts } = readCard("姓名：李明\n性别：男\n年龄：30\n身高：175cm\n学历：本科\n月收入：] 万", { currentYear: 2025 })
    expect(parsed.incomeAmount).toBe(120_000)
    expect(confidenceOf(parsed, doubts)).toBe("medium")
  })
  it("high: name, gender and age, and at least 5 fields", () => {
    expect(confidenceOf({ ...base, name: "李明", gender: "male", age: 30, height: 175, education: "本科" })).toBe("high")
  })
  it("medium: name, gender and age but fewer than 5 fields", () => {
    expect(confidenceOf({ ...base, name: "李明", gender: "male", age: 30 })).toBe("medium")
  })
  it("medium: name and gender without age, however many fields", () => {
    expect(confidenceOf({ ...base, name: "李明", gender: "male", height: 175, weight: 70, education: "本科", phone: "13800138000" }))
      .toBe("medium")
  })
  it("low: no name or no gender", () => {
    expect(confidenceOf({ ...base, gender: "male", age: 30, height: 175, weight: 70, education: "本科" })).toBe("low")
    expect(confidenceOf(base)).toBe("low")
  })
})
