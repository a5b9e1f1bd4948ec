// The Signer layer's contract: it reproduces every case of the shared signing vectors
// (DECISIONS §2), accepts exactly its own signatures, and signs webhooks as Standard Webhooks does.
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Webhook } from "standardwebhooks"

import { Signer } from "../../src/auth/Signer.js"
import { pathOf, sortedQuery, splitUrl } from "../../src/domain/signing.js"
import vectors from "../fixtures/signing-vectors.json" with { type: "json" }

layer(Signer.layer)("Signer: signing vectors", (it) => {
  for (const c of vectors.cases) {
    it.effect(`reproduces the vector: ${c.description}`, () =>
      Effect.gen(function*() {
        const signer = yield* Signer
        const body = new Uint8Array(Buffer.from(c.body_base64, "base64"))
        const input = {
          method: c.method,
          path: c.path,
          rawQuery: c.raw_query,
          appKey: vectors.app_key,
          timestamp: String(vectors.timestamp),
          nonce: c.nonce,
          body
        }
        expect(sortedQuery(c.raw_query)).toBe(c.sorted_query)
        expect(signer.bodyMd5(body)).toBe(c.body_md5)
        expect(signer.canonical(input)).toBe(c.string_to_sign)
        expect(signer.sign(vectors.app_secret, input)).toBe(c.signature)
        expect(signer.verify(vectors.app_secret, c.string_to_sign, c.signature)).toBe(true)
        expect(signer.verify(vectors.app_secret, c.string_to_sign, c.signature.toUpperCase())).toBe(true)
      }))
  }

  it.effect("verify refuses another secret, another string, a truncated or non-hex signature", () =>
    Effect.gen(function*() {
      const signer = yield* Signer
      const c = vectors.cases[0]!
      expect(signer.verify(`${vectors.app_secret}x`, c.string_to_sign, c.signature)).toBe(false)
      expect(signer.verify(vectors.app_secret, `${c.string_to_sign}\n`, c.signature)).toBe(false)
      expect(signer.verify(vectors.app_secret, c.string_to_sign, c.signature.slice(0, -1))).toBe(false)
      expect(signer.verify(vectors.app_secret, c.string_to_sign, "zz" + c.signature.slice(2))).toBe(false)
      expect(signer.verify(vectors.app_secret, c.string_to_sign, "")).toBe(false)
    }))

  it.effect("webhook signatures verify with the standardwebhooks library, one per secret during a rotation", () =>
    Effect.gen(function*() {
      const signer = yield* Signer
      const current = `whsec_${Buffer.from("current-secret-0123456789abcdef").toString("base64")}`
      const previous = `whsec_${Buffer.from("previous-secret-0123456789abcde").toString("base64")}`
      const body = JSON.stringify({ id: "evt_1", type: "guest.created", data: { 名字: "张三" } })
      const timestamp = Math.floor(Date.now() / 1000)
      const header = signer.webhookSignature([current, previous], "evt_1", timestamp, body)
      expect(header.split(" ")).toHaveLength(2)
      const headers = { "webhook-id": "evt_1", "webhook-timestamp": String(timestamp), "webhook-signature": header }
      for (const secret of [current, previous]) expect(new Webhook(secret).verify(body, headers)).toBeTruthy()
      const other = `whsec_${Buffer.from("some-other-secret-0123456789abc").toString("base64")}`
      expect(() => new Webhook(other).verify(body, headers)).toThrow()
    }))
})

describe("sorted_query", () => {
  const table: ReadonlyArray<readonly [string, string, string]> = [
    ["empty query is an empty line", "", ""],
    ["a part without = has the empty value", "flag", "flag="],
    ["repeated names keep every pair, sorted by value", "a=2&a=1&a=10", "a=1&a=10&a=2"],
    ["+ decodes to a space, re-encoded as %20", "q=a+b", "q=a%20b"],
    ["lower-case escapes are re-encoded upper-case", "q=%e5%bc%a0", "q=%E5%BC%A0"],
    ["unreserved characters stay", "q=A-z_0.9~", "q=A-z_0.9~"],
    ["reserved characters are escaped", "q=!'()*", "q=%21%27%28%29%2A"],
    ["= inside a value is kept in the value", "q=a=b", "q=a%3Db"],
    ["empty parts between & are skipped", "a=1&&b=2", "a=1&b=2"],
    ["a byte escape that is not UTF-8 stays that byte", "keyword=%FF", "keyword=%FF"],
    ["a % without two hex digits is a literal %", "q=100%&r=%zz", "q=100%25&r=%25zz"],
    ["a truncated UTF-8 sequence keeps its bytes", "x=%e4%b8", "x=%E4%B8"],
    ["raw non-ASCII text is encoded as its UTF-8 bytes", "q=张", "q=%E5%BC%A0"]
  ]
  for (const [rule, raw, expected] of table) {
    it(rule, () => expect(sortedQuery(raw)).toBe(expected))
  }
})

describe("a request target's path", () => {
  it.each([
    ["/api/open/v1/guests", "/api/open/v1/guests"],
    ["/api/open/v1/guests?page=2", "/api/open/v1/guests"],
    ["/a?b?c", "/a"],
    ["/?", "/"],
    ["", ""]
  ])("pathOf(%j) is %j, as splitUrl's path", (url, path) => {
    expect(pathOf(url)).toBe(path)
    expect(splitUrl(url).path).toBe(path)
  })
})
