// Migrations: two processes starting on a new database at once must not collide; a migration file
// runs as its statements, cut where a `;` ends one; rows written under an older schema read as
// they did once a migration converts them.
import { randomBytes } from "node:crypto"

import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"

import { insertRows } from "../src/repos/sqlHelpers.js"
import { migrateDatabase } from "../src/sql/migrateUrl.js"
import { splitSqlStatements } from "../src/sql/splitSql.js"
import { pgClientLayer } from "../src/sql/Sql.js"
import { withDatabase } from "../src/sql/urls.js"
import { databaseAdminUrl } from "./support/cluster.js"
import { createCredentials, fakeCardParser, liveAppLayer, serverLayer, TestServer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

/** An empty database for one test, dropped at the end of its scope; its URL. */
const emptyDatabase = (prefix: string) =>
  Effect.gen(function*() {
    const adminUrl = databaseAdminUrl()
    const name = `${prefix}_${randomBytes(4).toString("hex")}`
    const admin = Context.get(yield* Layer.build(pgClientLayer(Redacted.make(adminUrl), "test-admin")), SqlClient.SqlClient)
    yield* Effect.acquireRelease(
      admin.unsafe(`CREATE DATABASE "${name}" ENCODING 'UTF8' TEMPLATE template0`),
      () => Effect.ignore(admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))
    )
    return withDatabase(adminUrl, name)
  })

it.live("two concurrent migration runs on an empty database apply each migration once", () =>
  Effect.gen(function*() {
    const url = yield* emptyDatabase("mm_migrate")
    const runs = yield* Effect.promise(() => Promise.all([migrateDatabase(url), migrateDatabase(url), migrateDatabase(url)]))
    // One run applied everything; the others found the database current.
    const applied = runs.flat()
    expect(new Set(applied).size).toBe(applied.length)
    expect(runs.filter((r) => r.length > 0)).toHaveLength(1)
    expect(applied[0]).toBe("0001_foundation")
    const db = Context.get(yield* Layer.build(pgClientLayer(Redacted.make(url), "test")), SqlClient.SqlClient)
    const rows = yield* db<{ migration_id: number }>`SELECT migration_id FROM effect_sql_migrations ORDER BY migration_id`
    expect(rows.map((r) => r.migration_id)).toEqual([...new Set(rows.map((r) => r.migration_id))])
    expect(rows.length).toBeGreaterThan(0)
  }), { timeout: 60_000 })

it("a script is cut at the semicolons outside quotes, dollar-quoted bodies and comments", () => {
  const script = `-- a comment; not a statement
CREATE TABLE t (a text DEFAULT 'x;y', "b;c" int);
CREATE FUNCTION f() RETURNS text LANGUAGE plpgsql AS $body$ BEGIN RETURN 'a;b'; END $body$;
/* block; /* nested; */ still a comment; */ SELECT E'it\\'s; fine', $$;$$;
;
-- only a comment at the end;
`
  expect(splitSqlStatements(script)).toEqual([
    "-- a comment; not a statement\nCREATE TABLE t (a text DEFAULT 'x;y', \"b;c\" int)",
    "CREATE FUNCTION f() RETURNS text LANGUAGE plpgsql AS $body$ BEGIN RETURN 'a;b'; END $body$",
    "/* block; /* nested; */ still a comment; */ SELECT E'it\\'s; fine', $$;$$"
  ])
})

