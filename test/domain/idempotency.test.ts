// The rules of safe retries (DECISIONS §11) as pure functions: which keys are valid, what makes
// two requests the same, and what a repeat gets given what is kept.
import { describe, expect, it } from "@effect/vitest"

import {
  decideRepeat,
  inProgressRetryAfter,
  isKept,
  isValidIdempotencyKey,
  type KeptRequest,
  requestFingerprint
} from "../../src/domain/idempotency.js"

describe("Idempotency-Key values", () => {
  const table: ReadonlyArray<readonly [string, string, boolean]> = [
    ["a UUID is valid", "6f1c2d3e-0000-4000-8000-000000000001", true],
    ["one character is valid", "x", true],
    ["255 printable characters are valid", "~".repeat(255), true],
    ["spaces and punctuation are printable", "order 42: retry #1", true],
    ["the empty key is refused", "", false],
    ["256 characters are refused", "a".repeat(256), false],
    ["a control character is refused", "a\tb", false],
    ["non-ASCII text is refused", "订单1", false],
    ["DEL is refused", "a\x7f", false]
  ]
  for (const [rule, key, valid] of table) it(rule, () => expect(isValidIdempotencyKey(key)).toBe(valid))
})

describe("request fingerprint", () => {
  const base = { method: "post", path: "/api/open/v1/guests/batch", sortedQuery: "", bodyMd5: "d41d8cd98f00b204e9800998ecf8427e" }
  it("is the same for the same method, path, sorted query and body", () =>
    expect(requestFingerprint(base)).toBe(requestFingerprint({ ...base, method: "POST" })))
  it("differs when the path, the query or the body differs", () => {
    expect(requestFingerprint({ ...base, path: "/api/open/v1/guests" })).not.toBe(requestFingerprint(base))
    expect(requestFingerprint({ ...base, sortedQuery: "a=1" })).not.toBe(requestFingerprint(base))
    expect(requestFingerprint({ ...base, bodyMd5: "0".repeat(32) })).not.toBe(requestFingerprint(base))
  })
})

describe("what a repeat gets", () => {
  const done: KeptRequest = { fingerprint: "f", status: 200, body: new Uint8Array([1, 2]), contentType: "application/json" }
  const table: ReadonlyArray<readonly [string, KeptRequest, string, unknown]> = [
    ["another request under the key is reused", done, "g", { _tag: "Reused" }],
    ["the same request after the answer is a replay of it", done, "f", {
      _tag: "Replay",
      status: 200,
      body: new Uint8Array([1, 2]),
      contentType: "application/json"
    }],
    ["a kept 4xx is replayed like any answer", { ...done, status: 404 }, "f", {
      _tag: "Replay",
      status: 404,
      body: new Uint8Array([1, 2]),
      contentType: "application/json"
    }]
  ]
  for (const [rule, kept, fingerprint, expected] of table) it(rule, () => expect(decideRepeat(kept, fingerprint)).toEqual(expected))
  it("a success and a 4xx are kept; a 5xx is not, nor a 403 or 429 (a refusal of who or when, not of the request)", () => {
    expect([200, 400, 404, 409, 413, 415, 422].every(isKept)).toBe(true)
    expect([403, 429, 500, 503].some(isKept)).toBe(false)
  })
  const retryAfter: ReadonlyArray<readonly [string, number, number]> = [
    ["Retry-After after waiting 5 s for the first attempt is 5 s", 5, 5],
    ["Retry-After is rounded up", 2.2, 3],
    ["Retry-After is at least one second", 0.1, 1],
    ["Retry-After is at most ten seconds", 60, 10]
  ]
  for (const [rule, waited, expected] of retryAfter) it(rule, () => expect(inProgressRetryAfter(waited)).toBe(expected))
})
