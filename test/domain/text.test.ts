// The text rules of DECISIONS §1 as pure functions: what the edge refuses in paths, queries and
// JSON bodies, and where it says the problem is.
import { describe, expect, it } from "@effect/vitest"

import {
  decodeUtf8,
  errorMessage,
  jsonTextIssues,
  pathIssues,
  percentDecodeBytes,
  queryIssues,
  textProblem
} from "../../src/domain/text.js"

describe("textProblem", () => {
  const table: ReadonlyArray<readonly [string, string, boolean]> = [
    ["plain Chinese text is fine", "张三 湖南长沙", true],
    ["an emoji (a surrogate pair) is fine", "😀", true],
    ["the empty string is fine", "", true],
    ["U+0000 is refused", "a\u0000b", false],
    ["a lone high surrogate is refused", "a\ud800", false],
    ["a lone low surrogate is refused", "\udc00b", false]
  ]
  for (const [rule, s, ok] of table) it(rule, () => expect(textProblem(s) === undefined).toBe(ok))
})

describe("percent decoding works on bytes", () => {
  const table: ReadonlyArray<readonly [string, string, boolean, ReadonlyArray<number>]> = [
    ["%FF is the byte 0xFF", "%FF", true, [0xff]],
    ["+ is a space in a query", "a+b", true, [0x61, 0x20, 0x62]],
    ["+ stays a plus in a path", "a+b", false, [0x61, 0x2b, 0x62]],
    ["a % without two hex digits is literal", "%zz%", true, [0x25, 0x7a, 0x7a, 0x25]],
    ["raw text is its UTF-8 bytes", "张", true, [0xe5, 0xbc, 0xa0]]
  ]
  for (const [rule, s, plus, bytes] of table) it(rule, () => expect([...percentDecodeBytes(s, plus)]).toEqual(bytes))
  it("decodeUtf8 refuses bytes that are not UTF-8", () => {
    expect(decodeUtf8(new Uint8Array([0xe5, 0xbc, 0xa0]))).toBe("张")
    expect(decodeUtf8(new Uint8Array([0xff]))).toBeUndefined()
    expect(decodeUtf8(new Uint8Array([0xe5, 0xbc]))).toBeUndefined()
  })
})

describe("query and path issues name the parameter", () => {
  const table: ReadonlyArray<readonly [string, string, ReadonlyArray<string>]> = [
    ["valid escapes pass", "keyword=%E5%BC%A0&page=1", []],
    ["%00 names its parameter", "page=1&keyword=%00", ["keyword"]],
    ["%FF names its parameter", "keyword=%FF", ["keyword"]],
    ["a truncated sequence names its parameter", "keyword=%E5%BC", ["keyword"]],
    ["a bad name is reported by its raw text", "%FF=1", ["%FF"]],
    ["a part without = is fine", "flag", []]
  ]
  for (const [rule, q, names] of table) it(rule, () => expect(queryIssues(q).map((i) => i.path)).toEqual(names))
  it("a path segment with %00 or %FF is refused, a valid one passes", () => {
    expect(pathIssues("/api/open/v1/guests/12")).toEqual([])
    expect(pathIssues("/api/open/v1/guests/%E5%BC%A0")).toEqual([])
    expect(pathIssues("/api/open/v1/guests/%00")).toHaveLength(1)
    expect(pathIssues("/api/open/v1/guests/%FF")).toHaveLength(1)
  })
})

describe("jsonTextIssues", () => {
  const nest = (levels: number): unknown => {
    let v: unknown = 1
    for (let i = 0; i < levels; i++) v = [v]
    return v
  }
  it("names the path of a NUL, keys included", () => {
    expect(jsonTextIssues({ a: { b: ["ok", "x\u0000"] } }).map((i) => i.path)).toEqual(["a.b[1]"])
    expect(jsonTextIssues({ "k\u0000": 1 })[0]!.message).toMatch(/field name/)
  })
  it("the body object and 31 nested containers are 32 levels: allowed; one more is refused", () => {
    expect(jsonTextIssues({ a: nest(31) })).toEqual([])
    expect(jsonTextIssues({ a: nest(32) }).map((i) => i.path)).toEqual(["a" + "[0]".repeat(31)])
  })
  it("a value nested 100,000 levels is reported without exhausting the stack", () => {
    expect(jsonTextIssues({ a: nest(100_000) })).toHaveLength(1)
  })
  it("batch items are left to their own decoder for text, but their depth still counts", () => {
    expect(jsonTextIssues({ guests: [{ name: "\u0000" }] }, { skipItemsOf: "guests" })).toEqual([])
    expect(jsonTextIssues({ other: ["\u0000"] }, { skipItemsOf: "guests" })).toHaveLength(1)
    expect(jsonTextIssues({ guests: [nest(40)] }, { skipItemsOf: "guests" })).toHaveLength(1)
  })
  it("a prefix names fields inside a form field", () => {
    expect(jsonTextIssues({ name: "\u0000" }, { prefix: "overrides" }).map((i) => i.path)).toEqual(["overrides.name"])
  })
})

describe("errorMessage", () => {
  it("is an error's message, or the text of a thrown value that is no error", () => {
    expect(errorMessage(new Error("boom"))).toBe("boom")
    expect(errorMessage("plain")).toBe("plain")
    expect(errorMessage(42)).toBe("42")
  })

  it("an error without a message is named by its tag or name, with its cause's message: never an empty reason", () => {
    const serveError = Object.assign(new Error(""), { _tag: "ServeError", cause: new Error("getaddrinfo ENOTFOUND x") })
    expect(errorMessage(serveError)).toBe("ServeError: getaddrinfo ENOTFOUND x")
    expect(errorMessage(new TypeError(""))).toBe("TypeError")
    // A chain of empty messages ends: at the fourth cause its own (empty) message stands.
    const loop: Error & { cause?: unknown } = new Error("")
    loop.cause = loop
    expect(errorMessage(loop)).toBe("Error: Error: Error: Error: ")
  })
})
