// What the scope tests of companies, activities, matches and memberships share (DECISIONS §14): two
// companies made by the platform's own (unscoped) client, a client scoped to the first, guests of
// either, and a sync read that follows every cursor to the end.
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { signedClient } from "../support/harness.js"

export type Api = Effect.Success<ReturnType<typeof signedClient>>["client"]

const tag = () => Math.random().toString(36).slice(2, 8)

/** Companies `mine` and `theirs`, the unscoped `platform` client and a client scoped to `mine`. */
export const twoCompanies = Effect.gen(function*() {
  const { client: platform } = yield* signedClient()
  const first = yield* platform.companies.create({ payload: { name: `本方婚介${tag()}`, city: "长沙" } })
  const mine = first.id
  const theirs = (yield* platform.companies.create({ payload: { name: `他方婚介${tag()}`, city: "长沙" } })).id
  const { client: scoped } = yield* signedClient(undefined, { scope: [mine] })
  const guest = (company: number, gender: "male" | "female" = "male") =>
    platform.guests.create({ payload: { name: gender === "male" ? "陈强" : "周敏", gender, company_id: company } })
  // Every record a test makes is updated at or after this (platform time): a sync read's start.
  const since = (yield* platform.companies.get({ params: { id: mine } })).created_at
  return { platform, scoped, mine, theirs, guest, since }
})

/** The answer is a 404 not_found of this resource and id: the body a truly unknown id gets. */
export const expectNotFound = (failure: unknown, resource: string, id: number) =>
  expect(failure).toMatchObject({ _tag: "NotFound", resource, message: `${resource} ${id} not found` })

/** Every item of a sync read from `since`, following next_cursor page by page (two a page), and the totals seen. */
export const syncAll = <A extends { readonly id: number }>(
  read: (query: { updated_since: string; page_size: number; cursor?: string }) => Effect.Effect<{
    readonly list: ReadonlyArray<A>
    readonly total: number
    readonly next_cursor: string | null
  }, unknown>,
  since: string
) =>
  Effect.gen(function*() {
    const items: Array<A> = []
    const totals: Array<number> = []
    let cursor: string | undefined
    for (let page = 0; page < 50; page++) {
      const answer = yield* read({ updated_since: since, page_size: 2, ...(cursor !== undefined ? { cursor } : {}) })
      items.push(...answer.list)
      totals.push(answer.total)
      if (answer.next_cursor === null) return { ids: items.map((i) => i.id), totals }
      cursor = answer.next_cursor
    }
    return yield* Effect.die(new Error("sync did not end within 50 pages"))
  })
