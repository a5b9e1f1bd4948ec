// Image blacklist end to end (SPEC §4.6, DECISIONS §4, §8): add with added/skipped/restored and
// per-item errors, check with hit counting, list filters, permanent delete, operator disable.
import { createHash } from "node:crypto"

import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { runAdmin } from "../src/admin/commands.js"
import { signedClient, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const md5 = (s: string) => createHash("md5").update(s).digest("hex")

layer(testServerLayer())("image blacklist", (it) => {
  it.effect("add counts added, skipped and restored; repeats in one call count once; errors carry index, md5 and reason", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const [a, b, c] = [md5("a1"), md5("b1"), md5("c1")]
      const first = yield* client.imageBlacklist.add({
        payload: { items: [{ md5: a.toUpperCase() }, { md5: b, source: "sync", reject_reason: "涉黄" }] }
      })
      expect(first).toEqual({ added: 2, skipped: 0, restored: 0, errors: [] })
      const listed = (yield* client.imageBlacklist.list({ query: { source: "sync" } })).list
      expect(listed.map((r) => r.md5)).toContain(b)
      const rec = (yield* client.imageBlacklist.list({ query: {} })).list.find((r) => r.md5 === a)!
      expect(rec).toMatchObject({ source: "external", status: "active", hit_count: 0 })
      expect(rec.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/)
      expect(Object.keys(rec).sort()).toEqual(["created_at", "hit_count", "id", "md5", "source", "status"])
      yield* runAdmin(["blacklist", "disable", String(rec.id)])
      const second = yield* client.imageBlacklist.add({
        payload: { items: [{ md5: a }, { md5: b }, { md5: c }, { md5: c }, { md5: "xyz" }, { md5: md5("d1"), source: "web" }, "nope"] }
      })
      expect(second).toEqual({
        added: 1,
        skipped: 2,
        restored: 1,
        errors: [
          { index: 4, md5: "xyz", reason: expect.stringContaining("32") },
          { index: 5, md5: md5("d1"), reason: expect.stringContaining("source") },
          { index: 6, md5: null, reason: expect.any(String) }
        ]
      })
      expect((yield* client.imageBlacklist.list({ query: { status: "active" } })).list.find((r) => r.md5 === a)).toBeDefined()
    }))

  it.effect("check lists blocked and allowed, invalid only when some are invalid, and counts hits", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const [x, y, z] = [md5("x2"), md5("y2"), md5("z2")]
      yield* client.imageBlacklist.add({ payload: { items: [{ md5: x }, { md5: z }] } })
      const zRec = (yield* client.imageBlacklist.list({ query: {} })).list.find((r) => r.md5 === z)!
      yield* runAdmin(["blacklist", "disable", String(zRec.id)])
      const clean = yield* client.imageBlacklist.check({ payload: { md5_list: [x, y, z] } })
      expect(clean).toEqual({ blocked: [x], allowed: [y, z] })
      expect(clean).not.toHaveProperty("invalid")
      const withInvalid = yield* client.imageBlacklist.check({ payload: { md5_list: [x.toUpperCase(), "bad"] } })
      expect(withInvalid).toEqual({ blocked: [x], allowed: [], invalid: ["bad"] })
      const rec = (yield* client.imageBlacklist.list({ query: {} })).list.find((r) => r.md5 === x)!
      expect(rec.hit_count).toBe(2)
    }))

  it.effect("more than 1000 items to add or 500 to check is 400 batch_too_large", () =>
    Effect.gen(function*() {
      const { baseUrl, credentials } = yield* signedClient()
      const add = yield* rawRequest(baseUrl, {
        method: "POST",
        path: "/api/open/v1/image-blacklist",
        credentials,
        body: JSON.stringify({ items: Array.from({ length: 1001 }, (_, i) => ({ md5: md5(`n${i}`) })) })
      })
      expect(add.json.data.error).toBe("batch_too_large")
      const check = yield* rawRequest(baseUrl, {
        method: "POST",
        path: "/api/open/v1/image-blacklist/check",
        credentials,
        body: JSON.stringify({ md5_list: Array.from({ length: 501 }, (_, i) => md5(`n${i}`)) })
      })
      expect(check.json.data.error).toBe("batch_too_large")
    }))

  it.effect("a thousand items are added in one call", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const items = Array.from({ length: 1000 }, (_, i) => ({ md5: md5(`bulk${i}`) }))
      expect(yield* client.imageBlacklist.add({ payload: { items } })).toEqual({ added: 1000, skipped: 0, restored: 0, errors: [] })
      expect((yield* client.imageBlacklist.list({ query: { page_size: 20000 } })).list.length).toBeGreaterThanOrEqual(1000)
    }))

  it.effect("delete removes a record permanently; an unknown id is 404 image_blacklist", () =>
    Effect.gen(function*() {
      const { client } = yield* signedClient()
      const m = md5("del3")
      yield* client.imageBlacklist.add({ payload: { items: [{ md5: m }] } })
      const rec = (yield* client.imageBlacklist.list({ query: {} })).list.find((r) => r.md5 === m)!
      yield* client.imageBlacklist.remove({ params: { record_id: rec.id } })
      expect(yield* Effect.flip(client.imageBlacklist.remove({ params: { record_id: rec.id } }))).toMatchObject({
        _tag: "NotFound",
        resource: "image_blacklist"
      })
      expect(yield* client.imageBlacklist.add({ payload: { items: [{ md5: m }] } })).toMatchObject({ added: 1 })
    }))
})
