// Matches end to end (SPEC §4.9; DECISIONS §5, §6, §9): create with defaults and score, one open
// match per pair, status moves, list filters, events, and the matchmakers' match_count and
// success_rate kept exact under concurrent writes.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

import type { GuestCreate } from "../schema/Guests.js"
import { signedClient, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

type Client = Effect.Success<ReturnType<typeof signedClient>>["client"]

const setup = (client: Client) =>
  Effect.gen(function*() {
    const company = yield* client.companies.create({ payload: { name: `配对婚介${Math.random().toString(36).slice(2, 8)}` } })
    const matchmaker = (name: string) => client.matchmakers.create({ payload: { name, company_id: company.id } })
    const guest = (gender: "male" | "female", extra: Partial<GuestCreate> = {}) =>
      client.guests.create({ payload: { name: gender === "male" ? "陈强" : "周敏", gender, company_id: company.id, ...extra } })
    return { company, matchmaker, guest }
  })

// A generous burst: the concurrency tests send more calls at once than the default bucket holds.
layer(testServerLayer({ rateLimitBurst: 1_000_000 }))("matches", (it) => {
  it.effect("create answers id, status pending and created_at; matchmakers default to each guest's; the score is computed", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { guest, matchmaker } = yield* setup(client)
      const m1 = yield* matchmaker("红娘甲")
      const m2 = yield* matchmaker("红娘乙")
      // He meets her age filter; she wants 180 cm and he is 175: one direction met, one not → 50.
      const he = yield* guest("male", { age: 30, height: 175, req_age_min: 25, matchmaker_id: m1.id })
      const she = yield* guest("female", { age: 28, req_height_min: 180, matchmaker_id: m2.id })
      const created = yield* client.matches.create({ payload: { guest_a_id: he.id, guest_b_id: she.id } })
      expect(Object.keys(created).sort()).toEqual(["created_at", "id", "status"])
      expect(created.status).toBe("pending")
      const page = yield* client.matches.list({ query: { guest_id: he.id } })
      expect(page.list).toEqual([{
        id: created.id,
        guest_a_id: he.id,
        guest_b_id: she.id,
        guest_a_matchmaker_id: m1.id,
        guest_b_matchmaker_id: m2.id,
        match_score: 50,
        status: "pending",
        created_at: created.created_at,
        updated_at: created.created_at
      }])
      // Sent matchmakers win over the guests' own. Her age is unknown to his age filter: ½ one way, 1 the other → 75.
      const other = yield* guest("female")
      const m3 = yield* matchmaker("红娘丙")
      const explicit = yield* client.matches.create({
        payload: { guest_a_id: he.id, guest_b_id: other.id, guest_b_matchmaker_id: m3.id }
      })
      const [read] = (yield* client.matches.list({ query: { guest_id: other.id } })).list
      expect(read).toMatchObject({ id: explicit.id, guest_a_matchmaker_id: m1.id, guest_b_matchmaker_id: m3.id, match_score: 75 })
    }))

  it.effect("two different existing guests: the same guest is 400, unknown guests and matchmakers 404", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { guest } = yield* setup(client)
      const g = yield* guest("male")
      const same = yield* Effect.flip(client.matches.create({ payload: { guest_a_id: g.id, guest_b_id: g.id } }))
      expect(same).toMatchObject({ _tag: "InvalidInput", issues: [{ path: "guest_b_id" }] })
      expect(yield* Effect.flip(client.matches.create({ payload: { guest_a_id: g.id, guest_b_id: 2_000_000 } }))).toMatchObject({
        _tag: "NotFound",
        resource: "guest"
      })
      const h = yield* guest("female")
      expect(
        yield* Effect.flip(client.matches.create({ payload: { guest_a_id: g.id, guest_b_id: h.id, guest_a_matchmaker_id: 2_000_000 } }))
      ).toMatchObject({ _tag: "NotFound", resource: "matchmaker" })
    }))

  it.effect("a second open match of a pair, in either order, is 400 match_exists; after a final state a new one may start", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { guest } = yield* setup(client)
      const a = yield* guest("male")
      const b = yield* guest("female")
      const first = yield* client.matches.create({ payload: { guest_a_id: a.id, guest_b_id: b.id } })
      expect(yield* Effect.flip(client.matches.create({ payload: { guest_a_id: a.id, guest_b_id: b.id } }))).toMatchObject({
        _tag: "MatchExists"
      })
      expect(yield* Effect.flip(client.matches.create({ payload: { guest_a_id: b.id, guest_b_id: a.id } }))).toMatchObject({
        _tag: "MatchExists"
      })
      yield* client.matches.updateStatus({ params: { id: first.id }, payload: { status: "pending_date" } })
      expect(yield* Effect.flip(client.matches.create({ payload: { guest_a_id: b.id, guest_b_id: a.id } }))).toMatchObject({
        _tag: "MatchExists"
      })
      yield* client.matches.updateStatus({ params: { id: first.id }, payload: { status: "closed" } })
      const again = yield* client.matches.create({ payload: { guest_a_id: b.id, guest_b_id: a.id } })
      expect(again.id).toBeGreaterThan(first.id)
    }))

  it.effect("a concurrent burst on one pair creates one match", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { guest } = yield* setup(client)
      const a = yield* guest("male")
      const b = yield* guest("female")
      const outcomes = yield* Effect.all(
        Array.from({ length: 12 }, (_, i) =>
          client.matches.create({ payload: i % 2 === 0 ? { guest_a_id: a.id, guest_b_id: b.id } : { guest_a_id: b.id, guest_b_id: a.id } })
            .pipe(
              Effect.as("created"),
              Effect.catchTag("MatchExists", () =>
                Effect.succeed("match_exists"))
            )),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter((o) =>
        o === "created"
      )).toHaveLength(1)
      expect(outcomes.filter((o) => o === "match_exists")).toHaveLength(11)
    }))

  it.effect("status moves follow the allowed transitions; the same status again is a 200 no-op; others are 400 invalid_transition", () =>
    Effect.gen(function*() {
      const { baseUrl, client, credentials } = yield* signedClient()
      const { guest } = yield* setup(client)
      const m = yield* client.matches.create({
        payload: { guest_a_id: (yield* guest("male")).id, guest_b_id: (yield* guest("female")).id }
      })
      const set = (status: "pending_date" | "dating" | "completed" | "rejected" | "closed") =>
        client.matches.updateStatus({ params: { id: m.id }, payload: { status } })
      expect(yield* Effect.flip(set("dating"))).toMatchObject({ _tag: "InvalidTransition" })
      const moved = yield* set("pending_date")
      expect(Object.keys(moved).sort()).toEqual(["id", "status", "updated_at"])
      expect(moved).toMatchObject({ id: m.id, status: "pending_date" })
      const sql = yield* SqlClient.SqlClient
      const events = () =>
        sql<{ type: string; permission: string; data: { id: number; status: string } }>`
          SELECT type, permission, data FROM events WHERE type LIKE 'match.%' AND (data->>'id')::int = ${m.id} ORDER BY id`
      expect((yield* events()).length).toBe(2)
      // The same status again: nothing changes, no event.
      const again = yield* set("pending_date")
      expect(again).toEqual(moved)
      expect((yield* events()).length).toBe(2)
      yield* set("dating")
      yield* set("completed")
      expect(yield* Effect.flip(set("closed"))).toMatchObject({ _tag: "InvalidTransition" })
      const recorded = yield* events()
      expect(recorded.map((e) => e.type)).toEqual(["match.created", "match.status_changed", "match.status_changed", "match.status_changed"])
      expect(recorded.every((e) => e.permission === "open:match:read")).toBe(true)
      expect(recorded[3]!.data).toMatchObject({ id: m.id, status: "completed" })
      // pending cannot be set; an unknown id is 404.
      const pending = yield* rawRequest(baseUrl, {
        method: "PUT",
        path: `/api/open/v1/matches/${m.id}/status`,
        body: JSON.stringify({ status: "pending" }),
        credentials
      })
      expect(pending.status).toBe(400)
      expect(yield* Effect.flip(client.matches.updateStatus({ params: { id: 2_000_000 }, payload: { status: "closed" } }))).toMatchObject({
        _tag: "NotFound",
        resource: "match"
      })
    }))

  it.effect("the list filters by guest on either side, status, company of either guest and created_at dates; newest first", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const one = yield* setup(client)
      const two = yield* setup(client)
      const a = yield* one.guest("male")
      const b = yield* one.guest("female")
      const c = yield* two.guest("female")
      const ab = yield* client.matches.create({ payload: { guest_a_id: a.id, guest_b_id: b.id } })
      const ca = yield* client.matches.create({ payload: { guest_a_id: c.id, guest_b_id: a.id } })
      yield* client.matches.updateStatus({ params: { id: ca.id }, payload: { status: "rejected" } })
      const ids = (params: Parameters<Client["matches"]["list"]>[0]["query"]) =>
        Effect.map(client.matches.list({ query: params }), (p) => p.list.map((m) => m.id))
      expect(yield* ids({ guest_id: a.id })).toEqual([ca.id, ab.id])
      expect(yield* ids({ guest_id: b.id })).toEqual([ab.id])
      expect(yield* ids({ guest_id: a.id, status: "rejected" })).toEqual([ca.id])
      expect(yield* ids({ company_id: one.company.id })).toEqual([ca.id, ab.id])
      expect(yield* ids({ company_id: two.company.id })).toEqual([ca.id])
      expect(yield* ids({ company_id: 2_000_000 })).toEqual([])
      // created_at bounds are whole days in the platform time zone (Asia/Shanghai), both inclusive.
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE matches SET created_at = '2030-03-01 23:59:59.9+08' WHERE id = ${ab.id}`
      yield* sql`UPDATE matches SET created_at = '2030-03-02 00:00:00+08' WHERE id = ${ca.id}`
      expect(yield* ids({ guest_id: a.id, start_date: "2030-03-01", end_date: "2030-03-01" })).toEqual([ab.id])
      expect(yield* ids({ guest_id: a.id, start_date: "2030-03-02" })).toEqual([ca.id])
      expect(yield* ids({ guest_id: a.id, end_date: "2030-03-02" })).toEqual([ca.id, ab.id])
      expect(yield* ids({ guest_id: a.id, start_date: "2030-03-03" })).toEqual([])
      const page = yield* client.matches.list({ query: { guest_id: a.id, page: 2, page_size: 1 } })
      expect(page).toMatchObject({ total: 2, list: [{ id: ab.id }] })
    }))

  it.effect("matchmaker match_count counts matches on either side (once per match), success_rate the completed share", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { guest, matchmaker } = yield* setup(client)
      const m1 = yield* matchmaker("计数红娘一")
      const m2 = yield* matchmaker("计数红娘二")
      const a = yield* guest("male", { matchmaker_id: m1.id })
      const b = yield* guest("female", { matchmaker_id: m2.id })
      const c = yield* guest("female", { matchmaker_id: m1.id })
      const ab = yield* client.matches.create({ payload: { guest_a_id: a.id, guest_b_id: b.id } })
      yield* client.matches.create({ payload: { guest_a_id: a.id, guest_b_id: c.id } })
      for (const status of ["pending_date", "dating", "completed"] as const) {
        yield* client.matches.updateStatus({ params: { id: ab.id }, payload: { status } })
      }
      const one = yield* client.matchmakers.get({ params: { id: m1.id } })
      const two = yield* client.matchmakers.get({ params: { id: m2.id } })
      expect(one).toMatchObject({ match_count: 2, success_rate: 0.5 })
      expect(two).toMatchObject({ match_count: 1, success_rate: 1 })
    }))

  it.effect("match_count and success_rate stay exact under concurrent match creations and status changes", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const { guest, matchmaker } = yield* setup(client)
      const makers = yield* Effect.all([matchmaker("并发一"), matchmaker("并发二"), matchmaker("并发三")])
      const men = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) => guest("male", { matchmaker_id: makers[i % 3]!.id })),
        { concurrency: 4 }
      )
      const women = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) => guest("female", { matchmaker_id: makers[(i + 1) % 3]!.id })),
        { concurrency: 4 }
      )
      // 32 matches created at once, each then walked to completed or rejected by its own fiber.
      const pairs = men.flatMap((m, i) =>
        [women[i]!, women[(i + 3) % 8]!, women[(i + 5) % 8]!, women[(i + 6) % 8]!].map((w) => [m, w] as const)
      )
      yield* Effect.all(
        pairs.map(([m, w], i) =>
          Effect.gen(function*() {
            const created = yield* client.matches.create({ payload: { guest_a_id: m.id, guest_b_id: w.id } })
            const params = { id: created.id }
            if (i % 3 === 0) return yield* client.matches.updateStatus({ params, payload: { status: "rejected" } })
            yield* client.matches.updateStatus({ params, payload: { status: "pending_date" } })
            yield* client.matches.updateStatus({ params, payload: { status: "dating" } })
            return yield* client.matches.updateStatus({ params, payload: { status: "completed" } })
          })
        ),
        { concurrency: "unbounded" }
      )
      const sql = yield* SqlClient.SqlClient
      for (const maker of makers) {
        const [expected] = yield* sql<{ total: number; completed: number }>`
          SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'completed')::int AS completed FROM matches
          WHERE guest_a_matchmaker_id = ${maker.id} OR guest_b_matchmaker_id = ${maker.id}`
        const read = yield* client.matchmakers.get({ params: { id: maker.id } })
        expect(expected!.total).toBeGreaterThan(0)
        expect(read.match_count).toBe(expected!.total)
        expect(read.success_rate).toBeCloseTo(expected!.completed / expected!.total, 4)
      }
    }), { timeout: 60_000 })

  it.effect("reads need open:match:read, writes open:match:write", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient(["open:match:read"])
      yield* client.matches.list({ query: {} })
      expect(yield* Effect.flip(client.matches.create({ payload: { guest_a_id: 1, guest_b_id: 2 } }))).toMatchObject({
        _tag: "Forbidden",
        required: "open:match:write"
      })
    }))
})
