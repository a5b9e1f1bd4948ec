// Company-scoped clients and follow-up tasks (DECISIONS §14): a client bound to one company lists,
// counts, syncs and reads only its companies' tasks; another company's task is 404 for every
// action (dispatch, complete, fail, skip); a recommended guest of another company is 404; a plan
// is made only for a guest of the scope; an unscoped client sees every task as before.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import * as Scopes from "../../src/domain/scope.js"
import { FollowUps } from "../../src/services/FollowUps.js"
import { signedClient, testServerLayer } from "../support/harness.js"

/** Two companies, each with two guests and a plan whose day-1 task is due today; a client bound to the first. */
const world = Effect.gen(function*() {
  const { client: platform } = yield* signedClient()
  const followUps = yield* FollowUps
  const company = (name: string) =>
    Effect.gen(function*() {
      const id = (yield* platform.companies.create({ payload: { name } })).id
      const guest = (yield* platform.guests.create({ payload: { name: `${name}嘉宾`, gender: "female", company_id: id } })).id
      const other = (yield* platform.guests.create({ payload: { name: `${name}男嘉宾`, gender: "male", company_id: id } })).id
      const plan = yield* followUps.createPlan(Scopes.all, { guestId: guest, taskType: "recommend", days: [1], startDate: undefined })
      const tasks = yield* platform.followUps.list({ query: { company_id: id } })
      return { id, guest, other, plan: plan.id, task: tasks.list[0]!.id }
    })
  const a = yield* company("甲随访")
  const b = yield* company("乙随访")
  const { client } = yield* signedClient(undefined, { scope: [a.id] })
  return { platform, client, followUps, a, b }
})

const tagOf = (error: unknown) => (error as { _tag: string })._tag

layer(testServerLayer())("scoped clients: follow-up tasks", (it) => {
  it.effect("a scoped client lists, counts, syncs and reads only its companies' tasks; another's is 404", () =>
    Effect.gen(function*() {
      const { a, b, client, platform } = yield* world
      const page = yield* client.followUps.list({ query: { page_size: 100 } })
      expect(page.list.map((t) => t.id)).toEqual([a.task])
      expect(page.total).toBe(1)
      expect((yield* client.followUps.list({ query: { company_id: b.id } })).total).toBe(0)
      const synced = yield* client.followUps.list({ query: { updated_since: "2000-01-01 00:00:00", page_size: 100 } })
      expect(synced.list.map((t) => t.id)).toEqual([a.task])
      expect((yield* client.followUps.get({ params: { task_id: a.task } })).task.id).toBe(a.task)
      expect(tagOf(yield* Effect.flip(client.followUps.get({ params: { task_id: b.task } })))).toBe("NotFound")
      // The platform's own client sees both.
      expect((yield* platform.followUps.get({ params: { task_id: b.task } })).task.id).toBe(b.task)
    }))

  it.effect("every action on another company's task is 404 and changes nothing; a recommended guest of another company is 404", () =>
    Effect.gen(function*() {
      const { a, b, client, platform } = yield* world
      const task_id = b.task
      expect(tagOf(yield* Effect.flip(client.followUps.dispatch({ params: { task_id } })))).toBe("NotFound")
      expect(tagOf(yield* Effect.flip(client.followUps.complete({ params: { task_id }, payload: {} })))).toBe("NotFound")
      expect(tagOf(yield* Effect.flip(client.followUps.fail({ params: { task_id }, payload: {} })))).toBe("NotFound")
      expect(tagOf(yield* Effect.flip(client.followUps.skip({ params: { task_id }, payload: {} })))).toBe("NotFound")
      expect((yield* platform.followUps.get({ params: { task_id } })).task.status).toBe("pending")
      yield* client.followUps.dispatch({ params: { task_id: a.task } })
      const refused = yield* Effect.flip(
        client.followUps.complete({ params: { task_id: a.task }, payload: { matched_guest_id: b.other } })
      )
      expect(refused).toMatchObject({ _tag: "NotFound", resource: "guest" })
      const done = yield* client.followUps.complete({ params: { task_id: a.task }, payload: { matched_guest_id: a.other } })
      expect(done.status).toBe("completed")
    }))

  it.effect("a plan is made only for a guest of the scope (else 404 guest); plans list only the scope's guests'", () =>
    Effect.gen(function*() {
      const { a, b, followUps } = yield* world
      const scope = Scopes.of([a.id])
      const refused = yield* Effect.flip(
        followUps.createPlan(scope, { guestId: b.guest, taskType: "revisit", days: [2], startDate: undefined })
      )
      expect(refused).toMatchObject({ _tag: "NotFound", resource: "guest" })
      const made = yield* followUps.createPlan(scope, { guestId: a.guest, taskType: "revisit", days: [2], startDate: undefined })
      expect((yield* followUps.listPlans(scope, undefined)).map((p) => p.id).sort()).toEqual([a.plan, made.id].sort())
      expect(yield* followUps.listPlans(scope, b.guest)).toEqual([])
      expect((yield* followUps.listPlans(Scopes.all, b.guest)).map((p) => p.id)).toEqual([b.plan])
    }))
})
