// The wire corpus: requests to every operation of the Open API (a success and each documented
// error that can be reached), sent in this fixed order against a fresh copy of the migrated
// database, so that every id is the same on every run. Later cases use the ids earlier ones created
// through `{{var}}` captures. Plain data: no dependency on the service's code.
//
// The order is: unsigned endpoints; then a scenario per area (companies, matchmakers, guests, work
// WeChat accounts, groups, the image blacklist, cards, activities, matches, memberships, follow-up
// tasks, events), each with its successes, its domain errors and its idempotent retries; then the
// signing rules; then, generated for every operation from OPERATIONS, the errors every operation
// shares (401 without credentials, 403 without the permission, 400 for a bad path id, 404 for an
// unknown one, 415 and 413 for a body).
import type { ClientSpec, MultipartPart, RequestStep, Step } from "./driver.js"

const B = "/api/open/v1"

const ALL_PERMISSIONS = [
  "open:matchmaker:read",
  "open:matchmaker:manage",
  "open:guest:read",
  "open:guest:write",
  "open:work_wechat:read",
  "open:work_wechat:write",
  "open:work_group:read",
  "open:work_group:write",
  "open:follow-up:read",
  "open:follow-up:write",
  "open:image_blacklist:read",
  "open:image_blacklist:write",
  "open:company:read",
  "open:company:manage",
  "open:activity:read",
  "open:activity:write",
  "open:match:read",
  "open:match:write",
  "open:membership:read",
  "open:membership:write"
]

/**
 * The clients of a run. `few` holds one permission (403 everywhere else); `masking` holds every
 * permission but that one (403 there), sees masked data, and has had its secret reset (the previous
 * secret still signs, with X-Secret-Deprecated); `limited` may send one request per 10 s, and is
 * disabled once it has shown that (one client fewer: each admin command costs seconds).
 */
export const CLIENTS: Readonly<Record<string, ClientSpec>> = {
  full: { permissions: "all" },
  few: { permissions: "open:image_blacklist:read" },
  masking: {
    permissions: ALL_PERMISSIONS.filter((p) => p !== "open:image_blacklist:read").join(","),
    masking: true,
    resetSecret: true
  },
  // One request, then a token every 10 s: the next request is refused even on a slow machine.
  limited: { permissions: "all", rateLimit: { rps: 0.1, burst: 1 } },
  // Self-service: sets its own webhook and rotates its own secret (it signs with the first one
  // throughout, deprecated after the rotation). Its one permission is not what it uses.
  self: { permissions: "open:guest:read" }
}

// ---------------------------------------------------------------------------------------------
// Small builders

/** Paths outside /api/open/v1. */
const OUTSIDE_API = ["/", "/docs", "/healthz", "/readyz"]

type Extra = Partial<Omit<RequestStep, "name" | "method" | "path" | "status">>

const req = (method: string, name: string, path: string, status: number, extra: Extra = {}): RequestStep => ({
  name,
  method,
  path: path.startsWith("/api/") || OUTSIDE_API.includes(path) ? path : `${B}${path}`,
  status,
  ...extra
})
const get = (name: string, path: string, status: number, extra: Extra = {}) => req("GET", name, path, status, extra)
const del = (name: string, path: string, status: number, extra: Extra = {}) => req("DELETE", name, path, status, extra)
const post = (name: string, path: string, json: unknown, status: number, extra: Extra = {}) =>
  req("POST", name, path, status, { json, ...extra })
const put = (name: string, path: string, json: unknown, status: number, extra: Extra = {}) =>
  req("PUT", name, path, status, { json, ...extra })

/**
 * A POST sent with an Idempotency-Key, then the same again (the kept answer, Idempotent-Replayed:
 * true), then the key with another request (422 idempotency_key_reused): for a JSON body, the same
 * JSON with a trailing space; otherwise the same request on `otherPath`.
 */
const idempotent = (step: RequestStep, key: string, otherPath?: string): ReadonlyArray<RequestStep> => {
  const headers = { ...step.headers, "Idempotency-Key": key }
  const first: RequestStep = { ...step, headers }
  const replay: RequestStep = { ...step, name: `${step.name} — repeated with its Idempotency-Key: the kept answer`, headers, capture: {} }
  const reused: RequestStep = step.json !== undefined
    ? {
      ...step,
      name: `${step.name} — its Idempotency-Key with another body: 422`,
      status: 422,
      json: undefined,
      raw: { text: `${JSON.stringify(step.json)} `, contentType: "application/json" },
      headers,
      capture: {}
    }
    : step.multipart !== undefined
    ? {
      ...step,
      name: `${step.name} — its Idempotency-Key with another body: 422`,
      status: 422,
      multipart: { ...step.multipart, boundary: "----wire-corpus-other-boundary" },
      headers,
      capture: {}
    }
    : {
      ...step,
      name: `${step.name} — its Idempotency-Key on another path: 422`,
      status: 422,
      path: `${B}${otherPath ?? ""}`,
      headers,
      capture: {}
    }
  return [first, { ...replay, status: step.status }, reused]
}

const png = (path: string): MultipartPart => ({ name: "file", file: { path }, filename: "card.png", contentType: "image/png" })
const jpg = (path: string): MultipartPart => ({ name: "file", file: { path }, filename: "card.jpg", contentType: "image/jpeg" })
const field = (name: string, value: string): MultipartPart => ({ name, value })

const CARD_PNG = "test/fixtures/cards/card-clean.png"
const CARD_JPG = "test/fixtures/cards/photos/01-clean-table-hand.jpg"
const CARD_JPG_2 = "test/fixtures/cards/photos/06-clean-lines.jpg"
/** Blacklisted by the corpus: BLACKLISTED_MD5 is the MD5 of its bytes. */
const CARD_BLACKLISTED = "test/fixtures/cards/photos/35-hard-underlined.jpg"
const BLACKLISTED_MD5 = "e33fc7f7ce0b3c520e5445a4812c57b7"

// ---------------------------------------------------------------------------------------------
// The scenario

const unsignedEndpoints: ReadonlyArray<Step> = [
  get("GET /time: the server's clock, unsigned", "/time", 200, { as: "unsigned" }),
  get("GET /time with a signature: still answered", "/time", 200),
  req("GET", "GET /docs: the docs page (status and Content-Type only)", "/docs", 200, { as: "unsigned", statusAndTypeOnly: true }),
  req("GET", "GET /api/open/v1/openapi.json (status and Content-Type here; its operations in wire-openapi.json)", "/openapi.json", 200, {
    as: "unsigned",
    statusAndTypeOnly: true
  }),
  req("GET", "GET /healthz", "/healthz", 200, { as: "unsigned" }),
  req("GET", "GET /readyz", "/readyz", 200, { as: "unsigned" }),
  req("GET", "GET /: redirects (302) to /docs", "/", 302, { as: "unsigned" }),
  get("unknown route, signed: 404 route", "/no-such-thing", 404),
  get("unknown route, unsigned: 404 route", "/no-such-thing", 404, { as: "unsigned" }),
  req("PATCH", "a known path with an unserved method (PATCH /guests): 405 with Allow", "/guests", 405),
  req("DELETE", "a known path with an unserved method (DELETE /companies): 405 with Allow", "/companies", 405),
  get("X-Request-Id sent by the client is echoed", "/time", 200, { as: "unsigned", headers: { "X-Request-Id": "wire-corpus-request-1" } }),
  get("an Expect other than 100-continue: 417 expectation_failed (the HTTP layer's answer)", "/time", 417, {
    as: "unsigned",
    headers: { Expect: "teapot", "X-Request-Id": "wire-corpus-expect-1" }
  }),
  get("an X-Request-Id outside its pattern is replaced by a generated one", "/time", 200, {
    as: "unsigned",
    headers: { "X-Request-Id": "has spaces/and slashes" }
  })
]

const company1 = {
  name: "幸福婚介",
  contact_name: "张经理",
  contact_phone: "0731-88886666",
  province: "湖南省",
  city: "长沙市",
  district: "岳麓区",
  address: "麓山南路1号",
  credit_code: "91430100MA4L000001",
  logo_url: "https://example.com/logo.png",
  company_type: "normal"
}

const companies: ReadonlyArray<Step> = [
  ...idempotent(post("POST /companies: created", "/companies", company1, 200, { capture: { company1: "data.id" } }), "wire-company-1"),
  post("POST /companies: a franchisee", "/companies", { name: "加盟婚介", company_type: "franchisee", city: "株洲市" }, 200, {
    capture: { company2: "data.id" }
  }),
  post("POST /companies: name too short", "/companies", { name: "A" }, 400),
  post("POST /companies: name missing, phone malformed, type unknown", "/companies", { contact_phone: "abc", company_type: "chain" }, 400),
  post("POST /companies: body not JSON", "/companies", undefined, 400, {
    json: undefined,
    raw: { text: "{name:", contentType: "application/json" }
  }),
  post("POST /companies: body a JSON array", "/companies", [company1], 400),
  get("GET /companies", "/companies", 200),
  get(
    "GET /companies: keyword and city (UTF-8 query)",
    `/companies?keyword=${encodeURIComponent("幸福")}&city=${encodeURIComponent("长沙市")}`,
    200
  ),
  get("GET /companies: page 2 of size 1", "/companies?page=2&page_size=1", 200),
  get("GET /companies: page_size above the maximum is clamped", "/companies?page_size=1000", 200),
  get("GET /companies: page=0", "/companies?page=0", 400),
  get("GET /companies: status unknown", "/companies?status=closed", 400),
  get("GET /companies: a query that is not UTF-8", "/companies?keyword=%FF", 400),
  get("GET /companies/{id}", "/companies/{{company1}}", 200),
  get("GET /companies/{id}: masked (credit_code, contact_phone)", "/companies/{{company1}}", 200, { as: "masking" }),
  get("GET /companies/{id}: unknown id", "/companies/99999", 404),
  put("PUT /companies/{id}: city and contact", "/companies/{{company1}}", { city: "株洲市", contact_name: "李经理" }, 200),
  put("PUT /companies/{id}: company_type unknown", "/companies/{{company1}}", { company_type: "chain" }, 400),
  // DECISIONS §1: an all-optional body may be empty without Content-Type, as if {} had been sent.
  put("PUT /companies/{id}: empty body without Content-Type, as {}", "/companies/{{company1}}", undefined, 200, {
    json: undefined,
    raw: { text: "" }
  })
]

const matchmaker1 = {
  name: "王红娘",
  company_id: "{{company1}}",
  store_id: 12,
  phone: "13800000001",
  wechat: "wanghongniang",
  wechat_id: "wxid_wang",
  country: "中国",
  province: "湖南省",
  city: "长沙市",
  avatar: "https://example.com/a1.png",
  years_exp: 5,
  specialty: "高知人群",
  intro: "从业五年，成功牵线百对。",
  level: "gold"
}

