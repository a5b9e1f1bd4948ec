// Exact list totals from counters (migrations 0012, 0014): kept in the transactions that change
// the counted tables, folded by the daemon, and equal to a full count whatever the writers do at
// once, in every snapshot.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as SqlClient from "effect/sql/SqlClient"

import { formatTimestamp } from "../src/domain/time.js"
import { RowCountsRepo } from "../src/repos/RowCountsRepo.js"
import { signedClient, testServerLayer } from "./support/harness.js"

const STATUSES = ["incomplete", "available", "matching", "matched", "archived"] as const
const GENDERS = ["male", "female"] as const

/** The counted columns of each counted table (the arguments of its count_rows triggers). */
const COUNTED = {
  guests: ["company_id", "status", "gender"],
  matches: ["status"],
  memberships: ["status", "user_id"],
  image_blacklist: ["status", "source"],
  activities: ["status", "company_id"],
  work_wechat_logs: ["work_wechat_id"],
  work_group_logs: ["work_group_id"]
} as const

/**
 * Every counter of `tbl` whose sum differs from a full count (none when exact), NULL counted as
 * '\N'. One statement, so the counters and the rows are read in one snapshot.
 */
const mismatches = (tbl: keyof typeof COUNTED) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const dims = ["('', '')", ...COUNTED[tbl].map((c) => `('${c}', coalesce(t.${c}::text, E'\\\\N'))`)].join(", ")
    return yield* sql<{ dim: string; val: string; counted: number; actual: number }>`
      WITH actual AS (
        SELECT v.dim, v.val, count(*)::int AS n FROM ${sql(tbl)} t
        CROSS JOIN LATERAL (VALUES ${sql.literal(dims)}) v(dim, val)
        GROUP BY v.dim, v.val),
      counted AS (SELECT dim, val, sum(n)::int AS n FROM row_counts WHERE tbl = ${tbl} GROUP BY dim, val)
      SELECT coalesce(a.dim, c.dim) AS dim, coalesce(a.val, c.val) AS val, coalesce(c.n, 0) AS counted, coalesce(a.n, 0) AS actual
      FROM actual a FULL JOIN counted c ON a.dim = c.dim AND a.val = c.val
      WHERE coalesce(a.n, 0) <> coalesce(c.n, 0)`
  })

const pick = <A>(values: ReadonlyArray<A>, i: number): A => values[i % values.length]!

const pause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

