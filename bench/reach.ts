// `npm run bench` (third part): the reach queries over a platform-sized graph — 20,000
// matchmakers, 500 work accounts, 2,000 groups — timed over signed HTTP: GET /matchmakers/ids
// (page of 10,000) per scope, and GET /matchmakers filtered by an account, a filter or groups.
// Uses the bench database (BENCH_DATABASE_URL or `matchmaking_bench` on the embedded server).
import * as Effect from "effect/Effect"

import { log, percentile, runBench, timeCalls } from "./support.js"

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 100)

// Each matchmaker: in 0-3 groups, directly associated with 0-2 accounts; each group has 1-3
// accounts. Deterministic, so runs compare. One statement each (the driver runs one per query).
const GENERATE: ReadonlyArray<string> = [
  `WITH c AS (SELECT id FROM companies ORDER BY id LIMIT 1)
INSERT INTO matchmakers (name, company_id, wechat_id, phone)
SELECT 'Reach红娘' || g, (SELECT id FROM c), CASE WHEN g % 10 = 0 THEN NULL ELSE 'wxid_reach_' || g END, '1390000' || lpad(g::text, 4, '0')
FROM generate_series(1, 20000) g`,
  `INSERT INTO work_wechats (wechat_number, phone) SELECT 'reach_acc_' || g, '1380000' || lpad(g::text, 4, '0') FROM generate_series(1, 500) g`,
  `INSERT INTO work_groups (name, group_no) SELECT 'Reach群' || g, 'rg_' || g FROM generate_series(1, 2000) g`,
  `INSERT INTO work_group_work_wechats (work_group_id, work_wechat_id)
SELECT DISTINCT g.id, a.id FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM work_groups WHERE group_no LIKE 'rg_%') g
JOIN (SELECT id, row_number() OVER (ORDER BY id) AS n FROM work_wechats WHERE wechat_number LIKE 'reach_acc_%') a
  ON a.n IN (1 + (g.n * 7) % 500, 1 + (g.n * 13) % 500, 1 + (g.n * 29) % 500) AND (a.n <> 1 + (g.n * 29) % 500 OR g.n % 3 = 0)`,
  `INSERT INTO work_group_matchmakers (work_group_id, matchmaker_id)
SELECT DISTINCT g.id, m.id FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM matchmakers WHERE name LIKE 'Reach红娘%') m
JOIN (SELECT id, row_number() OVER (ORDER BY id) AS n FROM work_groups WHERE group_no LIKE 'rg_%') g
  ON g.n IN (1 + (m.n * 11) % 2000, 1 + (m.n * 17) % 2000, 1 + (m.n * 31) % 2000) AND (m.n % 4) > (g.n % 3)`,
  `INSERT INTO work_wechat_associations (work_wechat_id, target_type, target_id)
SELECT DISTINCT a.id, 'matchmaker', m.id FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM matchmakers WHERE name LIKE 'Reach红娘%') m
JOIN (SELECT id, row_number() OVER (ORDER BY id) AS n FROM work_wechats WHERE wechat_number LIKE 'reach_acc_%') a
  ON a.n IN (1 + (m.n * 3) % 500, 1 + (m.n * 19) % 500) AND m.n % 5 < 3`,
  ...["matchmakers", "work_wechats", "work_groups", "work_group_matchmakers", "work_group_work_wechats", "work_wechat_associations"]
    .map((table) => `ANALYZE ${table}`)
]

await runBench(["open:matchmaker:read"], (api, sql) =>
  Effect.gen(function*() {
    const [{ n }] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM work_groups WHERE group_no LIKE 'rg_%'`
    if (n === 0) {
      log("bench: generating the reach graph (kept for later runs)…")
      const [{ companies }] = yield* sql<{ companies: number }>`SELECT count(*)::int AS companies FROM companies`
      if (companies === 0) yield* sql`INSERT INTO companies (name) VALUES ('Reach婚介')`
      for (const statement of GENERATE) yield* sql.unsafe(statement)
    }
    const [{ account }] = yield* sql<{ account: number }>`SELECT work_wechat_id::int AS account FROM work_wechat_associations
    GROUP BY work_wechat_id ORDER BY count(*) DESC LIMIT 1`
    const [counts] = yield* sql<Record<string, number>>`SELECT
    (SELECT count(*)::int FROM matchmakers) AS matchmakers, (SELECT count(*)::int FROM work_groups) AS groups,
    (SELECT count(*)::int FROM work_wechats) AS accounts, (SELECT count(*)::int FROM work_group_matchmakers) AS group_members,
    (SELECT count(*)::int FROM work_wechat_associations) AS associations`

    const scenarios: ReadonlyArray<readonly [string, Effect.Effect<{ readonly total: number }, unknown>]> = [
      ["ids, scope all, page 10000", api.matchmakers.ids({ query: { page_size: 10000 } })],
      ["ids, scope direct, page 10000", api.matchmakers.ids({ query: { page_size: 10000, work_wechat_scope: "direct" } })],
      ["ids, scope group, page 10000", api.matchmakers.ids({ query: { page_size: 10000, work_wechat_scope: "group" } })],
      ["ids, one account, scope all", api.matchmakers.ids({ query: { work_wechat_id: account } })],
      ["list, one account, scope all", api.matchmakers.list({ query: { work_wechat_id: account } })],
      ["list, one account, scope group", api.matchmakers.list({ query: { work_wechat_id: account, work_wechat_scope: "group" } })],
      ["list, work_wechat_filter=empty", api.matchmakers.list({ query: { work_wechat_filter: "empty" } })],
      [
        "list, work_wechat_filter=has, direct",
        api.matchmakers.list({ query: { work_wechat_filter: "has", work_wechat_scope: "direct" } })
      ],
      ["list, group_nos (3 groups)", api.matchmakers.list({ query: { group_nos: ["rg_1", "rg_500", "rg_1999"] } })]
    ]
    const rows: Array<Record<string, string | number>> = []
    for (const [name, call] of scenarios) {
      const { times, last } = yield* timeCalls(call, SAMPLES)
      rows.push({
        scenario: name,
        total: last.total,
        p50_ms: Number(percentile(times, 50).toFixed(2)),
        p99_ms: Number(percentile(times, 99).toFixed(2))
      })
    }
    process.stdout.write(`\nReach queries over HTTP: ${JSON.stringify(counts)}, ${SAMPLES} requests each\n`)
    console.table(rows)
  }))

process.exit(0)
