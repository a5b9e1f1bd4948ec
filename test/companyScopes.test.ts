// Company-scoped clients (DECISIONS §14), the foundation: the operator's binding, the platform-wide
// operations and company creation refused with 403 out_of_scope, the events feed and the webhook
// fan-out limited to the client's companies, an unscoped client unchanged. Each area's reads and
// writes are proven by the scope matrix (test/scopeMatrix.test.ts).
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { runAdmin } from "../src/admin/commands.js"
import { fakeCardParser, sharedTestDatabase, signedClient, testServerLayer } from "./support/harness.js"

const shared = sharedTestDatabase({ rateLimitBurst: 1_000_000 })

type Api = Effect.Success<ReturnType<typeof signedClient>>["client"]

/** Two companies made by the platform's own (unscoped) client. */
const twoCompanies = Effect.gen(function*() {
  const { client: platform } = yield* signedClient()
  const a = yield* platform.companies.create({ payload: { name: "甲婚介" } })
  const b = yield* platform.companies.create({ payload: { name: "乙婚介" } })
  return { platform, a: a.id, b: b.id }
})

const feedOf = (client: Api) => Effect.map(client.events.list({ query: { page_size: 200 } }), (page) => page.list)

layer(testServerLayer({ rateLimitBurst: 1_000_000 }, fakeCardParser, shared.database))("company-scoped clients", (it) => {
  it.effect("clients scope binds a client to companies, clients list shows it, --none removes it, unknown companies are 404", () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoCompanies
      const created = (yield* runAdmin(["clients", "create", "--name", "crm", "--permissions", "all"])) as unknown as { app_key: string }
      const bound = (yield* runAdmin(["clients", "scope", created.app_key, "--companies", `${b},${a}`])) as unknown as { scope: unknown }
      expect(bound.scope).toEqual({ companies: [a, b].sort((x, y) => x - y) })
      const listed = (yield* runAdmin(["clients", "list"])) as unknown as Array<{ app_key: string; scope: unknown }>
      expect(listed.find((c) => c.app_key === created.app_key)!.scope).toEqual({ companies: [a, b].sort((x, y) => x - y) })
      const unknown = yield* Effect.flip(runAdmin(["clients", "scope", created.app_key, "--companies", `${a},987654321`]))
      expect((unknown as { message: string }).message).toContain("987654321")
      // Nothing changed by the refused call.
      const again = (yield* runAdmin(["clients", "list"])) as unknown as Array<{ app_key: string; scope: unknown }>
      expect(again.find((c) => c.app_key === created.app_key)!.scope).toEqual({ companies: [a, b].sort((x, y) => x - y) })
      const none = (yield* runAdmin(["clients", "scope", created.app_key, "--none"])) as unknown as { scope: unknown }
      expect(none.scope).toBeNull()
      const usage = yield* Effect.flip(runAdmin(["clients", "scope", created.app_key]))
      expect((usage as { message: string }).message).toContain("--companies")
    }))

  it.effect("the platform-wide resources and company creation answer a scoped client 403 out_of_scope; an unscoped one is served", () =>
    Effect.gen(function*() {
      const { a, platform } = yield* twoCompanies
      const { client } = yield* signedClient(undefined, { scope: [a] })
      for (
        const call of [
          client.workWechats.list({ query: {} }),
          client.workGroups.list({ query: {} }),
          client.imageBlacklist.list({ query: {} }),
          client.companies.create({ payload: { name: "丙婚介" } })
        ] as const
      ) {
        const refused = yield* Effect.flip(call as Effect.Effect<unknown, unknown>)
        expect(refused).toMatchObject({ _tag: "OutOfScope" })
      }
      yield* platform.workWechats.list({ query: {} })
      yield* platform.imageBlacklist.list({ query: {} })
    }))

  it.effect("the events feed lists a scoped client only its companies' events; an event of another company is no cursor", () =>
    Effect.gen(function*() {
      const { a, b, platform } = yield* twoCompanies
      yield* platform.companies.update({ params: { id: a }, payload: { city: "北京" } })
      yield* platform.companies.update({ params: { id: b }, payload: { city: "上海" } })
      const { client } = yield* signedClient(undefined, { scope: [a] })
      const mine = yield* feedOf(client)
      const ids = new Set(mine.map((e) => e.data.id))
      expect(ids.has(a)).toBe(true)
      expect(ids.has(b)).toBe(false)
      expect(mine.every((e) => e.type.startsWith("company.") ? e.data.id === a : true)).toBe(true)
      const everything = yield* feedOf(platform)
      const ofB = everything.find((e) => e.data.id === b)!
      const refused = yield* Effect.flip(client.events.list({ query: { after: ofB.id } }))
      expect(refused).toMatchObject({ _tag: "InvalidInput" })
    }))

  it.effect("the webhook fan-out creates deliveries for a scoped client only of its companies' events", () =>
    Effect.gen(function*() {
      const { a, b, platform } = yield* twoCompanies
      const { client } = yield* signedClient(undefined, { scope: [a] })
      yield* client.selfService.updateWebhook({
        payload: { url: "http://127.0.0.1:9/hook", events: ["company.updated"], enabled: true }
      })
      yield* platform.companies.update({ params: { id: b }, payload: { city: "广州" } })
      yield* platform.companies.update({ params: { id: a }, payload: { city: "深圳" } })
      const deliveries = yield* client.selfService.listDeliveries({ query: { page_size: 100 } })
      // Two updates, one of each company: only company a's reached this client.
      expect(deliveries.list.map((d) => d.type)).toEqual(["company.updated"])
    }))
})
