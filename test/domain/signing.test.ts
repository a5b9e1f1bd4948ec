// The signer reproduces every case of the shared signing vectors (DECISIONS §2).
import { describe, expect, it } from "@effect/vitest"

import { md5Hex, sign, sortedQuery, stringToSign } from "../../src/domain/signing.js"
import vectors from "../fixtures/signing-vectors.json" with { type: "json" }

describe("signing vectors", () => {
  for (const c of vectors.cases) {
    it(`reproduces the vector: ${c.description}`, () => {
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
      expect(md5Hex(body)).toBe(c.body_md5)
      expect(stringToSign(input)).toBe(c.string_to_sign)
      expect(sign(vectors.app_secret, input)).toBe(c.signature)
    })
  }
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
