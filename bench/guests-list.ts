// `npm run bench`: loads 200,000 guests into a bench database (once; kept for later runs) and
// measures GET /guests through the signed HTTP API for every filter and ordering: p50/p95/p99.
// BENCH_DATABASE_URL names the database; unset, `matchmaking_bench` on the embedded server.
import { Effect } from "effect"

import { log, percentile, runBench, timeCalls } from "./support.js"

const GUESTS = Number(process.env.BENCH_GUESTS ?? 200_000)
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300)

const GENERATE = `
WITH c AS (
  INSERT INTO companies (name, city)
  SELECT 'Bench婚介' || g, (ARRAY['北京','上海','广州','深圳','杭州','成都','长沙','武汉','南京','西安'])[1 + g % 10]
  FROM generate_series(1, 200) g RETURNING id
)
SELECT min(id) AS first FROM c`

// Each column draws on its own bits of a multiplicative hash of the row number, so filters
// combine like independent attributes instead of moving in lockstep.
const GUEST_INSERT = (first: number, from: number, to: number) => `
INSERT INTO guests (name, gender, age, phone, workplace, height, education, income_amount, income_level,
  family_income_amount, family_income_level, marital_status, company_id, status, completeness, created_at, updated_at, photo_time)
SELECT
  s.surname || s.given1 || s.given2,
  CASE WHEN h.v % 2 = 0 THEN 'male' ELSE 'female' END,
  20 + ((h.v / 2) % 40)::int,
  '1' || (3 + (h.v / 7) % 7)::text || lpad(((g::bigint * 7919) % 1000000000)::text, 9, '0'),
  (ARRAY['北京','上海','广州','深圳','杭州','成都','长沙','武汉','南京','西安','重庆','天津','苏州','郑州','青岛',
         '厦门','合肥','济南','昆明','沈阳','大连','福州','南昌','贵阳','南宁','太原','石家庄','哈尔滨','长春','兰州',
         '华为','腾讯','阿里巴巴','百度','京东','美团','字节跳动','国家电网','中国银行','人民医院'])[1 + ((h.v / 97) % 40)::int],
  150 + ((h.v / 13) % 40)::int,
  (ARRAY['高中及以下','大专','本科','硕士','博士'])[1 + ((h.v / 31) % 5)::int],
  i.amount, i.level, i.amount, i.level,
  (ARRAY['未婚','离异','丧偶'])[1 + ((h.v / 5) % 3)::int],
  ${first} + ((h.v / 3889) % 200)::int,
  (ARRAY['incomplete','available','matching','matched','archived'])[1 + ((h.v / 11) % 5)::int],
  0.4,
  t.created,
  t.created + (now() - t.created) * ((h.v / 17) % 100) / 100.0,
  t.created
FROM generate_series(${from}, ${to}) g
CROSS JOIN LATERAL (SELECT (g::bigint * 2654435761) % 4294967296 AS v) h
CROSS JOIN LATERAL (SELECT now() - ((h.v / 23) % 63072000) * interval '1 second' AS created) t
CROSS JOIN LATERAL (SELECT ((h.v / 41) % 60)::int * 20000 AS amount) a
CROSS JOIN LATERAL (SELECT a.amount, CASE WHEN a.amount < 100000 THEN '10万以下' WHEN a.amount < 200000 THEN '10-20万'
  WHEN a.amount < 300000 THEN '20-30万' WHEN a.amount < 500000 THEN '30-50万'
  WHEN a.amount < 1000000 THEN '50-100万' ELSE '100万以上' END AS level) i
CROSS JOIN LATERAL (SELECT
  (ARRAY['王','李','张','刘','陈','杨','黄','赵','吴','周','徐','孙','马','朱','胡','郭','何','高','林','罗',
         '郑','梁','谢','宋','唐','许','韩','冯','邓','曹','彭','曾','肖','田','董','袁','潘','于','蒋','蔡'])[1 + ((h.v / 53) % 40)::int] AS surname,
  (ARRAY['伟','芳','娜','敏','静','丽','强','磊','军','洋','勇','艳','杰','娟','涛','明','超','秀','霞','平',
         '刚','桂','英','华','玉','萍','红','鹏','辉','建','文','婷','宇','浩','欣','晨','雪','琳','博','然'])[1 + ((h.v / 2129) % 40)::int] AS given1,
  CASE WHEN (h.v / 85229) % 5 < 3 THEN (ARRAY['一','二','三','四','五','六','七','八','九','十','佳','嘉','思','梦','子','雨','诗','晓','俊','志'])[1 + ((h.v / 425) % 20)::int] ELSE '' END AS given2
) s`