layer(testServerLayer({ rateLimitBurst: 1_000_000 }), { timeout: 120_000 })("exact list totals from counters", (it) => {
  it.effect(
    "counters equal full counts in every snapshot while writers insert, move, delete and roll back and two compactions race",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const counts = yield* RowCountsRepo
        const companies = yield* sql<{ id: number }>`INSERT INTO companies (name)
        SELECT '计数公司' || i FROM generate_series(1, 3) i RETURNING id::int AS id`
        const companyIds = companies.map((c) => c.id)

        // Each writer touches only its own guests (no row waits between writers): per transaction
        // five inserts, three guests moved to another status/company/gender, a set move, one delete;
        // every third transaction rolled back.
        const writer = (w: number) =>
          Effect.forEach(Array.from({ length: 12 }, (_, i) => i), (i) => {
            const own = `计数${w}-%`
            const work = Effect.gen(function*() {
              yield* sql`INSERT INTO guests (name, gender, company_id, status)
              SELECT ${`计数${w}-${i}-`} || k, (ARRAY['male','female'])[1 + (k % 2)],
                (${companyIds}::int[])[1 + ((k + ${w}) % 3)],
                (ARRAY['incomplete','available','matching','matched','archived'])[1 + ((k + ${i}) % 5)]
              FROM generate_series(1, 5) k`
              yield* sql`UPDATE guests SET status = ${pick(STATUSES, w + i)}, gender = ${pick(GENDERS, i)},
              company_id = ${pick(companyIds, w * i + 1)}
              WHERE id IN (SELECT id FROM guests WHERE name LIKE ${own} ORDER BY random() LIMIT 3)`
              yield* sql`UPDATE guests SET status = 'archived' WHERE name LIKE ${own} AND status = 'matched'`
              yield* sql`DELETE FROM guests WHERE id = (SELECT min(id) FROM guests WHERE name LIKE ${own})`
              if (i % 3 === 2) return yield* Effect.fail("rolled back on purpose" as const)
            })
            return Effect.exit(sql.withTransaction(work))
          }, { discard: true })

        let writing = true
        const compactor = Effect.gen(function*() {
          let folded = 0
          while (writing) {
            folded += yield* counts.compact
            yield* pause(3)
          }
          return folded
        })
        // A reader comparing every guest counter with a full count, each time in one snapshot.
        const reader = Effect.gen(function*() {
          const seen: Array<unknown> = []
          let reads = 0
          while (writing) {
            seen.push(...(yield* mismatches("guests")))
            reads++
            yield* pause(1)
          }
          return { seen, reads }
        })
        const compactors = yield* Effect.all([Effect.forkChild(compactor), Effect.forkChild(compactor)])
        const checking = yield* Effect.forkChild(reader)
        const results = yield* Effect.all(Array.from({ length: 6 }, (_, w) => writer(w)), { concurrency: "unbounded" }).pipe(
          Effect.ensuring(Effect.sync(() => (writing = false)))
        )
        expect(results).toHaveLength(6)
        const folded = yield* Effect.all(compactors.map((f) => Fiber.await(f)))
        for (const exit of folded) expect(exit).toSatisfy(Exit.isSuccess)
        // The compactions folded deltas while the writers ran.
        expect(folded.reduce((sum, exit) => sum + (Exit.isSuccess(exit) ? exit.value : 0), 0)).toBeGreaterThan(0)
        const { reads, seen } = yield* Fiber.join(checking)
        expect(reads).toBeGreaterThan(0)
        expect(seen).toEqual([])

        // 6 writers × 8 committed transactions × (5 inserted − 1 deleted).
        const [{ live }] = yield* sql<{ live: number }>`SELECT count(*)::int AS live FROM guests WHERE name LIKE '计数%'`
        expect(live).toBe(6 * 8 * 4)

        expect(yield* mismatches("guests")).toEqual([])
        yield* counts.compact
        expect(yield* mismatches("guests")).toEqual([])
        // Folded: one row per counter.
        const [{ most }] = yield* sql<{ most: number }>`SELECT coalesce(max(c), 0)::int AS most FROM
        (SELECT count(*) AS c FROM row_counts GROUP BY tbl, dim, val) x`
        expect(most).toBe(1)
      })
  )

  it.effect("a rolled-back transaction leaves every counter as it was", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [{ company }] = yield* sql<{ company: number }>`INSERT INTO companies (name) VALUES ('回滚公司') RETURNING id::int AS company`
      const before = yield* sql`SELECT tbl, dim, val, sum(n)::int AS n FROM row_counts GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`
      const exit = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO guests (name, gender, company_id) VALUES ('回滚', 'male', ${company})`
        yield* sql`UPDATE guests SET status = 'archived'`
        yield* sql`DELETE FROM guests WHERE name = '回滚'`
        return yield* Effect.fail("abort")
      })))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* sql`SELECT tbl, dim, val, sum(n)::int AS n FROM row_counts GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`).toEqual(before)
    }))

  it.effect("GET /guests answers the exact total unfiltered, under each counted filter and under combined or empty filters", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { client } = yield* signedClient()
      const [{ company }] = yield* sql<{ company: number }>`INSERT INTO companies (name) VALUES ('列表公司') RETURNING id::int AS company`
      yield* sql`INSERT INTO guests (name, gender, company_id, status, workplace)
        SELECT '列表' || k, (ARRAY['male','female'])[1 + (k % 2)], ${company}, (ARRAY['available','archived'])[1 + (k % 3 = 0)::int],
          CASE WHEN k <= 2 THEN '' ELSE '长沙' END
        FROM generate_series(1, 30) k`
      const full = (where: string) =>
        Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM guests WHERE ${sql.literal(where)}`, (r) => r[0]!.n)
      const total = (query: Parameters<typeof client.guests.list>[0]["query"]) =>
        Effect.map(client.guests.list({ query }), (page) => page.total)

      expect(yield* total({})).toBe(yield* full("true"))
      expect(yield* total({ company_id: company })).toBe(30)
      expect(yield* total({ status: "archived" })).toBe(yield* full("status = 'archived'"))
      expect(yield* total({ gender: "female" })).toBe(yield* full("gender = 'female'"))
      expect(yield* total({ company_id: company, gender: "male" })).toBe(15)
      expect(yield* total({ keyword: "列表" })).toBe(yield* full("name LIKE '%列表%'"))
      // A blank keyword is no filter; an empty workplace is one (rows with workplace '').
      expect(yield* total({ keyword: "  " })).toBe(yield* full("true"))
      const empty = yield* client.guests.list({ query: { workplace: "" } })
      expect(empty.total).toBe(2)
      expect(empty.list).toHaveLength(2)
    }))

  it.effect("matches, memberships, the blacklist, activities and operation logs keep exact counters; their lists answer from them", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { client } = yield* signedClient()
      yield* client.imageBlacklist.add({
        payload: { items: [{ md5: "a".repeat(32), source: "manual" }, { md5: "b".repeat(32), source: "upload" }] }
      })
      const [{ n }] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM image_blacklist WHERE source = 'manual'`
      expect((yield* client.imageBlacklist.list({ query: { source: "manual" } })).total).toBe(n)

      const company = yield* client.companies.create({ payload: { name: "计数活动婚介" } })
      const later = (hours: number) => formatTimestamp(new Date(Date.now() + hours * 3_600_000), "Asia/Shanghai")
      for (const title of ["一", "二", "三"]) {
        yield* client.activities.create({
          payload: { title, address: "长沙", start_time: later(24), end_time: later(28), company_id: company.id }
        })
      }
      yield* sql`UPDATE activities SET status = 'registering' WHERE title = '一'`
      const activityTotal = (where: string) =>
        Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM activities WHERE ${sql.literal(where)}`, (r) => r[0]!.n)
      expect((yield* client.activities.list({ query: {} })).total).toBe(yield* activityTotal("true"))
      expect((yield* client.activities.list({ query: { company_id: company.id } })).total).toBe(3)
      expect((yield* client.activities.list({ query: { status: "registering" } })).total).toBe(
        yield* activityTotal("status = 'registering'")
      )
      expect((yield* client.activities.list({ query: { status: "draft", company_id: company.id } })).total).toBe(2)

      const account = yield* client.workWechats.create({ payload: { wechat_number: "wx_counted", phone: "13900000077" } })
      for (const status of ["disabled", "active", "disabled"] as const) {
        yield* client.workWechats.setStatus({ params: { id: account.id }, query: { status } })
      }
      const group = yield* client.workGroups.create({ payload: { name: "计数群" } })
      yield* client.workGroups.remove({ params: { id: group.id } })
      const [{ accountLogs, groupLogs }] = yield* sql<{ accountLogs: number; groupLogs: number }>`
        SELECT (SELECT count(*) FROM work_wechat_logs WHERE work_wechat_id = ${account.id})::int AS "accountLogs",
          (SELECT count(*) FROM work_group_logs WHERE work_group_id = ${group.id})::int AS "groupLogs"`
      expect(accountLogs).toBeGreaterThan(1)
      const accountPage = yield* client.workWechats.logs({ params: { id: account.id }, query: { page_size: 1 } })
      expect(accountPage).toMatchObject({ total: accountLogs })
      expect(accountPage.list).toHaveLength(1)
      expect((yield* client.workWechats.logs({ params: { id: account.id }, query: { page: 50 } })).total).toBe(accountLogs)
      expect((yield* client.workGroups.logs({ params: { id: group.id }, query: {} })).total).toBe(groupLogs)

      for (const tbl of Object.keys(COUNTED) as ReadonlyArray<keyof typeof COUNTED>) {
        expect(yield* mismatches(tbl), tbl).toEqual([])
      }
    }))
})
