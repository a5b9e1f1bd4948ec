// Incremental sync on every list (DECISIONS §12), table-driven over every list endpoint: a walk
// with `updated_since` and `cursor` returns each matching record once, in (updated_at, id) order
// (checked against the database's own order, microseconds included), also while records change
// between pages; `updated_since` is inclusive to the microsecond; a cursor that does not decode or
// was made for other filters is a 400 naming `cursor`; `next_cursor` is null on the last page and
// on pages read by `page`; `total` counts every record matching the filters.
import { expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import * as Scopes from "../src/domain/scope.js"
import { formatDate } from "../src/domain/time.js"
import { pageTail, sinceFilter } from "../src/repos/sqlHelpers.js"
import { FollowUps } from "../src/services/FollowUps.js"
import { signedClient, testServerLayer } from "./support/harness.js"

type Client = Effect.Success<ReturnType<typeof signedClient>>["client"]

interface SyncQuery {
  readonly updated_since?: string
  readonly cursor?: string
  readonly page_size?: number
}

interface Page {
  readonly list: ReadonlyArray<unknown>
  readonly total: number
  readonly next_cursor: string | null
}

/**
 * One list endpoint: how to seed at least five of its records (returning the list's scope), how to
 * read a page, the id of a listed record, and the table, sync column and filter that select the
 * same records in SQL.
 */
interface ListCase {
  readonly name: string
  readonly seed: (client: Client) => Effect.Effect<number, unknown, SqlClient.SqlClient | FollowUps>
  readonly read: (client: Client, scope: number, query: SyncQuery) => Effect.Effect<Page, unknown>
  readonly idOf: (item: never) => number
  readonly table: string
  readonly at: string
  readonly where: (scope: number) => string
}

let seq = 0
const uniq = () => `${Date.now().toString(36)}${(seq++).toString(36)}`
const phone = () => `139${String(Math.floor(Math.random() * 1e8)).padStart(8, "0")}`
const times = <A, E>(n: number, f: (i: number) => Effect.Effect<A, E>) => Effect.forEach(Array.from({ length: n }, (_, i) => i), f)
const byId = (item: { readonly id: number }) => item.id
const N = 5

const company = (client: Client) => Effect.map(client.companies.create({ payload: { name: `同步公司${uniq()}` } }), (c) => c.id)
const guest = (client: Client, companyId: number, i: number) =>
  client.guests.create({ payload: { name: `同步${i}`, gender: i % 2 ? "male" : "female", company_id: companyId } })
const guests = (client: Client, n: number) => Effect.flatMap(company(client), (companyId) => times(n, (i) => guest(client, companyId, i)))

const CASES: ReadonlyArray<ListCase> = [
  {
    name: "GET /guests",
    seed: (client) => Effect.as(guests(client, N), 0),
    read: (client, _, query) => client.guests.list({ query }),
    idOf: byId,
    table: "guests",
    at: "updated_at",
    where: () => "TRUE"
  },
  {
    name: "GET /matchmakers",
    seed: (client) => Effect.as(times(N, (i) => client.matchmakers.create({ payload: { name: `红娘${i}` } })), 0),
    read: (client, _, query) => client.matchmakers.list({ query }),
    idOf: byId,
    table: "matchmakers",
    at: "updated_at",
    where: () => "TRUE"
  },
  {
    name: "GET /matchmakers/ids",
    seed: (client) =>
      Effect.as(times(N, (i) => client.matchmakers.create({ payload: { name: `红娘${i}`, wechat_id: `wxid_${uniq()}` } })), 0),
    read: (client, _, query) => client.matchmakers.ids({ query }),
    idOf: byId,
    table: "matchmakers",
    at: "updated_at",
    where: () => "wechat_id IS NOT NULL AND wechat_id <> ''"
  },
  {
    name: "GET /companies",
    seed: (client) => Effect.as(times(N, (i) => client.companies.create({ payload: { name: `同步公司${uniq()}${i}` } })), 0),
    read: (client, _, query) => client.companies.list({ query }),
    idOf: byId,
    table: "companies",
    at: "updated_at",
    where: () => "TRUE"
  },
  {
    name: "GET /work-wechats",
    seed: (client) =>
      Effect.as(times(N, () => client.workWechats.create({ payload: { wechat_number: `s_${uniq()}`, phone: phone() } })), 0),
    read: (client, _, query) => client.workWechats.list({ query }),
    idOf: byId,
    table: "work_wechats",
    at: "updated_at",
    where: () => "deleted_at IS NULL"
  },
  {
    name: "GET /work-wechats/{id}/associations",
    seed: (client) =>
      Effect.gen(function*() {
        const { id } = yield* client.workWechats.create({ payload: { wechat_number: `s_${uniq()}`, phone: phone() } })
        yield* times(N, (i) =>
          Effect.flatMap(client.matchmakers.create({ payload: { name: `关联${i}` } }), (m) =>
            client.workWechats.associate({ params: { id }, payload: { target_type: "matchmaker", target_id: m.id } })))
        return id
      }),
    read: (client, id, query) => client.workWechats.associations({ params: { id }, query }),
    idOf: byId,
    table: "work_wechat_associations",
    at: "updated_at",
    where: (id) => `work_wechat_id = ${id}`
  },
  {
    name: "GET /work-wechats/{id}/logs",
    seed: (client) =>
      Effect.gen(function*() {
        const { id } = yield* client.workWechats.create({ payload: { wechat_number: `s_${uniq()}`, phone: phone() } })
        yield* times(N, (i) => client.workWechats.update({ params: { id }, payload: { remark: `备注${i}` } }))
        return id
      }),
    read: (client, id, query) => client.workWechats.logs({ params: { id }, query }),
    idOf: byId,
    table: "work_wechat_logs",
    at: "created_at",
    where: (id) => `work_wechat_id = ${id}`
  },
  {
    name: "GET /work-groups",
    seed: (client) => Effect.as(times(N, (i) => client.workGroups.create({ payload: { name: `同步群${i}` } })), 0),
    read: (client, _, query) => client.workGroups.list({ query }),
    idOf: byId,
    table: "work_groups",
    at: "updated_at",
    where: () => "deleted_at IS NULL"
  },
  {
    name: "GET /work-groups/{id}/matchmakers",
    seed: (client) =>
      Effect.gen(function*() {
        const { id } = yield* client.workGroups.create({ payload: { name: `成员群${uniq()}` } })
        yield* times(N, (i) =>
          Effect.flatMap(client.matchmakers.create({ payload: { name: `群红娘${i}` } }), (m) =>
            client.workGroups.addMatchmaker({ params: { id }, payload: { matchmaker_id: m.id } })))
        return id
      }),
    read: (client, id, query) => client.workGroups.matchmakers({ params: { id }, query }),
    idOf: byId,
    table: "work_group_matchmakers",
    at: "joined_at",
    where: (id) => `work_group_id = ${id}`
  },
  {
    name: "GET /work-groups/{id}/work-wechats",
    seed: (client) =>
      Effect.gen(function*() {
        const { id } = yield* client.workGroups.create({ payload: { name: `账号群${uniq()}` } })
        yield* times(N, () =>
          Effect.flatMap(client.workWechats.create({ payload: { wechat_number: `s_${uniq()}`, phone: phone() } }), (w) =>
            client.workGroups.addWorkWechat({ params: { id }, payload: { work_wechat_id: w.id } })))
        return id
      }),
    read: (client, id, query) => client.workGroups.workWechats({ params: { id }, query }),
    idOf: byId,
    table: "work_group_work_wechats",
    at: "joined_at",
    where: (id) => `work_group_id = ${id}`
  },
  {
    name: "GET /work-groups/{id}/logs",
    seed: (client) =>
      Effect.gen(function*() {
        const { id } = yield* client.workGroups.create({ payload: { name: `日志群${uniq()}` } })
        yield* times(N, (i) => client.workGroups.update({ params: { id }, payload: { remark: `备注${i}` } }))
        return id
      }),
    read: (client, id, query) => client.workGroups.logs({ params: { id }, query }),
    idOf: byId,
    table: "work_group_logs",
    at: "created_at",
    where: (id) => `work_group_id = ${id}`
  },
  {
    name: "GET /activities",
    seed: (client) =>
      Effect.gen(function*() {
        const company = yield* client.companies.create({ payload: { name: `活动公司${uniq()}` } })
        yield* times(N, (i) =>
          client.activities.create({
            payload: {
              title: `活动${i}`,
              address: "长沙",
              start_time: "2099-01-01 10:00:00",
              end_time: "2099-01-01 12:00:00",
              company_id: company.id
            }
          }))
        return 0
      }),
    read: (client, _, query) => client.activities.list({ query }),
    idOf: byId,
    table: "activities",
    at: "updated_at",
    where: () => "TRUE"
  },
  {
    name: "GET /matches",
    seed: (client) =>
      Effect.as(
        times(N, () =>
          Effect.flatMap(guests(client, 2), ([a, b]) => client.matches.create({ payload: { guest_a_id: a!.id, guest_b_id: b!.id } }))),
        0
      ),
    read: (client, _, query) => client.matches.list({ query }),
    idOf: byId,
    table: "matches",
    at: "updated_at",
    where: () => "TRUE"
  },
  {
    name: "GET /memberships",
    seed: (client) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const users = yield* sql<
          { id: number }
        >`INSERT INTO users (name) SELECT '会员' || i FROM generate_series(1, ${N}) i RETURNING id::int AS id`
        yield* Effect.forEach(users, (u) => client.memberships.create({ payload: { user_id: u.id, plan_id: 1 } }))
        return 0
      }),
    read: (client, _, query) => client.memberships.list({ query }),
    idOf: byId,
    table: "memberships",
    at: "updated_at",
    where: () => "TRUE"
  },
  {
    name: "GET /follow-up/tasks",
    seed: (client) =>
      Effect.gen(function*() {
        const companyId = yield* company(client)
        const [g] = yield* guests(client, 1)
        yield* client.guests.update({ params: { id: g!.id }, payload: { company_id: companyId } })
        // Plans made through the service (the operator's path), each with one task today (the Clock's).
        const today = yield* Effect.map(Clock.currentTimeMillis, (ms) => formatDate(new Date(ms - 59 * 86_400_000), "Asia/Shanghai"))
        const followUps = yield* FollowUps
        yield* times(N, () => followUps.createPlan(Scopes.all, { guestId: g!.id, taskType: "recommend", days: [60], startDate: today }))
        return companyId
      }),
    read: (client, companyId, query) => client.followUps.list({ query: { ...query, company_id: companyId } }),
    idOf: byId,
    table: "follow_up_tasks",
    at: "updated_at",
    where: (companyId) => `company_id = ${companyId} AND status = 'pending'`
  },
  {
    name: "GET /image-blacklist",
    seed: (client) =>
      Effect.as(
        client.imageBlacklist.add({
          payload: {
            items: Array.from(
              { length: N },
              () => ({ md5: Array.from({ length: 32 }, () => "0123456789abcdef"[Math.floor(Math.random() * 16)]).join("") })
            )
          }
        }),
        0
      ),
    read: (client, _, query) => client.imageBlacklist.list({ query }),
    idOf: byId,
    table: "image_blacklist",
    at: "updated_at",
    where: () => "TRUE"
  }
]

