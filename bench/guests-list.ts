// `npm run bench`: loads 200,000 guests into a bench database (once; kept for later runs) and
// measures GET /guests through the signed HTTP API for every filter and ordering: p50/p95/p99.
// Then the throughput of GET /guests unfiltered (total from the counters) beside the database work
// of the list before its counters (the page and count(*) over every row), issued directly: the old
// service could not answer faster than that work alone, so the ratio is a lower bound of the gain.
// BENCH_DATABASE_URL names the database; unset, `matchmaking_bench` on the embedded server.
// BENCH_GUESTS (200000), BENCH_SAMPLES (300), BENCH_CONNECTIONS (16), BENCH_SECONDS (8).
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"

import { GUEST_LIST_COLUMNS } from "../src/repos/statements.js"
import { GENERATE, GUEST_INSERT } from "./seed.js"
import { log, percentile, runBench, timeCalls } from "./support.js"

const GUESTS = Number(process.env.BENCH_GUESTS ?? 200_000)
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)

/** Completed calls per second of `call` repeated back to back by `concurrency` fibers for SECONDS. */
const throughput = <A, E, R>(call: Effect.Effect<A, E, R>, concurrency: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < concurrency; i++) yield* call
    let done = 0
    const started = performance.now()
    const end = started + SECONDS * 1000
    const loop = Effect.gen(function*() {
      while (performance.now() < end) {
        yield* call
        done++
      }
    })
    yield* Effect.all(Array.from({ length: concurrency }, () => loop), { concurrency: "unbounded", discard: true })
    return done / ((performance.now() - started) / 1000)
  })

/** The first page of the unfiltered list as GuestsRepo reads it, with its total as given. */
const pageAndTotal = (sql: SqlClient.SqlClient, total: string) =>
  Effect.all([
    sql.unsafe(`SELECT ${GUEST_LIST_COLUMNS} FROM guests WHERE true ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET 0`),
    sql.unsafe(total)
  ], { concurrency: 2, discard: true })
const COUNT_EVERY_ROW = "SELECT count(*)::int AS n FROM guests WHERE true"
const COUNTERS = "SELECT coalesce(sum(n), 0)::int AS n FROM row_counts WHERE tbl = 'guests' AND dim = '' AND val = ''"

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
      const query = Object.fromEntries(
        Object.entries(s.params).map(([k, v]) => [k, v === "$company" ? company : v === "$phone" ? phone : v])
      ) as never
      const { times, last } = yield* timeCalls(api.guests.list({ query }), SAMPLES, 20)
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

    log(`bench: throughput, ${CONNECTIONS} concurrent callers, ${SECONDS} s each…`)
    const service = yield* throughput(api.guests.list({ query: {} }), CONNECTIONS)
    const before = yield* throughput(pageAndTotal(sql, COUNT_EVERY_ROW), CONNECTIONS)
    const after = yield* throughput(pageAndTotal(sql, COUNTERS), CONNECTIONS)
    process.stdout.write(`\nGET /guests unfiltered, ${total} guests, ${CONNECTIONS} concurrent callers (signed HTTP, in process)\n`)
    console.table([
      { path: "service: GET /guests, total from the counters", req_per_s: Math.round(service) },
      { path: "database work before the counters: page + count(*), issued directly", req_per_s: Math.round(before) },
      { path: "database work now: page + counters, issued directly", req_per_s: Math.round(after) }
    ])
    process.stdout.write(
      `GET /guests unfiltered: ${(service / before).toFixed(1)}× the ceiling of the list before its counters ` +
        `(target ≥ 5× the service before, which was below that ceiling)\n`
    )
  }))

process.exit(0)