const matchmakers: ReadonlyArray<Step> = [
  ...idempotent(
    post("POST /matchmakers: created", "/matchmakers", matchmaker1, 200, { capture: { matchmaker1: "data.id" } }),
    "wire-matchmaker-1"
  ),
  post(
    "POST /matchmakers: a second one",
    "/matchmakers",
    { name: "李红娘", company_id: "{{company1}}", phone: "13800000002", wechat: "lihn", wechat_id: "wxid_li" },
    200,
    { capture: { matchmaker2: "data.id" } }
  ),
  post("POST /matchmakers: an independent one (no company)", "/matchmakers", { name: "独立红娘" }, 200, {
    capture: { matchmaker3: "data.id" }
  }),
  post("POST /matchmakers: unknown company_id", "/matchmakers", { name: "无名", company_id: 99999 }, 404),
  post("POST /matchmakers: empty name, level unknown", "/matchmakers", { name: "", level: "platinum" }, 400),
  post("POST /matchmakers: company_id past int4", "/matchmakers", { name: "越界", company_id: 2147483648 }, 400),
  get("GET /matchmakers", "/matchmakers", 200),
  get("GET /matchmakers: company and level", "/matchmakers?company_id={{company1}}&level=gold", 200),
  get("GET /matchmakers: keyword", `/matchmakers?keyword=${encodeURIComponent("红娘")}&status=active`, 200),
  get("GET /matchmakers: has_guests not a boolean", "/matchmakers?has_guests=maybe", 400),
  get("GET /matchmakers: work_wechat_scope unknown", "/matchmakers?work_wechat_scope=friends", 400),
  get("GET /matchmakers/ids", "/matchmakers/ids", 200),
  get("GET /matchmakers/{id}", "/matchmakers/{{matchmaker1}}", 200),
  get("GET /matchmakers/{id}: masked (phone, wechat, wechat_id)", "/matchmakers/{{matchmaker1}}", 200, { as: "masking" }),
  get("GET /matchmakers/{id}: unknown id", "/matchmakers/99999", 404),
  put(
    "PUT /matchmakers/{id}: specialty and level",
    "/matchmakers/{{matchmaker2}}",
    { specialty: "海归", level: "silver", years_exp: 3 },
    200
  ),
  put("PUT /matchmakers/{id}: unknown company_id", "/matchmakers/{{matchmaker2}}", { company_id: 99999 }, 404),
  put("PUT /matchmakers/{id}: level unknown", "/matchmakers/{{matchmaker2}}", { level: "platinum" }, 400)
]

const guest1 = {
  name: "李晓雯",
  gender: "female",
  company_id: "{{company1}}",
  matchmaker_id: "{{matchmaker1}}",
  age: 28,
  phone: "13800138000",
  wechat: "lxw_wechat",
  workplace: "长沙市第一中学",
  height: 165,
  weight: 52,
  education: "硕士",
  occupation: "中学教师",
  income_amount: 150000,
  marital_status: "未婚",
  has_children: "no",
  has_house: "yes",
  has_car: "no",
  self_intro: "性格开朗，喜欢旅行和读书。",
  requirement: "年龄28-35岁，身高175以上，本科以上学历。",
  requirement_tags: {
    age_min: 28,
    age_max: 35,
    height_min: 175,
    education_min: 3,
    income_min: 3,
    marriage_status: [1],
    has_house: 1,
    locations: ["长沙", "湖南株洲"],
    health: ["健康", "不吸烟"],
    other: "孝顺"
  },
  req_income_text: "20万以上",
  native_place: "湖南长沙",
  photos: ["https://example.com/p1.jpg", "https://example.com/p2.jpg"],
  photo_time: "2025-06-01 10:00:00",
  birth_date: "1998-03-15",
  personality: "开朗",
  source_id: "src-001",
  source: "import"
}

const guest2 = {
  name: "张伟",
  gender: "male",
  company_id: "{{company1}}",
  matchmaker_id: "{{matchmaker2}}",
  age: 31,
  phone: "13900139000",
  height: 178,
  weight: 70,
  education: "本科",
  occupation: "工程师",
  income_level: "20-30万",
  marital_status: "未婚",
  has_children: "no",
  has_house: "yes",
  has_car: "yes",
  native_place: "上海浦东",
  req_location: "长沙、株洲",
  req_income_text: "月薪8千"
}

const guests: ReadonlyArray<Step> = [
  ...idempotent(post("POST /guests: created (every field)", "/guests", guest1, 200, { capture: { guest1: "data.id" } }), "wire-guest-1"),
  post("POST /guests: a second one", "/guests", guest2, 200, { capture: { guest2: "data.id" } }),
  post("POST /guests: the fewest fields", "/guests", { name: "赵六", gender: "male", company_id: "{{company2}}" }, 200, {
    capture: { guest3: "data.id" }
  }),
  post("POST /guests: gender unknown, age 17, phone short", "/guests", {
    name: "无效",
    gender: "unknown",
    company_id: "{{company1}}",
    age: 17,
    phone: "1380013"
  }, 400),
  post("POST /guests: required fields missing", "/guests", {}, 400),
  post("POST /guests: ten photos and a bad tag", "/guests", {
    name: "照片多",
    gender: "female",
    company_id: "{{company1}}",
    photos: Array.from({ length: 10 }, (_, i) => `https://example.com/${i}.jpg`),
    requirement_tags: { age_min: "x" }
  }, 400),
  post("POST /guests: a text with U+0000", "/guests", { name: "a\u0000b", gender: "male", company_id: "{{company1}}" }, 400),
  post("POST /guests: unknown company_id", "/guests", { name: "无司", gender: "male", company_id: 99999 }, 404),
  post(
    "POST /guests: unknown matchmaker_id",
    "/guests",
    { name: "无媒", gender: "male", company_id: "{{company1}}", matchmaker_id: 99999 },
    404
  ),
  get("GET /guests", "/guests", 200),
  get(
    "GET /guests: keyword, gender, order",
    `/guests?keyword=${encodeURIComponent("李")}&gender=female&order_by=updated_at&order_dir=asc`,
    200
  ),
  get("GET /guests: workplace filter", `/guests?workplace=${encodeURIComponent("一中")}`, 200),
  get("GET /guests: masked list", "/guests", 200, { as: "masking" }),
  // DECISIONS §1: a masking client's filter over a masked field is a 400 naming it.
  get(
    "GET /guests: a masking client's workplace filter is refused (a masked field)",
    `/guests?workplace=${encodeURIComponent("一中")}`,
    400,
    {
      as: "masking"
    }
  ),
  get("GET /guests: gender unknown, page_size 0", "/guests?gender=x&page_size=0", 400),
  get("GET /guests/{id}", "/guests/{{guest1}}", 200),
  get("GET /guests/{id}: derived fields of the second guest", "/guests/{{guest2}}", 200),
  get("GET /guests/{id}: masked", "/guests/{{guest1}}", 200, { as: "masking" }),
  get("GET /guests/{id}: unknown id", "/guests/99999", 404),
  put("PUT /guests/{id}: update-only fields and new tags", "/guests/{{guest1}}", {
    occupation: "高中教师",
    hobbies: "读书、徒步",
    ethnicity: "汉族",
    family_members: "父母",
    health_status: "健康",
    dating_description: "希望周末见面",
    accept_flash_marriage: "no",
    requirement_tags: { age_min: 29, locations: ["北京"] }
  }, 200),
  put("PUT /guests/{id}: age 200", "/guests/{{guest1}}", { age: 200 }, 400),
  put("PUT /guests/{id}: unknown company_id", "/guests/{{guest1}}", { company_id: 99999 }, 404),
  ...idempotent(
    post(
      "POST /guests/batch: one created, one failing",
      "/guests/batch",
      {
        guests: [
          { name: "批量甲", gender: "female", company_id: "{{company1}}", age: 26, phone: "13700001111" },
          { name: "批量乙", gender: "x", company_id: "{{company1}}" },
          { name: "批量丙", gender: "male", company_id: 99999 }
        ]
      },
      200,
      { capture: { guest4: "data.results[0].id" } }
    ),
    "wire-guest-batch-1"
  ),
  post("POST /guests/batch: guests not an array", "/guests/batch", { guests: "x" }, 400),
  post("POST /guests/batch: 51 guests", "/guests/batch", {
    guests: Array.from({ length: 51 }, (_, i) => ({ name: `批${i}`, gender: "male", company_id: "{{company1}}" }))
  }, 400),
  put("PUT /guests/batch: a status, an unknown id, an update-only field", "/guests/batch", {
    guests: [
      { id: "{{guest4}}", status: "available", native_place: "广东省深圳市南山区" },
      { id: 99999, name: "无人" },
      { id: "{{guest2}}", hobbies: "篮球" },
      { name: "无编号" }
    ]
  }, 200),
  put("PUT /guests/batch: no guests", "/guests/batch", {}, 400),
  put("PUT /guests/batch: 51 guests", "/guests/batch", { guests: Array.from({ length: 51 }, () => ({ id: "{{guest4}}" })) }, 400),
  get("GET /guests/{id}: after the batch update", "/guests/{{guest4}}", 200)
]

const workWechat1 = {
  wechat_number: "ww_001",
  phone: "13700000001",
  device_id: "dev-001",
  wechat_nickname: "小助手1",
  avatar: "https://example.com/ww1.png",
  qr_code: "https://example.com/ww1-qr.png",
  remark: "主号"
}

