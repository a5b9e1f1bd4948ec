// Exact list totals from counters (migration 0012): kept in the transactions that change the
// counted tables, folded by the daemon, and equal to a full count whatever the writers do at once.
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"

import { RowCountsRepo } from "../src/repos/RowCountsRepo.js"
import { signedClient, testServerLayer } from "./support/harness.js"

const STATUSES = ["incomplete", "available", "matching", "matched", "archived"] as const
const GENDERS = ["male", "female"] as const

/** Every counter of the guests whose sum differs from a full count (none when exact). */
const mismatches = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<{ dim: string; val: string; counted: number; actual: number }>`
    WITH actual AS (
      SELECT v.dim, v.val, count(*)::int AS n FROM guests g
      CROSS JOIN LATERAL (VALUES ('', ''), ('company_id', g.company_id::text), ('status', g.status), ('gender', g.gender)) v(dim, val)
      GROUP BY v.dim, v.val),
    counted AS (SELECT dim, val, sum(n)::int AS n FROM row_counts WHERE tbl = 'guests' GROUP BY dim, val)
    SELECT coalesce(a.dim, c.dim) AS dim, coalesce(a.val, c.val) AS val, coalesce(c.n, 0) AS counted, coalesce(a.n, 0) AS actual
    FROM actual a FULL JOIN counted c ON a.dim = c.dim AND a.val = c.val
    WHERE coalesce(a.n, 0) <> coalesce(c.n, 0)`
})

const pick = <A>(values: ReadonlyArray<A>, i: number): A => values[i % values.length]!

layer(testServerLayer({ rateLimitBurst: 1_000_000 }), { timeout: 120_000 })("exact list totals from counters", (it) => {
  it.effect("counters equal full counts after concurrent writers, rolled-back transactions and two compactions racing", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const counts = yield* RowCountsRepo
      const companies = yield* sql<{ id: number }>`INSERT INTO companies (name)
        SELECT '计数公司' || i FROM generate_series(1, 3) i RETURNING id::int AS id`
      const companyIds = companies.map((c) => c.id)

      // Each writer: batches of inserts, updates moving status/company/gender, every third transaction rolled back.
      const writer = (w: number) =>
        Effect.forEach(Array.from({ length: 12 }, (_, i) => i), (i) => {
          const work = Effect.gen(function*() {
            yield* sql`INSERT INTO guests (name, gender, company_id, status)
              SELECT ${`计数${w}-${i}-`} || k, (ARRAY['male','female'])[1 + (k % 2)],
                (${companyIds}::int[])[1 + ((k + ${w}) % 3)], (ARRAY['incomplete','available','matching','matched','archived'])[1 + ((k + ${i}) % 5)]
              FROM generate_series(1, 5) k`
            yield* sql`UPDATE guests SET status = ${pick(STATUSES, w + i)}, gender = ${pick(GENDERS, i)},
              company_id = ${pick(companyIds, w * i)} WHERE id IN (SELECT id FROM guests ORDER BY random() LIMIT 3)`
            if (i % 3 === 2) return yield* Effect.fail("rolled back on purpose" as const)
          })
          return Effect.exit(sql.withTransaction(work))
        }, { discard: true })

      let writing = true
      const compactor = Effect.gen(function*() {
        let passes = 0
        while (writing || passes === 0) {
          yield* counts.compact
          passes++
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
        }
        return passes
      })
      const compactors = yield* Effect.all([Effect.fork(compactor), Effect.fork(compactor)])
      yield* Effect.all(Array.from({ length: 6 }, (_, w) => writer(w)), { concurrency: "unbounded", discard: true })
      writing = false
      for (const fiber of compactors) expect(yield* fiber.await).toSatisfy(Exit.isSuccess)
      // 6 writers × 12 transactions, a third rolled back, 5 guests each.
      const [{ written }] = yield* sql<{ written: number }>`SELECT count(*)::int AS written FROM guests WHERE name LIKE '计数%'`
      expect(written).toBe(6 * 8 * 5)

      expect(yield* mismatches).toEqual([])
      yield* counts.compact
      expect(yield* mismatches).toEqual([])
      // Folded: one row per counter.
      const [{ most }] = yield* sql<{ most: number }>`SELECT coalesce(max(c), 0)::int AS most FROM
        (SELECT count(*) AS c FROM row_counts GROUP BY tbl, dim, val) x`
      expect(most).toBe(1)
    }))

  it.effect("a rolled-back transaction leaves every counter as it was", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [{ company }] = yield* sql<{ company: number }>`INSERT INTO companies (name) VALUES ('回滚公司') RETURNING id::int AS company`
      const before = yield* sql`SELECT tbl, dim, val, sum(n)::int AS n FROM row_counts GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`
      const exit = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO guests (name, gender, company_id) VALUES ('回滚', 'male', ${company})`
        yield* sql`UPDATE guests SET status = 'archived'`
        return yield* Effect.fail("abort")
      })))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* sql`SELECT tbl, dim, val, sum(n)::int AS n FROM row_counts GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`).toEqual(before)
    }))

  it.effect("GET /guests answers the exact total unfiltered, under each counted filter and under combined filters", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { client } = yield* signedClient()
      const [{ company }] = yield* sql<{ company: number }>`INSERT INTO companies (name) VALUES ('列表公司') RETURNING id::int AS company`
      yield* sql`INSERT INTO guests (name, gender, company_id, status)
        SELECT '列表' || k, (ARRAY['male','female'])[1 + (k % 2)], ${company}, (ARRAY['available','archived'])[1 + (k % 3 = 0)::int]
        FROM generate_series(1, 30) k`
      const full = (where: string) =>
        Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM guests WHERE ${sql.literal(where)}`, (r) => r[0]!.n)
      const total = (urlParams: Parameters<typeof client.guests.list>[0]["urlParams"]) =>
        Effect.map(client.guests.list({ urlParams }), (page) => page.total)

      expect(yield* total({})).toBe(yield* full("true"))
      expect(yield* total({ company_id: company })).toBe(30)
      expect(yield* total({ status: "archived" })).toBe(yield* full("status = 'archived'"))
      expect(yield* total({ gender: "female" })).toBe(yield* full("gender = 'female'"))
      expect(yield* total({ company_id: company, gender: "male" })).toBe(15)
      expect(yield* total({ keyword: "列表" })).toBe(yield* full("name LIKE '%列表%'"))
    }))

  it.effect("unfiltered and single-filter totals of matches, memberships and the blacklist come from their counters, exact", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { client } = yield* signedClient()
      yield* client.imageBlacklist.add({
        payload: { items: [{ md5: "a".repeat(32), source: "manual" }, { md5: "b".repeat(32), source: "upload" }] }
      })
      const [{ n }] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM image_blacklist WHERE source = 'manual'`
      expect((yield* client.imageBlacklist.list({ urlParams: { source: "manual" } })).total).toBe(n)
      const counters = yield* sql<{ tbl: string; counted: number; actual: number }>`
        SELECT t.tbl, coalesce((SELECT sum(n) FROM row_counts r WHERE r.tbl = t.tbl AND r.dim = ''), 0)::int AS counted,
          CASE t.tbl WHEN 'matches' THEN (SELECT count(*) FROM matches) WHEN 'memberships' THEN (SELECT count(*) FROM memberships)
            ELSE (SELECT count(*) FROM image_blacklist) END::int AS actual
        FROM (VALUES ('matches'), ('memberships'), ('image_blacklist')) t(tbl)`
      for (const c of counters) expect(c.counted, c.tbl).toBe(c.actual)
    }))
})
