// The rules of company scopes (DECISIONS §14), table by table: what a scope includes, the company a
// write takes, what is refused and how.
import { describe, expect, it } from "@effect/vitest"

import * as Scopes from "../../src/domain/scope.js"

const one = Scopes.of([7])
const two = Scopes.of([9, 7, 9])
const none = Scopes.of([])

describe("company scopes", () => {
  it.each(
    [
      ["every company includes any company", Scopes.all, 7, true],
      ["every company includes a record without a company", Scopes.all, null, true],
      ["a scope includes its company", one, 7, true],
      ["a scope excludes another company", one, 8, false],
      ["a scope excludes a record without a company (an independent matchmaker)", one, null, false],
      ["a scope of no company includes nothing", none, 7, false]
    ] as const
  )("%s", (_rule, scope, company, expected) => {
    expect(Scopes.includes(scope, company)).toBe(expected)
  })

  it("a scope's ids are distinct and ascending; the unscoped one has none to filter by", () => {
    expect(Scopes.companyIds(two)).toEqual([7, 9])
    expect(Scopes.companyIds(Scopes.all)).toBeNull()
    expect(Scopes.isScoped(Scopes.all)).toBe(false)
    expect(Scopes.isScoped(none)).toBe(true)
  })

  it.each(
    [
      ["a match of two companies is in the scope of either", one, [8, 7], true],
      ["a match of two other companies is not", one, [8, 10], false],
      ["a record of no company is in no scope", one, [null], false]
    ] as const
  )("%s", (_rule, scope, companies, expected) => {
    expect(Scopes.includesAny(scope, companies)).toBe(expected)
  })

  it.each(
    [
      ["a named company in the scope is taken", one, 7, { _tag: "Company", id: 7 }],
      ["an unscoped client leaves an unnamed company unset", Scopes.all, undefined, { _tag: "Company", id: undefined }],
      ["a client of one company takes it when none is named", one, undefined, { _tag: "Company", id: 7 }]
    ] as const
  )("%s", (_rule, scope, named, expected) => {
    expect(Scopes.companyOfWrite(scope, named)).toEqual(expected)
  })

  it.each(
    [
      ["a named company outside the scope is 403 out_of_scope", one, 8, 403, "out_of_scope"],
      ["a client of several companies must name one: 400", two, undefined, 400, "invalid_parameter"],
      ["a client bound to no company can create nothing: 403", none, undefined, 403, "out_of_scope"]
    ] as const
  )("%s", (_rule, scope, named, status, reason) => {
    const decided = Scopes.companyOfWrite(scope, named)
    expect(decided._tag).toBe("Refused")
    if (decided._tag !== "Refused") return
    const row = (decided.error.constructor as unknown as { row: { status: number; reason: string } }).row
    expect([row.status, row.reason]).toEqual([status, reason])
  })

  it("creating a company and the platform-wide resources are refused to any scoped client only", () => {
    expect(Scopes.checkUnscoped(Scopes.all, "x")).toBeUndefined()
    expect(Scopes.checkUnscoped(one, "creating a company")?._tag).toBe("OutOfScope")
    expect(Scopes.checkNamed(one, 7)).toBeUndefined()
    expect(Scopes.checkNamed(one, 8)).toMatchObject({ _tag: "OutOfScope", company_id: 8 })
  })
})