const workWechats: ReadonlyArray<Step> = [
  ...idempotent(post("POST /work-wechats: created", "/work-wechats", workWechat1, 200, { capture: { ww1: "data.id" } }), "wire-ww-1"),
  post("POST /work-wechats: a second one", "/work-wechats", { wechat_number: "ww_002", phone: "13700000002", device_id: "dev-002" }, 200, {
    capture: { ww2: "data.id" }
  }),
  post("POST /work-wechats: a third one", "/work-wechats", { wechat_number: "ww_003", phone: "13700000003" }, 200, {
    capture: { ww3: "data.id" }
  }),
  post("POST /work-wechats: a fourth one, to delete", "/work-wechats", { wechat_number: "ww_004", phone: "13700000004" }, 200, {
    capture: { ww4: "data.id" }
  }),
  post("POST /work-wechats: duplicate wechat_number", "/work-wechats", { wechat_number: "ww_001", phone: "13700000009" }, 400),
  post("POST /work-wechats: duplicate phone", "/work-wechats", { wechat_number: "ww_009", phone: "13700000001" }, 400),
  post(
    "POST /work-wechats: duplicate device_id",
    "/work-wechats",
    { wechat_number: "ww_009", phone: "13700000009", device_id: "dev-001" },
    400
  ),
  post("POST /work-wechats: required fields missing", "/work-wechats", { wechat_nickname: "无号" }, 400),
  get("GET /work-wechats", "/work-wechats", 200),
  get("GET /work-wechats: keyword and status", "/work-wechats?keyword=ww_00&status=active&page_size=2", 200),
  get("GET /work-wechats: status unknown", "/work-wechats?status=gone", 400),
  get("GET /work-wechats/{id}", "/work-wechats/{{ww1}}", 200),
  get("GET /work-wechats/{id}: masked phone", "/work-wechats/{{ww1}}", 200, { as: "masking" }),
  put(
    "PUT /work-wechats/{id}: nickname and remark",
    "/work-wechats/{{ww1}}",
    { wechat_nickname: "小助手一号", remark: "主号（长沙）" },
    200
  ),
  put("PUT /work-wechats/{id}: nothing changes", "/work-wechats/{{ww1}}", { remark: "主号（长沙）" }, 200),
  put("PUT /work-wechats/{id}: another account's phone", "/work-wechats/{{ww1}}", { phone: "13700000002" }, 400),
  put("PUT /work-wechats/{id}: avatar not a string", "/work-wechats/{{ww1}}", { avatar: 5 }, 400),
  req("PUT", "PUT /work-wechats/{id}/status: disabled", "/work-wechats/{{ww2}}/status?status=disabled", 200),
  req("PUT", "PUT /work-wechats/{id}/status: the same status again", "/work-wechats/{{ww2}}/status?status=disabled", 200),
  req("PUT", "PUT /work-wechats/{id}/status: status unknown", "/work-wechats/{{ww2}}/status?status=gone", 400),
  req("PUT", "PUT /work-wechats/{id}/status: status missing", "/work-wechats/{{ww2}}/status", 400),
  ...idempotent(
    post("POST /work-wechats/{id}/associate: a matchmaker", "/work-wechats/{{ww1}}/associate", {
      target_type: "matchmaker",
      target_id: "{{matchmaker1}}",
      remark: "好友"
    }, 200),
    "wire-ww-associate-1"
  ),
  post("POST /work-wechats/{id}/associate: already associated", "/work-wechats/{{ww1}}/associate", {
    target_type: "matchmaker",
    target_id: "{{matchmaker1}}"
  }, 400),
  post("POST /work-wechats/{id}/associate: unknown target", "/work-wechats/{{ww1}}/associate", {
    target_type: "matchmaker",
    target_id: 99999
  }, 404),
  post("POST /work-wechats/{id}/associate: company of the wrong kind", "/work-wechats/{{ww1}}/associate", {
    target_type: "company",
    target_id: "{{company2}}"
  }, 400),
  post("POST /work-wechats/{id}/associate: a disabled account", "/work-wechats/{{ww2}}/associate", {
    target_type: "matchmaker",
    target_id: "{{matchmaker1}}"
  }, 400),
  post(
    "POST /work-wechats/{id}/associate: target_type unknown",
    "/work-wechats/{{ww1}}/associate",
    { target_type: "agent", target_id: 1 },
    400
  ),
  ...idempotent(
    post("POST /work-wechats/{id}/batch-associate: one new, one repeated, one existing", "/work-wechats/{{ww1}}/batch-associate", {
      target_type: "matchmaker",
      target_ids: ["{{matchmaker2}}", "{{matchmaker2}}", "{{matchmaker1}}"],
      remark: "批量"
    }, 200),
    "wire-ww-batch-1"
  ),
  post("POST /work-wechats/{id}/batch-associate: companies", "/work-wechats/{{ww1}}/batch-associate", {
    target_type: "company",
    target_ids: ["{{company1}}"]
  }, 200),
  post("POST /work-wechats/{id}/batch-associate: franchisees", "/work-wechats/{{ww3}}/batch-associate", {
    target_type: "franchisee",
    target_ids: ["{{company2}}"]
  }, 200),
  post("POST /work-wechats/{id}/batch-associate: unknown targets", "/work-wechats/{{ww1}}/batch-associate", {
    target_type: "matchmaker",
    target_ids: [99999, "{{matchmaker1}}", 99998]
  }, 404),
  post("POST /work-wechats/{id}/batch-associate: target_ids missing", "/work-wechats/{{ww1}}/batch-associate", {
    target_type: "matchmaker"
  }, 400),
  ...idempotent(
    post("POST /work-wechats/{id}/disassociate", "/work-wechats/{{ww1}}/disassociate", {
      target_type: "company",
      target_id: "{{company1}}",
      remark: "解除"
    }, 200),
    "wire-ww-disassociate-1"
  ),
  post("POST /work-wechats/{id}/disassociate: not associated", "/work-wechats/{{ww1}}/disassociate", {
    target_type: "company",
    target_id: "{{company1}}"
  }, 404),
  post("POST /work-wechats/{id}/disassociate: target_id missing", "/work-wechats/{{ww1}}/disassociate", { target_type: "company" }, 400),
  ...idempotent(
    post("POST /work-wechats/{id}/transfer: matchmakers to another account", "/work-wechats/{{ww1}}/transfer", {
      target_type: "matchmaker",
      target_ids: ["{{matchmaker1}}", "{{matchmaker3}}"],
      target_work_wechat_id: "{{ww3}}",
      remark: "交接"
    }, 200),
    "wire-ww-transfer-1"
  ),
  post("POST /work-wechats/{id}/transfer: every matchmaker (no target_ids)", "/work-wechats/{{ww1}}/transfer", {
    target_type: "matchmaker",
    target_work_wechat_id: "{{ww3}}"
  }, 200),
  post("POST /work-wechats/{id}/transfer: to itself", "/work-wechats/{{ww1}}/transfer", {
    target_type: "matchmaker",
    target_work_wechat_id: "{{ww1}}"
  }, 400),
  post("POST /work-wechats/{id}/transfer: to a disabled account", "/work-wechats/{{ww1}}/transfer", {
    target_type: "matchmaker",
    target_work_wechat_id: "{{ww2}}"
  }, 400),
  post("POST /work-wechats/{id}/transfer: to an unknown account", "/work-wechats/{{ww1}}/transfer", {
    target_type: "matchmaker",
    target_work_wechat_id: 99999
  }, 404),
  post("POST /work-wechats/{id}/transfer: unknown targets", "/work-wechats/{{ww3}}/transfer", {
    target_type: "matchmaker",
    target_ids: [99999],
    target_work_wechat_id: "{{ww1}}"
  }, 404),
  ...idempotent(
    post("POST /work-wechats/{id}/transfer-admin", "/work-wechats/{{ww1}}/transfer-admin", { target_admin_id: 7, remark: "换管理员" }, 200),
    "wire-ww-admin-1"
  ),
  post("POST /work-wechats/{id}/transfer-admin: the same admin again", "/work-wechats/{{ww1}}/transfer-admin", { target_admin_id: 7 }, 200),
  post("POST /work-wechats/{id}/transfer-admin: target_admin_id not an id", "/work-wechats/{{ww1}}/transfer-admin", {
    target_admin_id: "x"
  }, 400),
  get("GET /work-wechats/{id}/associations", "/work-wechats/{{ww3}}/associations", 200),
  get("GET /work-wechats/{id}/associations: by target_type", "/work-wechats/{{ww3}}/associations?target_type=franchisee", 200),
  get("GET /work-wechats/{id}/associations: target_type unknown", "/work-wechats/{{ww3}}/associations?target_type=agent", 400),
  get("GET /work-wechats/{id}/logs", "/work-wechats/{{ww1}}/logs", 200),
  get("GET /work-wechats/{id}/logs: page 2 of size 3", "/work-wechats/{{ww1}}/logs?page=2&page_size=3", 200),
  del("DELETE /work-wechats/{id}: still has associations", "/work-wechats/{{ww3}}", 400),
  del("DELETE /work-wechats/{id}", "/work-wechats/{{ww4}}", 200),
  get("GET /work-wechats/{id}: deleted", "/work-wechats/{{ww4}}", 404),
  get("GET /work-wechats/{id}/logs: a deleted account's logs stay readable", "/work-wechats/{{ww4}}/logs", 200),
  del("DELETE /work-wechats/{id}: deleted already", "/work-wechats/{{ww4}}", 404),
  post(
    "POST /work-wechats: a deleted account's wechat_number is free again",
    "/work-wechats",
    { wechat_number: "ww_004", phone: "13700000004" },
    200,
    {
      capture: { ww5: "data.id" }
    }
  ),
  get("GET /matchmakers: reached directly by an account", "/matchmakers?work_wechat_id={{ww3}}&work_wechat_scope=direct", 200),
  get("GET /matchmakers: reached by no account", "/matchmakers?work_wechat_filter=empty", 200),
  get("GET /work-wechats/{id}: counts after the associations", "/work-wechats/{{ww3}}", 200)
]

