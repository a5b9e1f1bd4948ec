// Company-scoped clients and guests (DECISIONS §14): a client bound to one company reads only its
// guests (get, list, totals, sync with updated_since and cursor, card tasks), a write naming another
// company is 403 out_of_scope, one referring to another company's guest or matchmaker is 404 as if
// unknown, batch items fail alone; an unscoped client sees every company as before.
import { readFileSync } from "node:fs"

import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { cardForm, uniqueImage } from "../support/forms.js"
import { fakeCardParser, sharedTestDatabase, signedClient, testServerLayer } from "../support/harness.js"

const shared = sharedTestDatabase({ rateLimitBurst: 1_000_000 })
const PNG = new Uint8Array(readFileSync(new URL("../fixtures/cards/card-clean.png", import.meta.url)))
/** A distinct valid PNG per call. */
const uniquePng = () => uniqueImage(PNG)

/** Two companies, each with a matchmaker and two guests, an independent matchmaker, and a client bound to the first. */
const world = Effect.gen(function*() {
  const { client: platform } = yield* signedClient()
  const a = (yield* platform.companies.create({ payload: { name: "甲婚介" } })).id
  const b = (yield* platform.companies.create({ payload: { name: "乙婚介" } })).id
  const ma = (yield* platform.matchmakers.create({ payload: { name: "甲红娘", company_id: a } })).id
  const mb = (yield* platform.matchmakers.create({ payload: { name: "乙红娘", company_id: b } })).id
  const lone = (yield* platform.matchmakers.create({ payload: { name: "独立红娘" } })).id
  const guest = (company: number, matchmaker: number, name: string) =>
    Effect.map(
      platform.guests.create({ payload: { name, gender: "female", company_id: company, matchmaker_id: matchmaker } }),
      (g) => g.id
    )
  const ga = [yield* guest(a, ma, "甲一"), yield* guest(a, ma, "甲二")]
  const gb = [yield* guest(b, mb, "乙一"), yield* guest(b, mb, "乙二")]
  const { client } = yield* signedClient(undefined, { scope: [a] })
  return { platform, client, a, b, ma, mb, lone, ga, gb }
})

const reasonOf = (error: unknown) => (error as { _tag: string })._tag