layer(testServerLayer({ rateLimitBurst: 1_000_000 }), { timeout: 240_000 })("sync on every list", (it) => {
  /** The records of a case matching `since` in the database's (at, id) order, and its `since` text. */
  const expectedIds = (c: ListCase, scope: number, since: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.map(
        sql.unsafe<{ id: number }>(
          `SELECT id::int AS id FROM ${c.table} WHERE ${c.where(scope)}
            AND ${c.at} >= ($1::timestamp AT TIME ZONE 'Asia/Shanghai') ORDER BY ${c.at}, id`,
          [since]
        ),
        (rows) => rows.map((r) => r.id)
      ))

  /** Every page from `since`, page_size 2; `between` runs after the first page. */
  const walk = (
    c: ListCase,
    client: Client,
    scope: number,
    since: string,
    between: (seen: ReadonlyArray<number>) => Effect.Effect<void, unknown> = () => Effect.void
  ) =>
    Effect.gen(function*() {
      const ids: Array<number> = []
      const pages: Array<Page> = []
      let cursor: string | undefined
      do {
        const page = yield* c.read(client, scope, { updated_since: since, page_size: 2, ...(cursor !== undefined ? { cursor } : {}) })
        pages.push(page)
        ids.push(...(page.list as ReadonlyArray<never>).map(c.idOf))
        if (pages.length === 1) yield* between(ids)
        cursor = page.next_cursor ?? undefined
        if (pages.length > 100) throw new Error("no end")
      } while (cursor !== undefined)
      return { ids, pages }
    })

  for (const c of CASES) {
    it.effect(`${c.name}: a cursor walk from updated_since lists each record once in (updated_at, id) order; a record changed meanwhile comes again; the boundary is inclusive; a bad cursor is a 400`, () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { client } = yield* signedClient()
        const [{ since }] = yield* sql<{ since: string }>`
          SELECT to_char(now() AT TIME ZONE 'Asia/Shanghai', 'YYYY-MM-DD HH24:MI:SS') AS since`
        const scope = yield* c.seed(client)
        // Several records within one second, microseconds apart: a cursor of whole seconds would skip or repeat them.
        const seeded = yield* expectedIds(c, scope, since)
        yield* sql.unsafe(
          `UPDATE ${c.table} t SET ${c.at} = (SELECT min(${c.at}) FROM ${c.table} WHERE id = ANY($1::bigint[])) + (s.k * interval '3 microseconds')
            FROM (SELECT unnest($1::bigint[]) AS id, generate_series(1, cardinality($1::bigint[])) AS k) s WHERE t.id = s.id`,
          [seeded.slice().reverse()]
        )
        const expected = yield* expectedIds(c, scope, since)
        expect(expected.length).toBeGreaterThanOrEqual(N)

        const first = yield* walk(c, client, scope, since)
        expect(first.ids).toEqual(expected)
        expect(first.pages.every((p) => p.total === expected.length)).toBe(true)
        expect(first.pages.at(-1)!.next_cursor).toBeNull()
        expect(first.pages.slice(0, -1).every((p) => typeof p.next_cursor === "string")).toBe(true)

        // A record seen on the first page changes before the next: it comes again, after the rest.
        const second = yield* walk(
          c,
          client,
          scope,
          since,
          (seen) => Effect.asVoid(sql.unsafe(`UPDATE ${c.table} SET ${c.at} = clock_timestamp() WHERE id = $1`, [seen[0]!]))
        )
        expect(second.ids).toEqual([...expected, expected[0]!])

        // Inclusive to the microsecond: a record at `since` is listed, one a microsecond earlier is not.
        const [atSince, before] = [expected[1]!, expected[2]!]
        yield* sql.unsafe(`UPDATE ${c.table} SET ${c.at} = ($1::timestamp AT TIME ZONE 'Asia/Shanghai') WHERE id = $2`, [since, atSince])
        yield* sql.unsafe(
          `UPDATE ${c.table} SET ${c.at} = ($1::timestamp AT TIME ZONE 'Asia/Shanghai') - interval '1 microsecond' WHERE id = $2`,
          [since, before]
        )
        const third = yield* walk(c, client, scope, since)
        expect(third.ids[0]).toBe(atSince)
        expect(third.ids).not.toContain(before)
        expect(third.ids).toEqual(yield* expectedIds(c, scope, since))

        // By page: no cursor.
        expect((yield* c.read(client, scope, { page_size: 2 })).next_cursor).toBeNull()

        // A cursor that does not decode, or sent with other filters: 400 naming cursor.
        const cursor = first.pages[0]!.next_cursor!
        for (
          const query of [{ cursor: "not-a-cursor!" }, { cursor: `${cursor}x` }, { cursor, updated_since: "2000-01-01 00:00:00" }, {
            cursor
          }]
        ) {
          expect(yield* Effect.flip(c.read(client, scope, query)), JSON.stringify(query)).toMatchObject({
            _tag: "InvalidInput",
            issues: [{ path: "cursor" }]
          })
        }
      }))
  }

  it.effect("a cursor of one list is refused by another", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      yield* guests(client, 3)
      yield* times(3, (i) => client.matchmakers.create({ payload: { name: `串${i}` } }))
      const since = "2000-01-01 00:00:00"
      const page = yield* client.guests.list({ query: { updated_since: since, page_size: 1 } })
      expect(yield* Effect.flip(client.matchmakers.list({ query: { updated_since: since, cursor: page.next_cursor! } }))).toMatchObject({
        _tag: "InvalidInput",
        issues: [{ path: "cursor" }]
      })
    }))
})