const workGroups: ReadonlyArray<Step> = [
  ...idempotent(
    post(
      "POST /work-groups: created",
      "/work-groups",
      {
        name: "长沙高知群",
        group_no: "G-001",
        qr_code: "https://example.com/g1.png",
        status: "active",
        remark: "高学历"
      },
      200,
      { capture: { group1: "data.id" } }
    ),
    "wire-group-1"
  ),
  post("POST /work-groups: a second one", "/work-groups", { name: "株洲群", group_no: "G-002" }, 200, { capture: { group2: "data.id" } }),
  post("POST /work-groups: without group_no", "/work-groups", { name: "无号群" }, 200, { capture: { group3: "data.id" } }),
  post("POST /work-groups: another without group_no", "/work-groups", { name: "无号群二", group_no: "" }, 200),
  post("POST /work-groups: duplicate group_no", "/work-groups", { name: "重复群", group_no: "G-001" }, 400),
  post("POST /work-groups: name missing, status unknown", "/work-groups", { status: "open" }, 400),
  ...idempotent(
    post(
      "POST /work-groups/{id}/matchmakers",
      "/work-groups/{{group1}}/matchmakers",
      { matchmaker_id: "{{matchmaker1}}", remark: "群主" },
      200
    ),
    "wire-group-mm-1"
  ),
  post(
    "POST /work-groups/{id}/matchmakers: already a member",
    "/work-groups/{{group1}}/matchmakers",
    { matchmaker_id: "{{matchmaker1}}" },
    400
  ),
  post("POST /work-groups/{id}/matchmakers: unknown matchmaker", "/work-groups/{{group1}}/matchmakers", { matchmaker_id: 99999 }, 404),
  post("POST /work-groups/{id}/matchmakers: matchmaker_id missing", "/work-groups/{{group1}}/matchmakers", {}, 400),
  ...idempotent(
    post("POST /work-groups/{id}/matchmakers/batch", "/work-groups/{{group1}}/matchmakers/batch", {
      matchmaker_ids: ["{{matchmaker1}}", "{{matchmaker2}}", "{{matchmaker3}}"],
      remark: "批量入群"
    }, 200),
    "wire-group-mm-batch-1"
  ),
  post("POST /work-groups/{id}/matchmakers/batch: unknown matchmakers", "/work-groups/{{group1}}/matchmakers/batch", {
    matchmaker_ids: [99999]
  }, 404),
  ...idempotent(
    post("POST /work-groups/{id}/work-wechats", "/work-groups/{{group1}}/work-wechats", { work_wechat_id: "{{ww1}}", remark: "助手" }, 200),
    "wire-group-ww-1"
  ),
  post("POST /work-groups/{id}/work-wechats: already a member", "/work-groups/{{group1}}/work-wechats", { work_wechat_id: "{{ww1}}" }, 400),
  post("POST /work-groups/{id}/work-wechats: unknown account", "/work-groups/{{group1}}/work-wechats", { work_wechat_id: 99999 }, 404),
  ...idempotent(
    post("POST /work-groups/{id}/work-wechats/batch", "/work-groups/{{group1}}/work-wechats/batch", {
      work_wechat_ids: ["{{ww1}}", "{{ww3}}"]
    }, 200),
    "wire-group-ww-batch-1"
  ),
  post("POST /work-groups/{id}/work-wechats/batch: unknown accounts", "/work-groups/{{group1}}/work-wechats/batch", {
    work_wechat_ids: [99999, 99998]
  }, 404),
  post("POST /work-groups/{id}/work-wechats/batch: work_wechat_ids not a list", "/work-groups/{{group1}}/work-wechats/batch", {
    work_wechat_ids: "1,2"
  }, 400),
  get("GET /work-groups", "/work-groups", 200),
  get("GET /work-groups: members and a matchmaker", "/work-groups?has_matchmaker=true&matchmaker_id={{matchmaker1}}", 200),
  get("GET /work-groups: keyword, status, no work account", "/work-groups?keyword=G-00&status=active&has_work_wechat=0", 200),
  get("GET /work-groups: has_matchmaker not a boolean", "/work-groups?has_matchmaker=maybe", 400),
  get("GET /work-groups/{id}", "/work-groups/{{group1}}", 200),
  put("PUT /work-groups/{id}: remark", "/work-groups/{{group1}}", { remark: "高学历，长沙" }, 200),
  put("PUT /work-groups/{id}: another group's group_no", "/work-groups/{{group1}}", { group_no: "G-002" }, 400),
  put("PUT /work-groups/{id}: name empty", "/work-groups/{{group1}}", { name: "" }, 400),
  req("PUT", "PUT /work-groups/{id}/status: disabled", "/work-groups/{{group2}}/status?status=disabled", 200),
  req("PUT", "PUT /work-groups/{id}/status: status unknown", "/work-groups/{{group2}}/status?status=gone", 400),
  get("GET /work-groups/{id}/matchmakers", "/work-groups/{{group1}}/matchmakers", 200),
  get("GET /work-groups/{id}/matchmakers: masked", "/work-groups/{{group1}}/matchmakers", 200, { as: "masking" }),
  get("GET /work-groups/{id}/work-wechats", "/work-groups/{{group1}}/work-wechats", 200),
  get("GET /work-groups/{id}/work-wechats: masked", "/work-groups/{{group1}}/work-wechats", 200, { as: "masking" }),
  get("GET /work-groups/{id}/logs", "/work-groups/{{group1}}/logs", 200),
  get("GET /matchmakers: in a group", "/matchmakers?group_nos=G-001,G-002", 200),
  get(
    "GET /matchmakers: in a group (repeated keys), reached by group",
    "/matchmakers?group_nos=G-001&group_nos=G-009&work_wechat_scope=group",
    200
  ),
  get("GET /matchmakers/ids: reach and groups", "/matchmakers/ids?company_id={{company1}}&work_wechat_scope=all", 200),
  del("DELETE /work-groups/{id}: still has members", "/work-groups/{{group1}}", 400),
  del("DELETE /work-groups/{id}/matchmakers/{matchmaker_id}", "/work-groups/{{group1}}/matchmakers/{{matchmaker2}}", 200),
  del("DELETE /work-groups/{id}/matchmakers/{matchmaker_id}: not a member", "/work-groups/{{group1}}/matchmakers/{{matchmaker2}}", 404),
  del("DELETE /work-groups/{id}/work-wechats/{work_wechat_id}", "/work-groups/{{group1}}/work-wechats/{{ww3}}", 200),
  del("DELETE /work-groups/{id}/work-wechats/{work_wechat_id}: not a member", "/work-groups/{{group1}}/work-wechats/{{ww3}}", 404),
  del("DELETE /work-groups/{id}", "/work-groups/{{group2}}", 200),
  get("GET /work-groups/{id}: deleted", "/work-groups/{{group2}}", 404),
  get("GET /work-groups/{id}/logs: a deleted group's logs stay readable", "/work-groups/{{group2}}/logs", 200),
  post("POST /work-groups: a deleted group's group_no is free again", "/work-groups", { name: "株洲新群", group_no: "G-002" }, 200)
]

const blacklist: ReadonlyArray<Step> = [
  ...idempotent(
    post("POST /image-blacklist: added, repeated, malformed", "/image-blacklist", {
      items: [
        { md5: BLACKLISTED_MD5, source: "manual", reject_reason: "广告图片" },
        { md5: "0123456789abcdef0123456789abcdef" },
        { md5: "0123456789abcdef0123456789abcdef" },
        { md5: "not-an-md5" },
        { md5: "fedcba9876543210fedcba9876543210", source: "elsewhere" }
      ]
    }, 200),
    "wire-blacklist-1"
  ),
  post("POST /image-blacklist: the same md5 again", "/image-blacklist", {
    items: [{ md5: "0123456789ABCDEF0123456789ABCDEF", source: "sync" }]
  }, 200),
  post("POST /image-blacklist: items missing", "/image-blacklist", {}, 400),
  post("POST /image-blacklist: 1001 items", "/image-blacklist", {
    items: Array.from({ length: 1001 }, (_, i) => ({ md5: i.toString(16).padStart(32, "0") }))
  }, 400),
  get("GET /image-blacklist", "/image-blacklist", 200),
  get("GET /image-blacklist: by source", "/image-blacklist?source=external", 200, { capture: { blacklistRecord: "data.list[0].id" } }),
  get("GET /image-blacklist: status and source", "/image-blacklist?status=active&source=manual", 200),
  get("GET /image-blacklist: status unknown", "/image-blacklist?status=gone", 400),
  get("GET /image-blacklist: the one-permission client may read it", "/image-blacklist?page_size=1", 200, { as: "few" }),
  ...idempotent(
    post("POST /image-blacklist/check: blocked, allowed, invalid", "/image-blacklist/check", {
      md5_list: [BLACKLISTED_MD5, "ffffffffffffffffffffffffffffffff", "xyz", "0123456789abcdef0123456789abcdef"]
    }, 200),
    "wire-blacklist-check-1"
  ),
  post("POST /image-blacklist/check: all allowed (no invalid key)", "/image-blacklist/check", {
    md5_list: ["ffffffffffffffffffffffffffffffff"]
  }, 200),
  post("POST /image-blacklist/check: 501 md5s", "/image-blacklist/check", {
    md5_list: Array.from({ length: 501 }, (_, i) => i.toString(16).padStart(32, "0"))
  }, 400),
  post("POST /image-blacklist/check: md5_list missing", "/image-blacklist/check", {}, 400),
  get("GET /image-blacklist: hit counts after the check", "/image-blacklist", 200),
  del("DELETE /image-blacklist/{record_id}", "/image-blacklist/{{blacklistRecord}}", 200),
  del("DELETE /image-blacklist/{record_id}: removed already", "/image-blacklist/{{blacklistRecord}}", 404)
]

