// The table of errors (schema/Errors.ts) as its classes declare it: each error has one status and
// its reason(s), the reasons of DECISIONS §1 and §13 all exist at their statuses, and each error's
// envelope encodes to `{code, message, data: {error, ...}}` and decodes back to the same error.
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"

import {
  AnyErrorEnvelope,
  type ApiError,
  disclosesExistence,
  ErrorEnvelopes,
  errorHeaders,
  ERRORS,
  ErrorStatus,
  type ErrorTag,
  ForbiddenEnvelopes,
  reasonOf,
  reasonsOf
} from "../../schema/Errors.js"
import { BAD_REQUEST_REASONS, DECISIONS_REASONS } from "../support/decisions.js"

const tags = Object.keys(ERRORS) as ReadonlyArray<ErrorTag>

/** What an error needs besides its message to be made (its required fields), and some optional ones. */
const DETAILS: Partial<Record<ErrorTag, object>> = {
  InvalidInput: { issues: [{ path: "photos[9]", message: "must be a URL" }] },
  NotFound: { resource: "company", missing_ids: [7, 9] },
  TaskLocked: { dispatched_to: "ak_0123456789abcdef" },
  DatabaseUnavailable: { retry_after: 2 },
  IdempotencyKeyInProgress: { retry_after: 3 },
  Unauthorized: { error: "timestamp_out_of_window", server_time: 1_700_000_000, hint: "sync your clock" },
  Forbidden: { error: "permission_denied", required: "open:guest:read" },
  MethodNotAllowed: { allow: ["GET", "PUT"] },
  PayloadTooLarge: { limit: 1024 },
  UnsupportedMediaType: { expected: "application/json" },
  HeadersTooLarge: { limit: 16384 },
  TooManyRequests: { retry_after: 1 },
  InternalError: { request_id: "req-1" },
  ServiceUnavailable: { retry_after: 2 }
}

/** One instance of each error, made by its class (which checks its fields). */
const sampleOf = (tag: ErrorTag): ApiError => {
  const cls = ERRORS[tag] as unknown as new(fields: object) => ApiError
  return new cls({ message: `a ${tag}`, ...DETAILS[tag] })
}

describe("the table: one row per error", () => {
  for (const tag of tags) {
    it(`${tag} has one status and its reason(s), under its own tag`, () => {
      const cls = ERRORS[tag]
      const row = cls.row as { readonly status: number; readonly reason?: string; readonly reasons?: ReadonlyArray<string> }
      expect(cls.tag).toBe(tag)
      expect(ErrorStatus[tag]).toBe(row.status)
      expect(Number.isInteger(row.status) && row.status >= 400 && row.status < 600).toBe(true)
      // Either one reason for every instance, or several that each instance names (its `error`).
      expect((row.reason === undefined) !== (row.reasons === undefined)).toBe(true)
      const reasons = reasonsOf(cls)
      expect(reasons.length).toBeGreaterThan(0)
      expect(new Set(reasons).size).toBe(reasons.length)
      for (const reason of reasons) expect(reason).toMatch(/^[a-z]+(_[a-z]+)*$/)
      expect(reasons).toContain(reasonOf(sampleOf(tag)))
    })
  }

  for (const [status, reasons] of DECISIONS_REASONS) {
    it(`every ${status} reason of DECISIONS §1 and §13 is answered with ${status}`, () => {
      for (const reason of reasons) {
        const answering = tags.filter((tag) => reasonsOf(ERRORS[tag]).includes(reason))
        expect(answering, reason).not.toEqual([])
        for (const tag of answering) expect([reason, ErrorStatus[tag]]).toEqual([reason, status])
      }
    })
  }

  it("a batch item can fail with every 400 refusal of DECISIONS §1, with not_found and with out_of_scope (§14), and with nothing else", () => {
    const itemReasons = tags.filter((tag) => "item" in ERRORS[tag].row).flatMap((tag) => reasonsOf(ERRORS[tag]))
    expect([...itemReasons].sort()).toEqual([...BAD_REQUEST_REASONS, "not_found", "out_of_scope"].sort())
  })

  it("the refusals that tell a masking client a value exists are the duplicate_* ones (DECISIONS §13)", () => {
    const existence = tags.filter((tag) => disclosesExistence(sampleOf(tag))).map((tag) => reasonOf(sampleOf(tag)))
    expect(existence.sort()).toEqual(["duplicate_device_id", "duplicate_group_no", "duplicate_phone", "duplicate_wechat_number"])
  })
})

describe("each error's envelope", () => {
  const encodeAny = Schema.encodeSync(AnyErrorEnvelope)
  for (const tag of tags) {
    it(`${tag} encodes to {code, message, data: {error, ...}} with its status, and decodes back to the same error`, () => {
      const error = sampleOf(tag)
      const envelope = ErrorEnvelopes[tag] as unknown as Schema.Codec<ApiError, { code: number; message: string; data: object }>
      const wire = Schema.encodeSync(envelope)(error)
      const { _tag, message, ...details } = error as unknown as Record<string, unknown>
      expect(wire).toEqual({ code: ErrorStatus[tag], message, data: { ...details, error: reasonOf(error) } })
      // `error` first, then the details in the class's order, as clients read them.
      expect(Object.keys(wire.data)[0]).toBe("error")
      // The union the edge encodes with picks this error's envelope.
      expect(encodeAny(error)).toEqual(wire)
      const decoded = Schema.decodeUnknownSync(envelope)(JSON.parse(JSON.stringify(wire)))
      expect(decoded).toBeInstanceOf(ERRORS[tag])
      expect(decoded).toEqual(error)
    })
  }

  it("each 403 reason's envelope requires that reason's details and round-trips", () => {
    const cases = [
      ["permission_denied", { required: "open:guest:read" }],
      ["deprecated_secret", { hint: "sign with the current app_secret" }]
    ] as const
    for (const [reason, details] of cases) {
      const envelope = ForbiddenEnvelopes[reason]
      const wire = { code: 403, message: "refused", data: { error: reason, ...details } }
      const decoded = Schema.decodeUnknownSync(envelope)(wire)
      expect(decoded).toMatchObject({ _tag: "Forbidden", error: reason, ...details })
      expect(Schema.encodeSync(envelope)(decoded)).toEqual(wire)
      expect(() => Schema.decodeUnknownSync(envelope)({ code: 403, message: "refused", data: { error: reason } })).toThrow()
    }
  })

  it("an error that names a wait answers Retry-After with it; a 405 answers Allow", () => {
    expect(errorHeaders(sampleOf("TooManyRequests"))).toEqual({ "retry-after": "1" })
    expect(errorHeaders(sampleOf("IdempotencyKeyInProgress"))).toEqual({ "retry-after": "3" })
    expect(errorHeaders(sampleOf("DatabaseUnavailable"))).toEqual({ "retry-after": "2" })
    expect(errorHeaders(sampleOf("MethodNotAllowed"))).toEqual({ allow: "GET, PUT" })
    expect(errorHeaders(sampleOf("QuotaFull"))).toEqual({})
  })
})
