// Validation issues are reported once per path, with union failures folded into one message, in
// the wording clients have always read.
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

import { issuesOfSchemaError, mergeIssues } from "../../src/domain/issues.js"

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

describe("issuesOfSchemaError", () => {
  const decode = (schema: Schema.Decoder<unknown>, input: unknown) => {
    const exit = Schema.decodeUnknownExit(schema)(input, { errors: "all", reportInput: true })
    if (Exit.isSuccess(exit)) throw new Error("expected a failure")
    const error = Cause.findErrorOption(exit.cause)
    if (Option.isNone(error) || !Schema.isSchemaError(error.value)) throw new Error("expected a schema error")
    return issuesOfSchemaError(error.value, "body")
  }

  it("keeps a schema's own message and words the built-in ones as clients have always read them", () => {
    const Body = Schema.Struct({
      name: Schema.String.check(Schema.makeFilter((s: string) => s.length > 0 || "must be 1 to 20 characters")),
      level: Schema.Literals(["normal", "gold"]),
      age: Schema.NullOr(Schema.Int),
      tags: Schema.Struct({ list: Schema.Array(Schema.Literal(2)) }),
      company_id: Schema.Int
    })
    expect(decode(Body, { name: "", level: "x", age: "1", tags: { list: [1] } })).toEqual([
      { path: "name", message: "must be 1 to 20 characters" },
      { path: "level", message: "Expected \"normal\" | \"gold\", actual \"x\"" },
      { path: "age", message: "Expected number | null, actual \"1\"" },
      { path: "tags.list[0]", message: "Expected 2, actual 1" },
      { path: "company_id", message: "is missing" }
    ])
  })

  it("names the empty path as asked", () => {
    expect(decode(Schema.Struct({ a: Schema.String }), null)).toEqual([{ path: "body", message: "Expected object, actual null" }])
  })
})