const cards: ReadonlyArray<Step> = [
  {
    ...post("POST /guests/parse-card: a PNG card read by OCR (the request that ran)", "/guests/parse-card", undefined, 200, {
      json: undefined,
      multipart: { parts: [png(CARD_PNG), field("matchmaker_id", "{{matchmaker1}}")] },
      headers: { "Idempotency-Key": "wire-parse-1" }
    }),
    concurrentRepeat: {
      afterMs: 400,
      repeatName: "POST /guests/parse-card: the same Idempotency-Key while the first still runs: the first answer, replayed",
      repeatStatus: 200
    }
  },
  post("POST /guests/parse-card: repeated with its Idempotency-Key: the kept answer", "/guests/parse-card", undefined, 200, {
    json: undefined,
    multipart: { parts: [png(CARD_PNG), field("matchmaker_id", "{{matchmaker1}}")] },
    headers: { "Idempotency-Key": "wire-parse-1" }
  }),
  post("POST /guests/parse-card: its Idempotency-Key with another body: 422", "/guests/parse-card", undefined, 422, {
    json: undefined,
    multipart: { parts: [png(CARD_PNG)], boundary: "----wire-corpus-other-boundary" },
    headers: { "Idempotency-Key": "wire-parse-1" }
  }),
  post("POST /guests/parse-card: no file", "/guests/parse-card", undefined, 400, {
    json: undefined,
    multipart: { parts: [field("matchmaker_id", "{{matchmaker1}}")] }
  }),
  post("POST /guests/parse-card: a file that is no image", "/guests/parse-card", undefined, 400, {
    json: undefined,
    multipart: { parts: [{ name: "file", file: { text: "just text, no image" }, filename: "card.jpg", contentType: "image/jpeg" }] }
  }),
  post("POST /guests/parse-card: a PNG signature over nothing", "/guests/parse-card", undefined, 400, {
    json: undefined,
    multipart: { parts: [{ name: "file", file: { text: "\u0089PNG\r\n\u001a\nbroken" }, filename: "card.png", contentType: "image/png" }] }
  }),
  post("POST /guests/parse-card: a blacklisted image", "/guests/parse-card", undefined, 400, {
    json: undefined,
    multipart: { parts: [jpg(CARD_BLACKLISTED)] }
  }),
  post("POST /guests/parse-card: unknown matchmaker_id", "/guests/parse-card", undefined, 404, {
    json: undefined,
    multipart: { parts: [jpg(CARD_JPG), field("matchmaker_id", "99999")] }
  }),
  post("POST /guests/parse-card: matchmaker_id not an id", "/guests/parse-card", undefined, 400, {
    json: undefined,
    multipart: { parts: [jpg(CARD_JPG), field("matchmaker_id", "abc")] }
  }),
  ...idempotent(
    post("POST /guests/create-from-card: accepted (a pending task)", "/guests/create-from-card", undefined, 200, {
      json: undefined,
      multipart: {
        parts: [
          jpg(CARD_JPG),
          field("matchmaker_id", "{{matchmaker1}}"),
          field("overrides", JSON.stringify({ phone: "13811112222", source: "card-import", photo_time: "2025-01-02 03:04:05" }))
        ]
      },
      capture: { cardTask1: "data.task_id" }
    }),
    "wire-card-1"
  ),
  post("POST /guests/create-from-card: the same image while its task is pending", "/guests/create-from-card", undefined, 200, {
    json: undefined,
    multipart: { parts: [jpg(CARD_JPG), field("matchmaker_id", "{{matchmaker1}}")] }
  }),
  post("POST /guests/create-from-card: another image, company given", "/guests/create-from-card", undefined, 200, {
    json: undefined,
    multipart: { parts: [jpg(CARD_JPG_2), field("matchmaker_id", "{{matchmaker3}}"), field("company_id", "{{company2}}")] }
  }),
  post("POST /guests/create-from-card: a matchmaker without a company and no company_id", "/guests/create-from-card", undefined, 400, {
    json: undefined,
    multipart: { parts: [jpg(CARD_JPG), field("matchmaker_id", "{{matchmaker3}}")] }
  }),
  post("POST /guests/create-from-card: unknown matchmaker_id", "/guests/create-from-card", undefined, 404, {
    json: undefined,
    multipart: { parts: [jpg(CARD_JPG), field("matchmaker_id", "99999")] }
  }),
  post("POST /guests/create-from-card: unknown company_id", "/guests/create-from-card", undefined, 404, {
    json: undefined,
    multipart: { parts: [jpg(CARD_JPG), field("matchmaker_id", "{{matchmaker1}}"), field("company_id", "99999")] }
  }),
  post("POST /guests/create-from-card: matchmaker_id missing", "/guests/create-from-card", undefined, 400, {
    json: undefined,
    multipart: { parts: [jpg(CARD_JPG)] }
  }),
  post("POST /guests/create-from-card: overrides not a JSON object", "/guests/create-from-card", undefined, 400, {
    json: undefined,
    multipart: { parts: [jpg(CARD_JPG), field("matchmaker_id", "{{matchmaker1}}"), field("overrides", "[1,2")] }
  }),
  post("POST /guests/create-from-card: a blacklisted image", "/guests/create-from-card", undefined, 400, {
    json: undefined,
    multipart: { parts: [jpg(CARD_BLACKLISTED), field("matchmaker_id", "{{matchmaker1}}")] }
  }),
  post("POST /guests/create-from-card: a file that is no image", "/guests/create-from-card", undefined, 400, {
    json: undefined,
    multipart: {
      parts: [
        { name: "file", file: { text: "GIF89a" }, filename: "card.gif", contentType: "image/gif" },
        field("matchmaker_id", "{{matchmaker1}}")
      ]
    }
  }),
  get("GET /guests/card-task/{task_id}: pending", "/guests/card-task/{{cardTask1}}", 200),
  get("GET /guests/card-task/{task_id}: unknown task", "/guests/card-task/ct_000000000000000000000000", 404),
  get("GET /guests/card-task/{task_id}: not a task id", "/guests/card-task/abc", 400)
]

const activity1 = {
  title: "周末相亲会",
  address: "长沙市五一广场",
  start_time: "2099-05-01 14:00:00",
  end_time: "2099-05-01 17:00:00",
  company_id: "{{company1}}",
  description: "轻松交友",
  cover_url: "https://example.com/act.png",
  male_quota: 1,
  female_quota: 0,
  male_fee: 99.5,
  female_fee: 0
}

const activitiesCreate: ReadonlyArray<Step> = [
  ...idempotent(
    post("POST /activities: created (draft)", "/activities", activity1, 200, { capture: { activity1: "data.id" } }),
    "wire-activity-1"
  ),
  post(
    "POST /activities: a second one, left a draft",
    "/activities",
    {
      title: "读书会",
      address: "株洲市图书馆",
      start_time: "2099-06-01 09:00:00",
      end_time: "2099-06-01 11:00:00",
      company_id: "{{company2}}"
    },
    200,
    { capture: { activity2: "data.id" } }
  ),
  post("POST /activities: required fields missing, a time malformed", "/activities", { title: "", start_time: "2099-13-01 00:00:00" }, 400),
  post("POST /activities: a fee with three decimals", "/activities", { ...activity1, male_fee: 1.005 }, 400),
  post("POST /activities: unknown company_id", "/activities", { ...activity1, company_id: 99999 }, 404),
  post("POST /activities/{id}/register: a draft is not open", "/activities/{{activity2}}/register", { guest_id: "{{guest1}}" }, 400)
]

const activitiesRegister: ReadonlyArray<Step> = [
  ...idempotent(
    post("POST /activities/{id}/register", "/activities/{{activity1}}/register", {
      guest_id: "{{guest2}}",
      name: "张伟",
      phone: "13900139000",
      remark: "准时到"
    }, 200),
    "wire-register-1"
  ),
  post("POST /activities/{id}/register: already registered", "/activities/{{activity1}}/register", { guest_id: "{{guest2}}" }, 400),
  post("POST /activities/{id}/register: the male places are taken", "/activities/{{activity1}}/register", { guest_id: "{{guest3}}" }, 400),
  post("POST /activities/{id}/register: no female places", "/activities/{{activity1}}/register", { guest_id: "{{guest1}}" }, 400),
  post("POST /activities/{id}/register: unknown guest", "/activities/{{activity1}}/register", { guest_id: 99999 }, 404),
  post("POST /activities/{id}/register: guest_id not an id", "/activities/{{activity1}}/register", { guest_id: "x" }, 400),
  get("GET /activities", "/activities", 200),
  get("GET /activities: status and company", "/activities?status=registering&company_id={{company1}}", 200),
  get("GET /activities: status unknown", "/activities?status=open", 400)
]

const matches: ReadonlyArray<Step> = [
  ...idempotent(
    post("POST /matches: created", "/matches", { guest_a_id: "{{guest1}}", guest_b_id: "{{guest2}}" }, 200, {
      capture: { match1: "data.id" }
    }),
    "wire-match-1"
  ),
  post("POST /matches: the same pair again", "/matches", { guest_a_id: "{{guest1}}", guest_b_id: "{{guest2}}" }, 400),
  post("POST /matches: the same pair reversed", "/matches", { guest_a_id: "{{guest2}}", guest_b_id: "{{guest1}}" }, 400),
  post(
    "POST /matches: with explicit matchmakers",
    "/matches",
    {
      guest_a_id: "{{guest1}}",
      guest_b_id: "{{guest3}}",
      guest_a_matchmaker_id: "{{matchmaker2}}",
      guest_b_matchmaker_id: "{{matchmaker3}}"
    },
    200,
    { capture: { match2: "data.id" } }
  ),
  post("POST /matches: a guest with itself", "/matches", { guest_a_id: "{{guest1}}", guest_b_id: "{{guest1}}" }, 400),
  post("POST /matches: unknown guest", "/matches", { guest_a_id: "{{guest1}}", guest_b_id: 99999 }, 404),
  post("POST /matches: unknown matchmaker", "/matches", {
    guest_a_id: "{{guest2}}",
    guest_b_id: "{{guest3}}",
    guest_a_matchmaker_id: 99999
  }, 404),
  put("PUT /matches/{id}/status: pending to dating skips a step", "/matches/{{match1}}/status", { status: "dating" }, 400),
  put("PUT /matches/{id}/status: pending_date", "/matches/{{match1}}/status", { status: "pending_date" }, 200),
  put("PUT /matches/{id}/status: dating", "/matches/{{match1}}/status", { status: "dating" }, 200),
  put("PUT /matches/{id}/status: the same status again", "/matches/{{match1}}/status", { status: "dating" }, 200),
  put("PUT /matches/{id}/status: completed", "/matches/{{match1}}/status", { status: "completed" }, 200),
  put("PUT /matches/{id}/status: back to dating from completed", "/matches/{{match1}}/status", { status: "dating" }, 400),
  put("PUT /matches/{id}/status: pending is not a target", "/matches/{{match2}}/status", { status: "pending" }, 400),
  put("PUT /matches/{id}/status: rejected", "/matches/{{match2}}/status", { status: "rejected" }, 200),
  post(
    "POST /matches: the pair again once its match is completed",
    "/matches",
    { guest_a_id: "{{guest2}}", guest_b_id: "{{guest1}}" },
    200
  ),
  get("GET /matches", "/matches", 200),
  get("GET /matches: guest and status", "/matches?guest_id={{guest1}}&status=completed", 200),
  get("GET /matches: a date range", "/matches?start_date=2020-01-01&end_date=2099-12-31&company_id={{company1}}", 200),
  get("GET /matches: start_date malformed", "/matches?start_date=2020-1-1", 400)
]

const memberships: ReadonlyArray<Step> = [
  ...idempotent(
    post("POST /memberships: created", "/memberships", { user_id: "{{user1}}", plan_id: 1, guest_id: "{{guest1}}" }, 200, {
      capture: { membership1: "data.id" }
    }),
    "wire-membership-1"
  ),
  post("POST /memberships: renewed (same user and plan)", "/memberships", { user_id: "{{user1}}", plan_id: 1 }, 200),
  post("POST /memberships: another plan", "/memberships", { user_id: "{{user1}}", plan_id: 3 }, 200),
  post("POST /memberships: unknown user", "/memberships", { user_id: 99999, plan_id: 1 }, 404),
  post("POST /memberships: unknown plan", "/memberships", { user_id: "{{user1}}", plan_id: 99999 }, 404),
  post("POST /memberships: unknown guest", "/memberships", { user_id: "{{user1}}", plan_id: 1, guest_id: 99999 }, 404),
  post("POST /memberships: plan_id missing", "/memberships", { user_id: "{{user1}}" }, 400),
  get("GET /memberships", "/memberships", 200),
  get("GET /memberships: user and status", "/memberships?user_id={{user1}}&status=active", 200),
  get("GET /memberships: status unknown", "/memberships?status=paused", 400)
]

const FOLLOW_UP_DATE = "2020-01-01"

