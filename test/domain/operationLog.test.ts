// Operation log entries (DECISIONS §5): what each change writes, and that a no-op writes nothing.
import { describe, expect, it } from "@effect/vitest"

import { changedFields, parseLogValue, renderLogValue, statusChangeOf, updateOf } from "../../src/domain/operationLog.js"

describe("operation log entries", () => {
  it("enable and disable log the old and new status", () => {
    expect(statusChangeOf("active", "disabled")).toEqual({ action: "disable", from_value: "active", to_value: "disabled" })
    expect(statusChangeOf("disabled", "active")).toEqual({ action: "enable", from_value: "disabled", to_value: "active" })
  })
  it("setting the current status again writes no entry", () => {
    expect(statusChangeOf("active", "active")).toBeUndefined()
  })
  it("an update logs objects of the changed fields only, shown as their JSON text in the order the change named them", () => {
    const update = updateOf({ remark: "a", name: "n", qr: null }, { remark: "b", name: "n", qr: "x" })
    expect(update).toEqual({
      set: { remark: "b", qr: "x" },
      entry: { action: "update", from_value: { remark: "a", qr: null }, to_value: { remark: "b", qr: "x" } }
    })
    expect(renderLogValue(update!.entry.from_value!)).toBe("{\"remark\":\"a\",\"qr\":null}")
    expect(renderLogValue(update!.entry.to_value!)).toBe("{\"remark\":\"b\",\"qr\":\"x\"}")
  })
  it("a log value's text reads back as the value it renders: changed fields from a JSON object, anything else as text", () => {
    const cases: ReadonlyArray<[string, unknown]> = [
      ["{\"phone\":\"13800138000\",\"remark\":null}", { phone: "13800138000", remark: null }],
      ["{}", {}],
      ["active", "active"],
      ["12", "12"],
      ["{not json", "{not json"],
      ["[1,2]", "[1,2]"]
    ]
    for (const [text, value] of cases) {
      expect(parseLogValue(text)).toEqual(value)
      expect(renderLogValue(parseLogValue(text))).toBe(text)
    }
  })
  it("an update that changes nothing writes no entry", () => {
    expect(updateOf({ remark: "a" }, { remark: "a" })).toBeUndefined()
    expect(changedFields({ remark: null }, { remark: undefined })).toBeUndefined()
  })
  it("clearing a field is a change from its value to null", () => {
    expect(changedFields({ remark: "a" }, { remark: null })).toEqual({ from: { remark: "a" }, to: { remark: null } })
  })
})