it.live(
  "0018 converts the operation log values written as text: a client without masking reads the same text, a masking client an update's phone masked",
  () =>
    Effect.gen(function*() {
      const url = yield* emptyDatabase("mm_logs")
      yield* Effect.promise(() => migrateDatabase(url, 17))
      // Entries as the service wrote them before 0018: an update's values were JSON text.
      const update = {
        from: JSON.stringify({ phone: "13800138000", remark: "旧\n行 \"引号\" \\ 斜杠" }),
        to: JSON.stringify({ phone: "13911112222", remark: null })
      }
      const groupUpdate = { from: JSON.stringify({ name: "旧群", remark: "备注" }), to: JSON.stringify({ name: "新群", remark: null }) }
      const old = Context.get(yield* Layer.build(pgClientLayer(Redacted.make(url), "test")), SqlClient.SqlClient)
      const [account] = yield* old<{ id: number }>`INSERT INTO work_wechats (wechat_number, phone)
        VALUES ('legacy_acct', '13911112222') RETURNING id::int AS id`
      const [group] = yield* old<{ id: number }>`INSERT INTO work_groups (name) VALUES ('新群') RETURNING id::int AS id`
      const entry = (action: string, from: string | null, to: string | null, target: number | null = null) => ({
        action,
        from_value: from,
        to_value: to,
        target_type: target === null ? null : "matchmaker",
        target_id: target,
        operator_id: 0,
        operator_name: "Open API"
      })
      const accountEntries = [
        entry("update", update.from, update.to),
        entry("disable", "active", "disabled"),
        entry("transfer_in", "7", "9", 3),
        entry("associate", null, null, 4)
      ]
      yield* old`INSERT INTO work_wechat_logs ${old.insert(insertRows(accountEntries.map((e) => ({ ...e, work_wechat_id: account!.id }))))}`
      yield* old`INSERT INTO work_group_logs ${
        old.insert({ ...entry("update", groupUpdate.from, groupUpdate.to), work_group_id: group!.id })
      }`
      expect(yield* Effect.promise(() => migrateDatabase(url))).toContain("0018_operation_log_values")

      const database = Layer.orDie(pgClientLayer(Redacted.make(url), "test"))
      yield* Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const plain = yield* createCredentials()
        const masking = yield* createCredentials(undefined, { masking: true })
        const logsOf = (credentials: typeof plain, path: string) =>
          Effect.map(
            rawRequest(baseUrl, { path, credentials }),
            (r) =>
              (r.json.data.list as Array<{ action: string; from_value: string | null; to_value: string | null }>)
                .map((l) => [l.action, l.from_value, l.to_value])
          )
        const accountLogs = `/api/open/v1/work-wechats/${account!.id}/logs`
        const groupLogs = `/api/open/v1/work-groups/${group!.id}/logs`
        // Newest first; every value the very text it was.
        expect(yield* logsOf(plain, accountLogs)).toEqual(accountEntries.map((e) => [e.action, e.from_value, e.to_value]).reverse())
        expect(yield* logsOf(plain, groupLogs)).toEqual([["update", groupUpdate.from, groupUpdate.to]])
        const masked = yield* logsOf(masking, accountLogs)
        expect(masked[3]).toEqual([
          "update",
          JSON.stringify({ phone: "138****8000", remark: "旧\n行 \"引号\" \\ 斜杠" }),
          JSON.stringify({ phone: "139****2222", remark: null })
        ])
        expect(masked.slice(0, 3)).toEqual(accountEntries.slice(1).map((e) => [e.action, e.from_value, e.to_value]).reverse())
      }).pipe(
        Effect.provide(
          serverLayer.pipe(Layer.provideMerge(liveAppLayer({}, fakeCardParser, database)), Layer.provideMerge(FetchHttpClient.layer))
        )
      )
    }),
  { timeout: 60_000 }
)