const followUps: ReadonlyArray<Step> = [
  get("GET /follow-up/tasks: the plan's first day", `/follow-up/tasks?date=${FOLLOW_UP_DATE}`, 200, {
    capture: { task1: "data.list[0].id" }
  }),
  get("GET /follow-up/tasks: the second day", "/follow-up/tasks?date=2020-01-02&task_type=recommend&company_id={{company1}}", 200, {
    capture: { task2: "data.list[0].id" }
  }),
  get("GET /follow-up/tasks: the third day", "/follow-up/tasks?date=2020-01-03", 200, { capture: { task3: "data.list[0].id" } }),
  get("GET /follow-up/tasks: the fourth day", "/follow-up/tasks?date=2020-01-04", 200, { capture: { task4: "data.list[0].id" } }),
  get("GET /follow-up/tasks: today (none)", "/follow-up/tasks", 200),
  get("GET /follow-up/tasks: status unknown", "/follow-up/tasks?status=open", 400),
  get("GET /follow-up/tasks: date malformed", "/follow-up/tasks?date=2020-01-32", 400),
  get("GET /follow-up/tasks/{task_id}", "/follow-up/tasks/{{task1}}", 200),
  get("GET /follow-up/tasks/{task_id}: masked", "/follow-up/tasks/{{task1}}", 200, { as: "masking" }),
  post("POST /follow-up/tasks/{task_id}/complete: a pending task", "/follow-up/tasks/{{task1}}/complete", {}, 400),
  ...idempotent(
    req("POST", "POST /follow-up/tasks/{task_id}/dispatch", "/follow-up/tasks/{{task1}}/dispatch", 200),
    "wire-dispatch-1",
    "/follow-up/tasks/{{task2}}/dispatch"
  ),
  req("POST", "POST /follow-up/tasks/{task_id}/dispatch: by the holder again", "/follow-up/tasks/{{task1}}/dispatch", 200),
  req("POST", "POST /follow-up/tasks/{task_id}/dispatch: by another client", "/follow-up/tasks/{{task1}}/dispatch", 409, { as: "masking" }),
  post("POST /follow-up/tasks/{task_id}/complete: by another client", "/follow-up/tasks/{{task1}}/complete", {}, 409, { as: "masking" }),
  post("POST /follow-up/tasks/{task_id}/fail: by another client", "/follow-up/tasks/{{task1}}/fail", {}, 409, { as: "masking" }),
  post(
    "POST /follow-up/tasks/{task_id}/complete: match_score out of range",
    "/follow-up/tasks/{{task1}}/complete",
    { match_score: 101 },
    400
  ),
  post("POST /follow-up/tasks/{task_id}/complete: unknown matched guest", "/follow-up/tasks/{{task1}}/complete", {
    matched_guest_id: 99999
  }, 404),
  ...idempotent(
    post("POST /follow-up/tasks/{task_id}/complete", "/follow-up/tasks/{{task1}}/complete", {
      matched_guest_id: "{{guest2}}",
      match_score: 87.5,
      share_link: "https://example.com/share/1",
      share_channel: "wechat",
      extra: { note: "双方有意向", round: 1 }
    }, 200),
    "wire-complete-1"
  ),
  post("POST /follow-up/tasks/{task_id}/complete: again (idempotent)", "/follow-up/tasks/{{task1}}/complete", {}, 200),
  post("POST /follow-up/tasks/{task_id}/fail: a completed task", "/follow-up/tasks/{{task1}}/fail", {}, 400),
  get("GET /follow-up/tasks/{task_id}: completed", "/follow-up/tasks/{{task1}}", 200),
  req("POST", "POST /follow-up/tasks/{task_id}/dispatch: the second task", "/follow-up/tasks/{{task2}}/dispatch", 200),
  ...idempotent(
    post(
      "POST /follow-up/tasks/{task_id}/fail",
      "/follow-up/tasks/{{task2}}/fail",
      { error_code: "no_match", error_msg: "无合适人选" },
      200
    ),
    "wire-fail-1"
  ),
  post("POST /follow-up/tasks/{task_id}/fail: again (idempotent)", "/follow-up/tasks/{{task2}}/fail", { error_code: "other" }, 200),
  post("POST /follow-up/tasks/{task_id}/fail: error_code not a string", "/follow-up/tasks/{{task3}}/fail", { error_code: 5 }, 400),
  ...idempotent(
    post("POST /follow-up/tasks/{task_id}/skip: by any client", "/follow-up/tasks/{{task3}}/skip", { reason: "嘉宾暂停" }, 200, {
      as: "masking"
    }),
    "wire-skip-1"
  ),
  post("POST /follow-up/tasks/{task_id}/skip: again (idempotent)", "/follow-up/tasks/{{task3}}/skip", {}, 200),
  // DECISIONS §1: an all-optional body may be empty without Content-Type, as if {} had been sent
  // (on the task skipped already, so that the next cases find task4 as it was).
  post(
    "POST /follow-up/tasks/{task_id}/skip: an empty body without Content-Type, as {}",
    "/follow-up/tasks/{{task3}}/skip",
    undefined,
    200,
    {
      json: undefined,
      raw: { text: "" }
    }
  ),
  post("POST /follow-up/tasks/{task_id}/complete: a skipped task", "/follow-up/tasks/{{task3}}/complete", {}, 400),
  post("POST /follow-up/tasks/{task_id}/fail: a task not dispatched", "/follow-up/tasks/{{task4}}/fail", {}, 400),
  get("GET /follow-up/tasks: completed ones", `/follow-up/tasks?date=${FOLLOW_UP_DATE}&status=completed`, 200)
]

const events: ReadonlyArray<Step> = [
  get("GET /events", "/events", 200),
  get("GET /events: by type", "/events?types=match.created,match.status_changed", 200),
  get("GET /events: the first two", "/events?page_size=2", 200, { capture: { event2: "data.next_after" } }),
  get("GET /events: after an id", "/events?after={{event2}}&page_size=2", 200),
  get("GET /events: masked", "/events?types=guest.created", 200, { as: "masking" }),
  get("GET /events: a client that may read none of them", "/events", 200, { as: "few" }),
  get("GET /events: a type unknown", "/events?types=guest.deleted", 400),
  get("GET /events: after not an event id", "/events?after=42", 400)
]

/** The signing rules of DECISIONS §2 and the rate limit of §10, on one GET and one POST. */
const signing: ReadonlyArray<Step> = [
  get("401 missing_credentials: no signing headers", "/companies", 401, { as: "unsigned" }),
  get("401 missing_credentials: X-Signature missing", "/companies", 401, { sign: { omit: ["x-signature"] } }),
  get("401 missing_credentials: X-App-Key missing", "/companies", 401, { sign: { omit: ["x-app-key"] } }),
  get("401 missing_credentials: X-Timestamp not an integer", "/companies", 401, { sign: { replace: { "x-timestamp": "soon" } } }),
  get("401 missing_credentials: X-Nonce too short", "/companies", 401, { sign: { replace: { "x-nonce": "short" } } }),
  get("401 missing_credentials: X-Nonce outside its alphabet", "/companies", 401, {
    sign: { replace: { "x-nonce": "wire-corpus-nonce-with-a-$" } }
  }),
  get("401 unknown_app_key", "/companies", 401, { sign: { unknownAppKey: "ak_00000000deadbeef" } }),
  { wait: "disable" },
  get("401 app_key_disabled", "/companies", 401, { as: "limited" }),
  get("401 timestamp_out_of_window: 1000 s old", "/companies", 401, { sign: { timestampOffset: -1000 } }),
  get("401 timestamp_out_of_window: 1000 s ahead", "/companies", 401, { sign: { timestampOffset: 1000 } }),
  get("401 timestamp_out_of_window: milliseconds (a hint)", "/companies", 401, { sign: { timestampMillis: true } }),
  get("401 invalid_signature: another secret", "/companies?page=1&page_size=5", 401, { sign: { wrongSecret: "f".repeat(64) } }),
  post("401 invalid_signature: the body signed is not the body sent", "/companies", { name: "签名不符" }, 401, {
    sign: { signedBody: "{\"name\":\"另一个\"}" }
  }),
  get("401 invalid_signature: the query signed as sent, not sorted", "/companies?page_size=5&page=1", 401, {
    sign: { signedQueryLine: "page_size=5&page=1" }
  }),
  get("401 invalid_signature: the query left out of the signature", "/companies?page=1", 401, { sign: { signedQueryLine: "" } }),
  get(
    "a signed query with repeated keys, + and UTF-8",
    `/matchmakers?group_nos=G-001&group_nos=G+001&keyword=${encodeURIComponent("王")}`,
    200
  ),
  get("a nonce used once", "/companies", 200, { sign: { nonce: "wire-corpus-replayed-nonce-1" } }),
  get("401 nonce_replayed: the same nonce again", "/companies", 401, { sign: { nonce: "wire-corpus-replayed-nonce-1" } }),
  get("a nonce of another client is not a replay", "/companies", 200, { as: "masking", sign: { nonce: "wire-corpus-replayed-nonce-1" } }),
  get("signed with the previous secret during its overlap: X-Secret-Deprecated", "/companies/{{company1}}", 200, {
    as: "masking",
    sign: { previousSecret: true }
  }),
  post("415: a JSON endpoint sent text/plain", "/companies", undefined, 415, {
    json: undefined,
    raw: { text: "{\"name\":\"文本\"}", contentType: "text/plain" }
  }),
  post("415: a JSON endpoint sent no Content-Type", "/companies", undefined, 415, {
    json: undefined,
    raw: { text: "{\"name\":\"无类型\"}" }
  }),
  post("413: a JSON body over 1 MiB", "/companies", undefined, 413, { json: undefined, bigJson: 1024 * 1024 }),
  post("Idempotency-Key of 256 characters", "/companies", { name: "键太长" }, 400, { headers: { "Idempotency-Key": "k".repeat(256) } })
]

