// Validation issues are reported once per path, with union failures folded into one message.
import { describe, expect, it } from "@effect/vitest"

import { mergeIssues } from "../../src/domain/issues.js"

describe("mergeIssues", () => {
  it("folds a literal union into one 'Expected a | b' message", () => {
    expect(mergeIssues([
      { path: "level", message: "Expected \"normal\", actual \"x\"" },
      { path: "level", message: "Expected \"gold\", actual \"x\"" }
    ])).toEqual([{ path: "level", message: "Expected \"normal\" | \"gold\", actual \"x\"" }])
  })
  it("drops the null branch of a nullable field", () => {
    expect(mergeIssues([
      { path: "phone", message: "must be exactly 11 digits" },
      { path: "phone", message: "Expected null, actual \"1\"" }
    ])).toEqual([{ path: "phone", message: "must be exactly 11 digits" }])
  })
  it("drops the null branch of a nullable object when issues inside it say what is wrong", () => {
    expect(mergeIssues([
      { path: "tags", message: "Expected null, actual {}" },
      { path: "tags.age_min", message: "Expected number, actual \"x\"" },
      { path: "tags.list", message: "Expected null, actual [1]" },
      { path: "tags.list[0]", message: "Expected 2, actual 1" }
    ])).toEqual([
      { path: "tags.age_min", message: "Expected number, actual \"x\"" },
      { path: "tags.list[0]", message: "Expected 2, actual 1" }
    ])
  })
  it("keeps one entry per path in first-seen order", () => {
    expect(mergeIssues([
      { path: "b", message: "m1" },
      { path: "a", message: "m2" },
      { path: "b", message: "m1" }
    ])).toEqual([{ path: "b", message: "m1" }, { path: "a", message: "m2" }])
  })
})