layer(testServerLayer({ rateLimitBurst: 1_000_000 }, fakeCardParser, shared.database))("scoped clients: guests", (it) => {
  it.effect("a scoped client reads its companies' guests; another company's guest is 404 and absent from lists and totals", () =>
    Effect.gen(function*() {
      const { a, b, client, ga, gb, platform } = yield* world
      expect((yield* client.guests.get({ params: { id: ga[0]! } })).company_id).toBe(a)
      const refused = yield* Effect.flip(client.guests.get({ params: { id: gb[0]! } }))
      expect(reasonOf(refused)).toBe("NotFound")
      const mine = yield* client.guests.list({ query: { page_size: 100 } })
      expect(mine.list.every((g) => g.company_id === a)).toBe(true)
      expect(mine.list.map((g) => g.id).sort()).toEqual([...ga].sort())
      expect(mine.total).toBe(2)
      // The filters the unscoped list counts from its counters count exactly within the scope.
      expect((yield* client.guests.list({ query: { company_id: b } })).total).toBe(0)
      expect((yield* client.guests.list({ query: { gender: "female", page_size: 1 } })).total).toBe(2)
      expect((yield* client.guests.list({ query: { keyword: "乙" } })).total).toBe(0)
      // The platform's own client still sees both companies.
      expect((yield* platform.guests.get({ params: { id: gb[0]! } })).company_id).toBe(b)
      expect((yield* platform.guests.list({ query: { company_id: b } })).total).toBe(2)
    }))

  it.effect("sync with updated_since and cursor pages through the scope's guests only", () =>
    Effect.gen(function*() {
      const { client, ga } = yield* world
      const seen: Array<number> = []
      let cursor: string | undefined
      do {
        const page = yield* client.guests.list({
          query: { updated_since: "2000-01-01 00:00:00", page_size: 1, ...(cursor !== undefined ? { cursor } : {}) }
        })
        seen.push(...page.list.map((g) => g.id))
        cursor = page.next_cursor ?? undefined
      } while (cursor !== undefined)
      expect(seen).toEqual(ga)
    }))

  it.effect("writes: a named company outside the scope is 403 out_of_scope, another company's guest or matchmaker 404", () =>
    Effect.gen(function*() {
      const { a, b, client, ga, gb, lone, ma, mb, platform } = yield* world
      const create = (company_id: number, matchmaker_id?: number) =>
        Effect.flip(
          client.guests.create({ payload: { name: "新", gender: "male", company_id, ...(matchmaker_id ? { matchmaker_id } : {}) } })
        )
      expect(reasonOf(yield* create(b))).toBe("OutOfScope")
      expect(reasonOf(yield* create(a, mb))).toBe("NotFound")
      expect(reasonOf(yield* create(a, lone))).toBe("NotFound")
      expect((yield* client.guests.create({ payload: { name: "新", gender: "male", company_id: a, matchmaker_id: ma } })).id)
        .toBeGreaterThan(0)
      expect(reasonOf(yield* Effect.flip(client.guests.update({ params: { id: gb[0]! }, payload: { age: 30 } })))).toBe("NotFound")
      expect(reasonOf(yield* Effect.flip(client.guests.update({ params: { id: ga[0]! }, payload: { company_id: b } })))).toBe(
        "OutOfScope"
      )
      expect(reasonOf(yield* Effect.flip(client.guests.update({ params: { id: ga[0]! }, payload: { matchmaker_id: mb } })))).toBe(
        "NotFound"
      )
      // Nothing of the other company changed, and the platform may still move a guest anywhere.
      expect((yield* platform.guests.get({ params: { id: gb[0]! } })).age).toBeNull()
      yield* platform.guests.update({ params: { id: gb[1]! }, payload: { company_id: a } })
      expect((yield* client.guests.get({ params: { id: gb[1]! } })).company_id).toBe(a)
    }))

  it.effect("batch items fail alone: another company is out_of_scope, its guests and matchmakers not_found", () =>
    Effect.gen(function*() {
      const { a, b, client, ga, gb, mb } = yield* world
      const created = yield* client.guests.batchCreate({
        payload: {
          guests: [
            { name: "批一", gender: "male", company_id: a },
            { name: "批二", gender: "male", company_id: b },
            { name: "批三", gender: "male", company_id: a, matchmaker_id: mb }
          ]
        }
      })
      expect(created.results.map((r) => [r.status, "error" in r ? r.error : undefined])).toEqual([
        ["success", undefined],
        ["failure", "out_of_scope"],
        ["failure", "not_found"]
      ])
      const updated = yield* client.guests.batchUpdate({
        payload: { guests: [{ id: ga[0]!, age: 31 }, { id: gb[0]!, age: 31 }, { id: ga[1]!, company_id: b }] }
      })
      expect(updated.results.map((r) => [r.status, "error" in r ? r.error : undefined])).toEqual([
        ["success", undefined],
        ["failure", "not_found"],
        ["failure", "out_of_scope"]
      ])
    }))

  it.effect("card import: another company's matchmaker is 404, a company outside the scope 403, tasks of other companies 404", () =>
    Effect.gen(function*() {
      const { b, client, ma, mb, platform } = yield* world
      const refusedParse = yield* Effect.flip(client.guests.parseCard({ payload: cardForm(uniquePng(), { matchmaker_id: String(mb) }) }))
      expect(reasonOf(refusedParse)).toBe("NotFound")
      yield* client.guests.parseCard({ payload: cardForm(uniquePng(), {}) })
      const fromCard = (fields: Record<string, string>) => client.guests.createFromCard({ payload: cardForm(uniquePng(), fields) })
      expect(reasonOf(yield* Effect.flip(fromCard({ matchmaker_id: String(mb) })))).toBe("NotFound")
      expect(reasonOf(yield* Effect.flip(fromCard({ matchmaker_id: String(ma), company_id: String(b) })))).toBe("OutOfScope")
      // Without company_id the guest goes to the matchmaker's company, which is in the scope.
      const mine = (yield* fromCard({ matchmaker_id: String(ma) })) as { task_id: string }
      expect((yield* client.guests.cardTask({ params: { task_id: mine.task_id } })).task_id).toBe(mine.task_id)
      const theirs = (yield* platform.guests.createFromCard({ payload: cardForm(uniquePng(), { matchmaker_id: String(mb) }) })) as {
        task_id: string
      }
      expect(reasonOf(yield* Effect.flip(client.guests.cardTask({ params: { task_id: theirs.task_id } })))).toBe("NotFound")
      expect((yield* platform.guests.cardTask({ params: { task_id: theirs.task_id } })).task_id).toBe(theirs.task_id)
    }))
})