/** Self-service (DECISIONS §12): no daemon runs, so deliveries stay pending with no attempt. */
const HOOK = { url: "http://127.0.0.1:9/wire-hook", events: ["match.created", "match.created"] }
const SINCE = "2020-01-01 00:00:00"
const selfService: ReadonlyArray<Step> = [
  get("GET /webhook: none set yet", "/webhook", 200, { as: "self" }),
  put("PUT /webhook: the first URL turns it on and shows the signing secret once", "/webhook", HOOK, 200, { as: "self" }),
  put("PUT /webhook: events only, the secret not shown again", "/webhook", { events: ["match.created", "guest.created"] }, 200, {
    as: "self"
  }),
  put("PUT /webhook: a type outside the catalogue", "/webhook", { events: ["guest.deleted"] }, 400, { as: "self" }),
  put("PUT /webhook: a relative URL", "/webhook", { url: "/hook" }, 400, { as: "self" }),
  put("PUT /webhook: enabled without a URL", "/webhook", { enabled: true }, 400, { as: "few" }),
  post("POST /webhook/test: no URL set", "/webhook/test", undefined, 400, { as: "few" }),
  ...idempotent(
    post("POST /webhook/test", "/webhook/test", undefined, 200, { as: "self", capture: { delivery1: "data.delivery_id" } }),
    "wire-webhook-test",
    "/webhook/rotate-secret"
  ),
  post("POST /webhook/rotate-secret", "/webhook/rotate-secret", undefined, 200, { as: "self" }),
  get("GET /webhook: rotating for 7 days", "/webhook", 200, { as: "self" }),
  get("GET /webhook/deliveries", "/webhook/deliveries", 200, { as: "self" }),
  get("GET /webhook/deliveries: failed ones", "/webhook/deliveries?status=failed", 200, { as: "self" }),
  get("GET /webhook/deliveries: since a time, a page of one", `/webhook/deliveries?since=${encodeURIComponent(SINCE)}&page_size=1`, 200, {
    as: "self"
  }),
  get("GET /webhook/deliveries: an unknown status", "/webhook/deliveries?status=gone", 400, { as: "self" }),
  get("GET /webhook/deliveries: not a real time", "/webhook/deliveries?since=2024-02-30%2010:00:00", 400, { as: "self" }),
  get("GET /webhook/deliveries: another client sees none of them", "/webhook/deliveries", 200, { as: "masking" }),
  post("POST /webhook/deliveries/{id}/redeliver", "/webhook/deliveries/{{delivery1}}/redeliver", undefined, 200, { as: "self" }),
  post("POST /webhook/deliveries/{id}/redeliver: another client's", "/webhook/deliveries/{{delivery1}}/redeliver", undefined, 404, {
    as: "masking"
  }),
  // A refused call does not count against the bulk redelivery limit (1 a minute, DECISIONS §13); the second within the minute is 429.
  post("POST /webhook/redeliver: since not a time", "/webhook/redeliver", { since: "yesterday" }, 400, { as: "self" }),
  post("POST /webhook/redeliver: pending ones since then", "/webhook/redeliver", { since: SINCE, status: "pending" }, 200, { as: "self" }),
  post("POST /webhook/redeliver: a second within the minute is limited", "/webhook/redeliver", { since: SINCE }, 429, { as: "self" }),
  post("POST /webhook/redeliver: no URL set", "/webhook/redeliver", { since: SINCE }, 400, { as: "few" }),
  post("POST /credentials/rotate", "/credentials/rotate", undefined, 200, { as: "self" }),
  get("GET /webhook: signed with the previous secret, X-Secret-Deprecated", "/webhook", 200, { as: "self" })
]

// ---------------------------------------------------------------------------------------------
// What every operation shares

interface Operation {
  readonly id: string
  readonly method: string
  /** As the OpenAPI document writes it. */
  readonly path: string
  /** A concrete path with existing ids (templates allowed). */
  readonly sample: string
  /** The path parameters that are ids. */
  readonly ids?: ReadonlyArray<string>
  readonly body?: "json" | "multipart"
  /** A valid body for `sample` (404 cases need one). */
  readonly json?: unknown
  /** No permission string (only a signature, or not even that). */
  readonly noPermission?: boolean
  /** Unsigned. */
  readonly unsigned?: boolean
  /** Has an unknown-id 404 in the scenario already, or none to reach (e.g. ids in the body only). */
  readonly skip404?: boolean
  /** Takes page and page_size: page_size=0 is a 400. */
  readonly paged?: boolean
}

/** Every operation of the served document (74), in its order. */
export const OPERATIONS: ReadonlyArray<Operation> = [
  { id: "system.time", method: "GET", path: "/time", sample: "/time", unsigned: true, noPermission: true },
  { id: "matchmakers.list", paged: true, method: "GET", path: "/matchmakers", sample: "/matchmakers" },
  { id: "matchmakers.create", method: "POST", path: "/matchmakers", sample: "/matchmakers", body: "json", json: { name: "占位" } },
  { id: "matchmakers.ids", paged: true, method: "GET", path: "/matchmakers/ids", sample: "/matchmakers/ids" },
  { id: "matchmakers.get", method: "GET", path: "/matchmakers/{id}", sample: "/matchmakers/{{matchmaker1}}", ids: ["id"] },
  {
    id: "matchmakers.update",
    method: "PUT",
    path: "/matchmakers/{id}",
    sample: "/matchmakers/{{matchmaker1}}",
    ids: ["id"],
    body: "json",
    json: { intro: "占位" }
  },
  { id: "guests.list", paged: true, method: "GET", path: "/guests", sample: "/guests" },
  {
    id: "guests.create",
    method: "POST",
    path: "/guests",
    sample: "/guests",
    body: "json",
    json: { name: "占位", gender: "male", company_id: "{{company1}}" }
  },
  { id: "guests.batchCreate", method: "POST", path: "/guests/batch", sample: "/guests/batch", body: "json", json: { guests: [] } },
  { id: "guests.batchUpdate", method: "PUT", path: "/guests/batch", sample: "/guests/batch", body: "json", json: { guests: [] } },
  { id: "guests.parseCard", method: "POST", path: "/guests/parse-card", sample: "/guests/parse-card", body: "multipart" },
  { id: "guests.createFromCard", method: "POST", path: "/guests/create-from-card", sample: "/guests/create-from-card", body: "multipart" },
  {
    id: "guests.cardTask",
    method: "GET",
    path: "/guests/card-task/{task_id}",
    sample: "/guests/card-task/{{cardTask1}}",
    skip404: true
  },
  { id: "guests.get", method: "GET", path: "/guests/{id}", sample: "/guests/{{guest1}}", ids: ["id"] },
  {
    id: "guests.update",
    method: "PUT",
    path: "/guests/{id}",
    sample: "/guests/{{guest1}}",
    ids: ["id"],
    body: "json",
    json: { hobbies: "占位" }
  },
  { id: "workWechats.list", paged: true, method: "GET", path: "/work-wechats", sample: "/work-wechats" },
  {
    id: "workWechats.create",
    method: "POST",
    path: "/work-wechats",
    sample: "/work-wechats",
    body: "json",
    json: { wechat_number: "占位", phone: "13700009999" }
  },
  { id: "workWechats.get", method: "GET", path: "/work-wechats/{id}", sample: "/work-wechats/{{ww1}}", ids: ["id"] },
  {
    id: "workWechats.update",
    method: "PUT",
    path: "/work-wechats/{id}",
    sample: "/work-wechats/{{ww1}}",
    ids: ["id"],
    body: "json",
    json: { remark: "占位" }
  },
  { id: "workWechats.remove", method: "DELETE", path: "/work-wechats/{id}", sample: "/work-wechats/{{ww5}}", ids: ["id"] },
  {
    id: "workWechats.setStatus",
    method: "PUT",
    path: "/work-wechats/{id}/status",
    sample: "/work-wechats/{{ww1}}/status?status=active",
    ids: ["id"]
  },
  {
    id: "workWechats.associate",
    method: "POST",
    path: "/work-wechats/{id}/associate",
    sample: "/work-wechats/{{ww1}}/associate",
    ids: ["id"],
    body: "json",
    json: { target_type: "matchmaker", target_id: "{{matchmaker1}}" }
  },
  {
    id: "workWechats.batchAssociate",
    method: "POST",
    path: "/work-wechats/{id}/batch-associate",
    sample: "/work-wechats/{{ww1}}/batch-associate",
    ids: ["id"],
    body: "json",
    json: { target_type: "matchmaker", target_ids: ["{{matchmaker1}}"] }
  },
  {
    id: "workWechats.disassociate",
    method: "POST",
    path: "/work-wechats/{id}/disassociate",
    sample: "/work-wechats/{{ww1}}/disassociate",
    ids: ["id"],
    body: "json",
    json: { target_type: "matchmaker", target_id: "{{matchmaker1}}" }
  },
  {
    id: "workWechats.transfer",
    method: "POST",
    path: "/work-wechats/{id}/transfer",
    sample: "/work-wechats/{{ww1}}/transfer",
    ids: ["id"],
    body: "json",
    json: { target_type: "matchmaker", target_work_wechat_id: "{{ww3}}" }
  },
  {
    id: "workWechats.transferAdmin",
    method: "POST",
    path: "/work-wechats/{id}/transfer-admin",
    sample: "/work-wechats/{{ww1}}/transfer-admin",
    ids: ["id"],
    body: "json",
    json: { target_admin_id: 8 }
  },
  {
    id: "workWechats.associations",
    paged: true,
    method: "GET",
    path: "/work-wechats/{id}/associations",
    sample: "/work-wechats/{{ww1}}/associations",
    ids: ["id"]
  },
  {
    id: "workWechats.logs",
    paged: true,
    method: "GET",
    path: "/work-wechats/{id}/logs",
    sample: "/work-wechats/{{ww1}}/logs",
    ids: ["id"]
  },
  { id: "workGroups.list", paged: true, method: "GET", path: "/work-groups", sample: "/work-groups" },
  { id: "workGroups.create", method: "POST", path: "/work-groups", sample: "/work-groups", body: "json", json: { name: "占位" } },
  { id: "workGroups.get", method: "GET", path: "/work-groups/{id}", sample: "/work-groups/{{group1}}", ids: ["id"] },
  {
    id: "workGroups.update",
    method: "PUT",
    path: "/work-groups/{id}",
    sample: "/work-groups/{{group1}}",
    ids: ["id"],
    body: "json",
    json: { remark: "占位" }
  },
  { id: "workGroups.remove", method: "DELETE", path: "/work-groups/{id}", sample: "/work-groups/{{group3}}", ids: ["id"] },
  {
    id: "workGroups.setStatus",
    method: "PUT",
    path: "/work-groups/{id}/status",
    sample: "/work-groups/{{group1}}/status?status=active",
    ids: ["id"]
  },
  {
    id: "workGroups.addMatchmakersBatch",
    method: "POST",
    path: "/work-groups/{id}/matchmakers/batch",
    sample: "/work-groups/{{group1}}/matchmakers/batch",
    ids: ["id"],
    body: "json",
    json: { matchmaker_ids: ["{{matchmaker1}}"] }
  },
  {
    id: "workGroups.addMatchmaker",
    method: "POST",
    path: "/work-groups/{id}/matchmakers",
    sample: "/work-groups/{{group1}}/matchmakers",
    ids: ["id"],
    body: "json",
    json: { matchmaker_id: "{{matchmaker2}}" }
  },
  {
    id: "workGroups.matchmakers",
    paged: true,
    method: "GET",
    path: "/work-groups/{id}/matchmakers",
    sample: "/work-groups/{{group1}}/matchmakers",
    ids: ["id"]
  },
  {
    id: "workGroups.removeMatchmaker",
    method: "DELETE",
    path: "/work-groups/{id}/matchmakers/{matchmaker_id}",
    sample: "/work-groups/{{group1}}/matchmakers/{{matchmaker1}}",
    ids: ["id", "matchmaker_id"]
  },
  {
    id: "workGroups.addWorkWechatsBatch",
    method: "POST",
    path: "/work-groups/{id}/work-wechats/batch",
    sample: "/work-groups/{{group1}}/work-wechats/batch",
    ids: ["id"],
    body: "json",
    json: { work_wechat_ids: ["{{ww1}}"] }
  },
  {
    id: "workGroups.addWorkWechat",
    method: "POST",
    path: "/work-groups/{id}/work-wechats",
    sample: "/work-groups/{{group1}}/work-wechats",
    ids: ["id"],
    body: "json",
    json: { work_wechat_id: "{{ww3}}" }
  },
  {
    id: "workGroups.workWechats",
    paged: true,
    method: "GET",
    path: "/work-groups/{id}/work-wechats",
    sample: "/work-groups/{{group1}}/work-wechats",
    ids: ["id"]
  },
  {
    id: "workGroups.removeWorkWechat",
    method: "DELETE",
    path: "/work-groups/{id}/work-wechats/{work_wechat_id}",
    sample: "/work-groups/{{group1}}/work-wechats/{{ww1}}",
    ids: ["id", "work_wechat_id"]
  },
  {
    id: "workGroups.logs",
    paged: true,
    method: "GET",
    path: "/work-groups/{id}/logs",
    sample: "/work-groups/{{group1}}/logs",
    ids: ["id"]
  },
  { id: "imageBlacklist.list", paged: true, method: "GET", path: "/image-blacklist", sample: "/image-blacklist" },
  {
    id: "imageBlacklist.add",
    method: "POST",
    path: "/image-blacklist",
    sample: "/image-blacklist",
    body: "json",
    json: { items: [] }
  },
  {
    id: "imageBlacklist.check",
    method: "POST",
    path: "/image-blacklist/check",
    sample: "/image-blacklist/check",
    body: "json",
    json: { md5_list: [] }
  },
  {
    id: "imageBlacklist.remove",
    method: "DELETE",
    path: "/image-blacklist/{record_id}",
    sample: "/image-blacklist/{{blacklistRecord}}",
    ids: ["record_id"]
  },
  { id: "companies.list", paged: true, method: "GET", path: "/companies", sample: "/companies" },
  { id: "companies.create", method: "POST", path: "/companies", sample: "/companies", body: "json", json: { name: "占位婚介" } },
  { id: "companies.get", method: "GET", path: "/companies/{id}", sample: "/companies/{{company1}}", ids: ["id"], skip404: true },
  {
    id: "companies.update",
    method: "PUT",
    path: "/companies/{id}",
    sample: "/companies/{{company1}}",
    ids: ["id"],
    body: "json",
    json: { address: "占位" }
  },
  { id: "events.list", paged: true, method: "GET", path: "/events", sample: "/events", noPermission: true },
  { id: "followUps.list", paged: true, method: "GET", path: "/follow-up/tasks", sample: "/follow-up/tasks" },
  { id: "followUps.get", method: "GET", path: "/follow-up/tasks/{task_id}", sample: "/follow-up/tasks/{{task1}}", ids: ["task_id"] },
  {
    id: "followUps.dispatch",
    method: "POST",
    path: "/follow-up/tasks/{task_id}/dispatch",
    sample: "/follow-up/tasks/{{task1}}/dispatch",
    ids: ["task_id"]
  },
  {
    id: "followUps.complete",
    method: "POST",
    path: "/follow-up/tasks/{task_id}/complete",
    sample: "/follow-up/tasks/{{task1}}/complete",
    ids: ["task_id"],
    body: "json",
    json: {}
  },
  {
    id: "followUps.fail",
    method: "POST",
    path: "/follow-up/tasks/{task_id}/fail",
    sample: "/follow-up/tasks/{{task1}}/fail",
    ids: ["task_id"],
    body: "json",
    json: {}
  },
  {
    id: "followUps.skip",
    method: "POST",
    path: "/follow-up/tasks/{task_id}/skip",
    sample: "/follow-up/tasks/{{task1}}/skip",
    ids: ["task_id"],
    body: "json",
    json: {}
  },
  { id: "activities.list", paged: true, method: "GET", path: "/activities", sample: "/activities" },
  {
    id: "activities.create",
    method: "POST",
    path: "/activities",
    sample: "/activities",
    body: "json",
    json: activity1
  },
  {
    id: "activities.register",
    method: "POST",
    path: "/activities/{id}/register",
    sample: "/activities/{{activity1}}/register",
    ids: ["id"],
    body: "json",
    json: { guest_id: "{{guest1}}" }
  },
  { id: "matches.list", paged: true, method: "GET", path: "/matches", sample: "/matches" },
  {
    id: "matches.create",
    method: "POST",
    path: "/matches",
    sample: "/matches",
    body: "json",
    json: { guest_a_id: "{{guest1}}", guest_b_id: "{{guest2}}" }
  },
  {
    id: "matches.updateStatus",
    method: "PUT",
    path: "/matches/{id}/status",
    sample: "/matches/{{match1}}/status",
    ids: ["id"],
    body: "json",
    json: { status: "closed" }
  },
  { id: "memberships.list", paged: true, method: "GET", path: "/memberships", sample: "/memberships" },
  {
    id: "memberships.create",
    method: "POST",
    path: "/memberships",
    sample: "/memberships",
    body: "json",
    json: { user_id: "{{user1}}", plan_id: 1 }
  },
  { id: "selfService.getWebhook", method: "GET", path: "/webhook", sample: "/webhook", noPermission: true },
  {
    id: "selfService.updateWebhook",
    method: "PUT",
    path: "/webhook",
    sample: "/webhook",
    body: "json",
    json: { enabled: false },
    noPermission: true
  },
  {
    id: "selfService.rotateWebhookSecret",
    method: "POST",
    path: "/webhook/rotate-secret",
    sample: "/webhook/rotate-secret",
    noPermission: true
  },
  { id: "selfService.testWebhook", method: "POST", path: "/webhook/test", sample: "/webhook/test", noPermission: true },
  {
    id: "selfService.listDeliveries",
    paged: true,
    method: "GET",
    path: "/webhook/deliveries",
    sample: "/webhook/deliveries",
    noPermission: true
  },
  {
    id: "selfService.redeliver",
    method: "POST",
    path: "/webhook/deliveries/{id}/redeliver",
    sample: "/webhook/deliveries/{{delivery1}}/redeliver",
    ids: ["id"],
    noPermission: true
  },
  {
    id: "selfService.redeliverSince",
    method: "POST",
    path: "/webhook/redeliver",
    sample: "/webhook/redeliver",
    body: "json",
    json: { since: SINCE },
    noPermission: true
  },
  { id: "selfService.rotateCredentials", method: "POST", path: "/credentials/rotate", sample: "/credentials/rotate", noPermission: true }
]