interface Scenario {
  readonly name: string
  readonly params: Record<string, string | number>
}

const scenarios: ReadonlyArray<Scenario> = [
  { name: "no filter, created_at desc", params: {} },
  { name: "no filter, created_at asc", params: { order_dir: "asc" } },
  { name: "no filter, updated_at desc", params: { order_by: "updated_at" } },
  { name: "no filter, updated_at asc", params: { order_by: "updated_at", order_dir: "asc" } },
  { name: "no filter, page 50", params: { page: 50 } },
  { name: "company_id", params: { company_id: "$company" } },
  { name: "company_id, updated_at asc", params: { company_id: "$company", order_by: "updated_at", order_dir: "asc" } },
  { name: "gender", params: { gender: "female" } },
  { name: "gender, updated_at desc", params: { gender: "male", order_by: "updated_at" } },
  { name: "workplace", params: { workplace: "长沙" } },
  { name: "workplace, updated_at asc", params: { workplace: "华为", order_by: "updated_at", order_dir: "asc" } },
  { name: "status", params: { status: "available" } },
  { name: "status, updated_at desc", params: { status: "matched", order_by: "updated_at" } },
  { name: "keyword, 1 character", params: { keyword: "王" } },
  { name: "keyword, 2-character name", params: { keyword: "李伟" } },
  { name: "keyword, 3-character name", params: { keyword: "张敏佳" } },
  { name: "keyword, 6 phone digits", params: { keyword: "$phone" } },
  { name: "keyword, no match", params: { keyword: "不存在的人" } },
  { name: "keyword + gender", params: { keyword: "刘", gender: "female" } },
  { name: "company + gender + status", params: { company_id: "$company", gender: "female", status: "available" } },
  {
    name: "status + workplace, updated_at asc",
    params: { status: "incomplete", workplace: "北京", order_by: "updated_at", order_dir: "asc" }
  },
  { name: "page_size 100", params: { page_size: 100 } }
]

await runBench(["open:guest:read"], (api, sql) =>
  Effect.gen(function*() {
    const [{ n }] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM guests`
    if (n < GUESTS) {
      log(`bench: generating ${GUESTS - n} guests (kept for later runs)…`)
      const started = Date.now()
      const [{ first }] = yield* sql.unsafe<{ first: number }>(GENERATE)
      for (let from = n + 1; from <= GUESTS; from += 20000) {
        yield* sql.unsafe(GUEST_INSERT(Number(first), from, Math.min(GUESTS, from + 19999)))
      }
      yield* sql.unsafe("VACUUM ANALYZE guests")
      log(`bench: generated in ${((Date.now() - started) / 1000).toFixed(1)} s`)
    }
    const [{ company }] = yield* sql<
      { company: number }
    >`SELECT company_id::int AS company FROM guests GROUP BY company_id ORDER BY count(*) DESC LIMIT 1`
    const [{ total }] = yield* sql<{ total: number }>`SELECT count(*)::int AS total FROM guests`
    const [{ phone }] = yield* sql<{ phone: string }>`SELECT substr(phone, 4, 6) AS phone FROM guests ORDER BY id LIMIT 1`

    const rows: Array<Record<string, string | number>> = []
    for (const s of scenarios) {
      const urlParams = Object.fromEntries(
        Object.entries(s.params).map(([k, v]) => [k, v === "$company" ? company : v === "$phone" ? phone : v])
      ) as never
      const { times, last } = yield* timeCalls(api.guests.list({ urlParams }), SAMPLES, 20)
      const matched = last.total
      rows.push({
        scenario: s.name,
        total: matched,
        p50_ms: Number(percentile(times, 50).toFixed(2)),
        p95_ms: Number(percentile(times, 95).toFixed(2)),
        p99_ms: Number(percentile(times, 99).toFixed(2))
      })
    }
    process.stdout.write(`\nGET /guests over HTTP, ${total} guests, ${SAMPLES} requests per scenario (signed, sequential)\n`)
    console.table(rows)
    const worst = Math.max(...rows.map((r) => r.p99_ms as number))
    process.stdout.write(`worst p99: ${worst.toFixed(2)} ms (target < 50 ms)\n`)
  }))

process.exit(0)