it.live(
  "0024 moves the events, deliveries and attempts into week partitions: every row as it was, the feed's order, the ids' sequences and the fan-out once per client kept",
  () =>
    Effect.gen(function*() {
      const url = yield* emptyDatabase("mm_partitions")
      yield* Effect.promise(() => migrateDatabase(url, 23))
      const db = Context.get(yield* Layer.build(pgClientLayer(Redacted.make(url), "test")), SqlClient.SqlClient)
      const [client] = yield* db<
        { id: number }
      >`INSERT INTO clients (app_key, name, secret_enc, permissions, webhook_url, webhook_events, webhook_enabled)
        VALUES ('ak_partitions', 'partitions', 'x', '{open:guest:read}', 'https://example.com/hook', '{guest.created}', true)
        RETURNING id::int AS id`
      // One transaction each, so each sorts after the one before in the feed.
      const ages = { before: 90, old: 45, today1: 0, today2: 0 } as const
      for (const [name, days] of Object.entries(ages)) {
        yield* db`INSERT INTO events (event_id, type, permission, data, created_at)
          VALUES (${`evt_${name}`}, 'guest.created', 'open:guest:read', ${JSON.stringify({ name })}::jsonb,
            now() - ${days} * interval '1 day')`
      }
      yield* db`INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, duration_ms, status_code, worker)
        SELECT d.id, 1, now(), 5, 500, 'old' FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.event_id = 'evt_old'`
      const eventsOf = db<{ event_id: string; id: number; tx_id: string; created_at: Date; company_ids: ReadonlyArray<string> }>`
        SELECT event_id, id::int AS id, tx_id::text AS tx_id, created_at, company_ids FROM events ORDER BY tx_id, id`
      const deliveriesOf = db<{ id: number; event: string; client_id: number; status: string }>`
        SELECT d.id::int AS id, e.event_id AS event, d.client_id::int AS client_id, d.status
        FROM webhook_deliveries d JOIN events e ON e.id = d.event_id ORDER BY d.id`
      const events = yield* eventsOf
      const deliveries = yield* deliveriesOf
      expect(deliveries.map((d) => d.event)).toEqual(["evt_before", "evt_old", "evt_today1", "evt_today2"])

      expect(yield* Effect.promise(() => migrateDatabase(url))).toContain("0024_events_partitions")
      expect(yield* eventsOf).toEqual(events)
      expect(yield* deliveriesOf).toEqual(deliveries)
      const placed = yield* db<{ event_id: string; events: string; deliveries: string; attempts: string | null }>`
        SELECT e.event_id, e.tableoid::regclass::text AS events, d.tableoid::regclass::text AS deliveries,
          (SELECT a.tableoid::regclass::text FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.event_created_at = d.event_created_at) AS attempts
        FROM events e JOIN webhook_deliveries d ON d.event_id = e.id AND d.event_created_at = e.created_at ORDER BY e.tx_id`
      // Weeks on the daemon's grid: 7-day multiples from the Unix epoch, named after their first day.
      const WEEK = 7 * 86_400_000
      const week = (ms: number) => new Date(Math.floor(ms / WEEK) * WEEK).toISOString().slice(0, 10).replaceAll("-", "")
      const oldDay = week(events[1]!.created_at.getTime())
      const today = week(events[2]!.created_at.getTime())
      expect(placed).toEqual([
        { event_id: "evt_before", events: "events_p_before", deliveries: "webhook_deliveries_p_before", attempts: null },
        {
          event_id: "evt_old",
          events: `events_p${oldDay}`,
          deliveries: `webhook_deliveries_p${oldDay}`,
          attempts: `webhook_attempts_p${oldDay}`
        },
        { event_id: "evt_today1", events: `events_p${today}`, deliveries: `webhook_deliveries_p${today}`, attempts: null },
        { event_id: "evt_today2", events: `events_p${today}`, deliveries: `webhook_deliveries_p${today}`, attempts: null }
      ])
      // Partitions a week ahead, and a DEFAULT one, for each table.
      const ahead = week(events[2]!.created_at.getTime() + 7 * 86_400_000)
      for (const table of ["events", "webhook_deliveries", "webhook_attempts"]) {
        const names = (yield* db<{ name: string }>`SELECT c.relname::text AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = ${table}::regclass`).map((r) => r.name)
        expect(names).toEqual(expect.arrayContaining([`${table}_default`, `${table}_p${ahead}`]))
      }

      // A new event: an id after the old ones, its delivery once for the client (the fan-out on the partitioned table).
      yield* db`INSERT INTO events (event_id, type, permission, data) VALUES ('evt_new', 'guest.created', 'open:guest:read', '{}'::jsonb)`
      const [fresh] = yield* db<{ id: number; deliveries: number }>`SELECT e.id::int AS id,
          (SELECT count(*)::int FROM webhook_deliveries d WHERE d.event_id = e.id AND d.client_id = ${client!.id}) AS deliveries
        FROM events e WHERE e.event_id = 'evt_new'`
      expect(fresh!.id).toBeGreaterThan(Math.max(...events.map((e) => e.id)))
      expect(fresh!.deliveries).toBe(1)
      const [next] = yield* db<{ id: number }>`SELECT nextval('webhook_deliveries_id_seq')::int AS id`
      expect(next!.id).toBeGreaterThan(Math.max(...deliveries.map((d) => d.id)) + 1)
    }),
  { timeout: 60_000 }
)
