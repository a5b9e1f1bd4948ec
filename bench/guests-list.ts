// `npm run bench`: loads 200,000 guests into a bench database (once; kept for later runs) and
// measures GET /guests through the signed HTTP API for every filter and ordering: p50/p95/p99.
// BENCH_DATABASE_URL names the database; unset, `matchmaking_bench` on the embedded server.
import { Effect } from "effect"

import { GENERATE, GUEST_INSERT } from "./seed.js"
import { log, percentile, runBench, timeCalls } from "./support.js"

const GUESTS = Number(process.env.BENCH_GUESTS ?? 200_000)
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300)

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