/** The nodes of an EXPLAIN (FORMAT JSON) plan, depth first. */
type PlanNode = {
  readonly "Node Type": string
  readonly "Index Name"?: string
  readonly "Actual Rows"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}
const nodesOf = (node: PlanNode): ReadonlyArray<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodesOf)]

layer(testServerLayer(), { timeout: 120_000 })("sync pages cost the same at any depth", (it) => {
  /** The plan of a sync page of `table` after `after`, as the repositories build it (pageTail). */
  const plan = (table: string, at: string, live: string, after: { at: string; id: number } | undefined, analyze: boolean) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const sync = { since: "2000-01-01T00:00:00.000Z", limit: 20, scope: "x", ...(after ? { after } : {}) }
      const tail = pageTail(sql, {
        sync,
        where: sql.and([sql.literal(live), ...sinceFilter(sql, sync, `${table}.${at}`)]),
        at: `${table}.${at}`,
        id: `${table}.id`,
        offsetOrder: `${table}.id DESC`,
        pageSize: 20,
        offset: 0
      })
      const [row] = yield* sql<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>`
        EXPLAIN (FORMAT JSON${sql.literal(analyze ? ", ANALYZE" : "")}) SELECT ${sql.literal(`${table}.id`)} FROM ${
        sql.literal(table)
      } ${tail}`
      return nodesOf(row!["QUERY PLAN"][0]!.Plan)
    })

  it.effect("a guest page 19,000 records deep reads 21 index entries, no sort, like the first page (by offset it reads 19,020)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [{ company }] = yield* sql<{ company: number }>`INSERT INTO companies (name) VALUES ('深翻页') RETURNING id::int AS company`
      yield* sql`INSERT INTO guests (name, gender, company_id, updated_at)
        SELECT '深' || i, 'male', ${company}, now() - (i * interval '1 millisecond') FROM generate_series(1, 20000) i`
      yield* sql`ANALYZE guests`
      const [deep] = yield* sql<{ at: string; id: number }>`
        SELECT to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at, id::int AS id
        FROM guests ORDER BY updated_at, id OFFSET 19000 LIMIT 1`
      for (const after of [undefined, deep!]) {
        const nodes = yield* plan("guests", "updated_at", "TRUE", after, true)
        expect(nodes.map((n) => n["Node Type"])).not.toContain("Sort")
        const scan = nodes.find((n) => n["Index Name"] === "guests_updated_idx")
        expect(scan?.["Actual Rows"]).toBe(21)
      }
      const [offsetPlan] = yield* sql<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>`
        EXPLAIN (FORMAT JSON, ANALYZE) SELECT id FROM guests ORDER BY updated_at, id LIMIT 20 OFFSET 19000`
      expect(Math.max(...nodesOf(offsetPlan!["QUERY PLAN"][0]!.Plan).map((n) => n["Actual Rows"] ?? 0))).toBeGreaterThanOrEqual(19_020)
    }))

  it.effect("every list's sync order is served by an index: no sort of the table", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const lists = [
        ["matchmakers", "updated_at", "TRUE"],
        ["companies", "updated_at", "TRUE"],
        ["work_wechats", "updated_at", "deleted_at IS NULL"],
        ["work_groups", "updated_at", "deleted_at IS NULL"],
        ["activities", "updated_at", "TRUE"],
        ["matches", "updated_at", "TRUE"],
        ["memberships", "updated_at", "TRUE"],
        ["follow_up_tasks", "updated_at", "TRUE"],
        ["image_blacklist", "updated_at", "TRUE"],
        ["work_wechat_associations", "updated_at", "work_wechat_id = 1"],
        ["work_wechat_logs", "created_at", "work_wechat_id = 1"],
        ["work_group_logs", "created_at", "work_group_id = 1"],
        ["work_group_matchmakers", "joined_at", "work_group_id = 1"],
        ["work_group_work_wechats", "joined_at", "work_group_id = 1"]
      ] as const
      for (const [table, at, live] of lists) {
        // The tables here are small, where a sort would be cheaper: without sequential and bitmap
        // scans (which lose the order) the planner shows whether an index gives the order.
        const nodes = yield* sql.withTransaction(
          Effect.andThen(
            sql`SET LOCAL enable_seqscan = off`.pipe(Effect.andThen(sql`SET LOCAL enable_bitmapscan = off`)),
            plan(table, at, live, { at: "2001-01-01T00:00:00.000000Z", id: 1 }, false)
          )
        )
        expect(nodes.map((n) => n["Node Type"]), table).not.toContain("Sort")
        expect(nodes.some((n) => n["Index Name"] === `${table}_sync_idx`), table).toBe(true)
      }
    }))
})
