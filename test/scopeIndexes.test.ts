// A scoped list uses an index (issue 36, DECISIONS §14): over 200 companies' records (guests,
// follow-up tasks, activities, matches), a client bound to one company lists each kind through the
// API; every statement those requests run is captured as sent (the SQL and its parameters, through
// effect/sql's statement transformer) and EXPLAINed with the same parameters: none reads the
// listed table whole (no Seq Scan on it) and each reaches it through an index other than its
// primary key (the company's index; for matches, through their guests' company index).
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as Statement from "effect/sql/Statement"

import { GENERATE, GUEST_INSERT } from "../bench/seed.js"
import { fakeCardParser, signedClient, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const GUESTS = 20_000

/** The statements run while `capturing` is on, compiled as the driver gets them. */
const captured: Array<readonly [string, ReadonlyArray<unknown>]> = []
let capturing = false
const capture: Statement.Transformer = (self) =>
  Effect.sync(() => {
    if (capturing) captured.push(self.compile())
    return self
  })

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}
const nodesOf = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodesOf)]

const testLayer = testServerLayer({ rateLimitBurst: 1_000_000 }, fakeCardParser).pipe(
  Layer.provide(Layer.succeed(Statement.CurrentTransformer)(capture))
)

layer(testLayer, { timeout: 120_000 })("scoped lists and their indexes", (it) => {
  it.effect("a client bound to one of 200 companies lists guests, follow-up tasks, activities and matches through an index, never a whole-table scan", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [{ first }] = (yield* sql.unsafe(GENERATE)) as unknown as [{ first: string }]
      const firstCompany = Number(first)
      for (let from = 1; from <= GUESTS; from += 10_000) yield* sql.unsafe(GUEST_INSERT(firstCompany, from, from + 9_999))
      // A plan and a task due today (the list's default date) per guest, an activity per 10 guests, a match per 2.
      yield* sql.unsafe(`
        INSERT INTO follow_up_plans (guest_id, task_type, start_date, days)
        SELECT id, 'recommend', current_date, '{1}' FROM guests`)
      yield* sql.unsafe(`
        INSERT INTO follow_up_tasks (plan_id, guest_id, company_id, task_type, task_day, scheduled_date)
        SELECT p.id, g.id, g.company_id, 'recommend', 1, (now() AT TIME ZONE 'Asia/Shanghai')::date
        FROM follow_up_plans p JOIN guests g ON g.id = p.guest_id`)
      yield* sql.unsafe(`
        INSERT INTO activities (title, address, start_time, end_time, company_id)
        SELECT '活动' || g, '长沙', now() + interval '1 day', now() + interval '2 days', ${firstCompany} + g % 200
        FROM generate_series(1, ${GUESTS / 10}) g`)
      yield* sql.unsafe(`
        INSERT INTO matches (guest_a_id, guest_b_id)
        SELECT a, b FROM (
          SELECT id AS a, lead(id) OVER w AS b, row_number() OVER w AS n FROM guests WINDOW w AS (PARTITION BY company_id ORDER BY id)
        ) pairs
        WHERE b IS NOT NULL AND n % 2 = 1`)
      yield* sql.unsafe("ANALYZE")

      const { baseUrl, credentials } = yield* signedClient(undefined, { scope: [firstCompany + 7] })
      const lists: ReadonlyArray<readonly [string, string, string]> = [
        ["/guests", "", "guests"],
        ["/follow-up/tasks", "", "follow_up_tasks"],
        ["/activities", "", "activities"],
        ["/matches", "", "matches"]
      ]
      const problems: Array<string> = []
      for (const [path, query, table] of lists) {
        captured.length = 0
        capturing = true
        const answer = yield* rawRequest(baseUrl, { path: `/api/open/v1${path}`, query, credentials })
        capturing = false
        expect(answer.status, `${path}: ${answer.text.slice(0, 300)}`).toBe(200)
        expect(answer.json.data.list.length, `${path} lists the company's records`).toBeGreaterThan(0)
        const statements = captured.filter(([text]) => new RegExp(`\\b${table}\\b`, "u").test(text))
        expect(statements.length, `${path} ran a statement on ${table}`).toBeGreaterThan(0)
        for (const [text, params] of statements) {
          const [row] = (yield* sql.unsafe(`EXPLAIN (FORMAT JSON) ${text}`, params)) as unknown as [{ "QUERY PLAN": [{ Plan: PlanNode }] }]
          const nodes = nodesOf(row["QUERY PLAN"][0].Plan)
          const onTable = nodes.filter((n) => n["Relation Name"] === table)
          // An index of the table other than its primary key (walking the whole table by id is no use
          // of the scope), or one of the guests' by company (matches are scoped through their guests).
          const indexed = nodes.some((n) => {
            const index = n["Index Name"] ?? ""
            return n["Node Type"].includes("Index") && index !== `${table}_pkey` &&
              (index.startsWith(table) || index.startsWith("guests_company") || index === "guests_filters_idx")
          })
          const whole = onTable.filter((n) => n["Node Type"] === "Seq Scan")
          if (whole.length > 0 || !indexed) {
            problems.push(
              `${path}: ${whole.length > 0 ? "a Seq Scan" : "no index"} on ${table} in\n${text}\n${
                nodes.map((n) => `${n["Node Type"]} ${n["Relation Name"] ?? ""} ${n["Index Name"] ?? ""}`).join("\n")
              }`
            )
          }
        }
      }
      expect(problems).toEqual([])
    }))
})