/** `sample` with its n-th id parameter replaced by `value`. */
const withId = (op: Operation, index: number, value: string): string => {
  const templateParts = op.path.split("/")
  const sampleParts = op.sample.split("?")[0]!.split("/")
  const name = op.ids![index]!
  const at = templateParts.indexOf(`{${name}}`)
  sampleParts[at] = value
  const query = op.sample.includes("?") ? `?${op.sample.split("?")[1]}` : ""
  return sampleParts.join("/") + query
}

const bodyOf = (op: Operation): Extra =>
  op.body === "json"
    ? { json: op.json ?? {} }
    : op.body === "multipart"
    ? { multipart: { parts: [jpg(CARD_JPG), field("matchmaker_id", "{{matchmaker1}}")] } }
    : {}

const shared = (): ReadonlyArray<Step> => {
  const steps: Array<Step> = []
  const label = (op: Operation, what: string) => `${op.id} (${op.method} ${op.path}): ${what}`
  for (const op of OPERATIONS) {
    if (op.unsigned !== true) {
      steps.push(req(op.method, label(op, "401 without credentials"), op.sample, 401, { as: "unsigned", ...bodyOf(op) }))
    }
    if (op.noPermission !== true) {
      const denied = op.id === "imageBlacklist.list" || op.id === "imageBlacklist.check" ? "masking" : "few"
      steps.push(
        req(op.method, label(op, `403 for a client without its permission (${denied})`), op.sample, 403, { as: denied, ...bodyOf(op) })
      )
    }
    for (let i = 0; i < (op.ids ?? []).length; i++) {
      const param = op.ids![i]!
      steps.push(req(op.method, label(op, `400 ${param} not a number`), withId(op, i, "abc"), 400, bodyOf(op)))
      steps.push(req(op.method, label(op, `400 ${param} past int4`), withId(op, i, "2147483648"), 400, bodyOf(op)))
      if (op.skip404 !== true) steps.push(req(op.method, label(op, `404 unknown ${param}`), withId(op, i, "99999"), 404, bodyOf(op)))
    }
    if (op.paged === true) {
      const q = op.sample.includes("?") ? "&" : "?"
      steps.push(req(op.method, label(op, "400 page_size=0"), `${op.sample}${q}page_size=0`, 400))
    }
    if (op.body === "json") {
      steps.push(
        req(op.method, label(op, "415 text/plain"), op.sample, 415, {
          raw: { text: JSON.stringify(op.json ?? {}), contentType: "text/plain" }
        })
      )
      steps.push(req(op.method, label(op, "413 a JSON body over 1 MiB"), op.sample, 413, { bigJson: 1024 * 1024 + 1 }))
    }
    if (op.body === "multipart") {
      steps.push(req(op.method, label(op, "415 JSON instead of multipart"), op.sample, 415, { json: { matchmaker_id: 1 } }))
      steps.push(
        req(op.method, label(op, "413 a file over 10 MiB"), op.sample, 413, {
          multipart: {
            parts: [{ name: "file", file: { zeros: 10 * 1024 * 1024 + 300 * 1024 }, filename: "big.jpg", contentType: "image/jpeg" }]
          }
        })
      )
    }
  }
  return steps
}

/** The corpus, in order. */
export const STEPS: ReadonlyArray<Step> = [
  { admin: ["users", "create", "--name", "会员甲", "--phone", "13600000001"], capture: { user1: "id" }, background: "users" },
  ...unsignedEndpoints,
  get("the rate-limited client: its one request", "/companies", 200, { as: "limited" }),
  get("429 rate_limited: the next one at once", "/companies", 429, { as: "limited" }),
  { admin: ["clients", "disable", "{{app_key_limited}}"], background: "disable" },
  ...companies,
  ...matchmakers,
  ...guests,
  ...activitiesCreate,
  ...workWechats,
  ...workGroups,
  // Operator work: open the activity, then plan follow-ups. Not in the background: their events
  // would then land in the feed between other areas' at moments that vary from run to run.
  { admin: ["activities", "approve", "{{activity1}}"] },
  { admin: ["activities", "open", "{{activity1}}"] },
  {
    admin: ["follow-up", "plans", "create", "--guest", "{{guest1}}", "--days", "1,2,3,4", "--type", "recommend", "--start", FOLLOW_UP_DATE]
  },
  ...blacklist,
  ...cards,
  ...activitiesRegister,
  ...matches,
  { wait: "users" },
  ...memberships,
  ...followUps,
  ...events,
  ...selfService,
  ...signing,
  ...shared()
]
