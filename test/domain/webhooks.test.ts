// Webhook rules of DECISIONS §9: the retry schedule and its jitter, Retry-After, 410, the end of
// the schedule, Standard Webhooks signatures (checked by the reference library), who may
// receive an event, and what an attempt records (§13).
import { describe, expect, it } from "@effect/vitest"
import { Webhook } from "standardwebhooks"

import { liveSigner } from "../../src/auth/Signer.js"
import { EVENT_CATALOGUE, EVENT_TYPES, isEventType } from "../../src/domain/eventTypes.js"
import {
  answerExcerpt,
  ATTEMPT_ERRORS,
  attemptErrorOf,
  changeWebhook,
  decide,
  DEFAULT_RETRY_SCHEDULE,
  EXCERPT_BYTES,
  parseRetryAfter,
  parseRetrySchedule,
  payloadFor,
  type Recipient,
  refusal,
  retryScheduleOf,
  signingSecrets,
  withJitter
} from "../../src/domain/webhooks.js"

const SCHEDULE = parseRetrySchedule(DEFAULT_RETRY_SCHEDULE)!
const NOW = Date.UTC(2025, 0, 1, 12)

describe("retry schedule", () => {
  it("the default is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (about 3 days)", () => {
    expect(SCHEDULE).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400].map((s) => s * 1000))
    expect(SCHEDULE.reduce((a, b) => a + b, 0) / 86_400_000).toBeCloseTo(3.15, 1)
  })

  const table: ReadonlyArray<readonly [string, ReadonlyArray<number> | undefined]> = [
    ["200ms,1s,2m", [200, 1000, 120_000]],
    ["1.5s", [1500]],
    ["1d, 2h", [86_400_000, 7_200_000]],
    ["", undefined],
    ["5", undefined],
    ["5s,,5s", undefined],
    ["-1s", undefined],
    ["5 minutes", undefined]
  ]
  for (const [text, expected] of table) {
    it(`parses ${JSON.stringify(text)} as ${JSON.stringify(expected)}`, () => expect(parseRetrySchedule(text)).toEqual(expected))
  }

  it("jitter stays within ±20% and spans it", () => {
    expect(withJitter(10_000, 0)).toBe(8000)
    expect(withJitter(10_000, 0.5)).toBe(10_000)
    expect(withJitter(10_000, 0.999999)).toBe(12_000)
  })
})

describe("decide", () => {
  const answered = (status: number, retryAfter?: string) => ({ _tag: "Answered" as const, status, retryAfter })

  it("any 2xx is success", () => {
    for (const status of [200, 201, 202, 204, 299]) expect(decide(answered(status), 0, SCHEDULE, NOW, 0.5)).toEqual({ _tag: "Succeeded" })
  })

  it("a non-2xx answer or no answer retries after the schedule's next wait, with jitter", () => {
    for (const status of [100, 301, 302, 400, 404, 429, 500, 503]) {
      expect(decide(answered(status), 0, SCHEDULE, NOW, 0.5)).toEqual({ _tag: "Retry", delayMs: 5000, step: 1 })
    }
    expect(decide({ _tag: "NoAnswer", error: "ECONNREFUSED" }, 3, SCHEDULE, NOW, 0)).toEqual({ _tag: "Retry", delayMs: 5760_000, step: 4 })
  })

  it("410 fails the delivery and turns the webhook off, whatever the step", () => {
    expect(decide(answered(410), 0, SCHEDULE, NOW, 0.5)).toEqual({ _tag: "Gone" })
    expect(decide(answered(410), 9, SCHEDULE, NOW, 0.5)).toEqual({ _tag: "Gone" })
  })

  it("after the last wait of the schedule the delivery fails (10 attempts in all)", () => {
    expect(decide(answered(500), 8, SCHEDULE, NOW, 0.5)).toEqual({ _tag: "Retry", delayMs: 86_400_000, step: 9 })
    expect(decide(answered(500), 9, SCHEDULE, NOW, 0.5)).toEqual({ _tag: "Failed" })
    expect(decide(answered(500), 0, [], NOW, 0.5)).toEqual({ _tag: "Failed" })
  })

  it("Retry-After on 429 and 503 replaces the scheduled wait (seconds or an HTTP date); elsewhere it is ignored", () => {
    expect(decide(answered(429, "120"), 0, SCHEDULE, NOW, 0.5)).toEqual({ _tag: "Retry", delayMs: 120_000, step: 1 })
    expect(decide(answered(503, new Date(NOW + 90_000).toUTCString()), 2, SCHEDULE, NOW, 0.5))
      .toEqual({ _tag: "Retry", delayMs: 90_000, step: 3 })
    expect(decide(answered(500, "120"), 0, SCHEDULE, NOW, 0.5)).toEqual({ _tag: "Retry", delayMs: 5000, step: 1 })
    expect(decide(answered(429, "soon"), 0, SCHEDULE, NOW, 0.5)).toEqual({ _tag: "Retry", delayMs: 5000, step: 1 })
    // It still uses a step: a receiver answering 429 forever cannot keep a delivery alive.
    expect(decide(answered(429, "1"), 9, SCHEDULE, NOW, 0.5)).toEqual({ _tag: "Failed" })
  })

  it("a webhook.test event is attempted once: any failure fails it, Retry-After included; other types keep the schedule", () => {
    const testSchedule = retryScheduleOf("webhook.test", SCHEDULE)
    for (const result of [answered(500), answered(429, "1"), answered(503, "5"), { _tag: "NoAnswer", error: "ECONNREFUSED" } as const]) {
      expect(decide(result, 0, testSchedule, NOW, 0.5)).toEqual({ _tag: "Failed" })
    }
    expect(decide(answered(200), 0, testSchedule, NOW, 0.5)).toEqual({ _tag: "Succeeded" })
    for (const type of EVENT_TYPES) expect(retryScheduleOf(type, SCHEDULE)).toBe(SCHEDULE)
  })

  it("Retry-After is capped at 24 hours and a past date means now", () => {
    expect(parseRetryAfter("999999", NOW)).toBe(86_400_000)
    expect(parseRetryAfter(new Date(NOW - 5000).toUTCString(), NOW)).toBe(0)
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined()
  })
})

describe("signatures", () => {
  const current = "whsec_" + Buffer.from("a".repeat(32)).toString("base64")
  const previous = "whsec_" + Buffer.from("b".repeat(32)).toString("base64")
  const body = JSON.stringify({
    id: "evt_1",
    type: "guest.created",
    created_at: "2025-01-01T20:00:00",
    data: { guest_id: 1, name: "李雷" }
  })
  const ts = Math.floor(Date.now() / 1000)
  const headers = (signature: string) => ({ "webhook-id": "evt_1", "webhook-timestamp": String(ts), "webhook-signature": signature })

  it("the reference library verifies our signature (v1, base64 HMAC-SHA256 of id.timestamp.body)", () => {
    const signature = liveSigner.webhookSignature([current], "evt_1", ts, body)
    expect(signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    expect(new Webhook(current).verify(body, headers(signature))).toEqual(JSON.parse(body))
    expect(signature).toBe(new Webhook(current).sign("evt_1", new Date(ts * 1000), body))
  })

  it("during a rotation both signatures are sent, and either secret verifies", () => {
    const signature = liveSigner.webhookSignature([current, previous], "evt_1", ts, body)
    expect(signature.split(" ")).toHaveLength(2)
    expect(new Webhook(current).verify(body, headers(signature))).toEqual(JSON.parse(body))
    expect(new Webhook(previous).verify(body, headers(signature))).toEqual(JSON.parse(body))
  })

  it("a changed body or another secret fails verification", () => {
    const signature = liveSigner.webhookSignature([current], "evt_1", ts, body)
    expect(() => new Webhook(current).verify(body + " ", headers(signature))).toThrow()
    expect(() => new Webhook(previous).verify(body, headers(signature))).toThrow()
  })

  it("the previous secret signs only until it expires", () => {
    expect(signingSecrets("new", "old", new Date(NOW + 1), NOW)).toEqual(["new", "old"])
    expect(signingSecrets("new", "old", new Date(NOW), NOW)).toEqual(["new"])
    expect(signingSecrets("new", null, null, NOW)).toEqual(["new"])
  })
})

describe("who receives", () => {
  const client: Recipient = {
    status: "active",
    permissions: ["open:guest:read"],
    webhook_enabled: true,
    webhook_url: "https://example.test/hook",
    webhook_events: ["guest.created"]
  }
  const event = { type: "guest.created", permission: "open:guest:read" }
  const table: ReadonlyArray<readonly [string, Partial<Recipient>, string | undefined]> = [
    ["an active subscribed client holding the permission", {}, undefined],
    ["a disabled client", { status: "disabled" }, "the client is disabled"],
    ["a client whose webhook is off", { webhook_enabled: false }, "the client's webhook is off"],
    ["a client without a URL", { webhook_url: null }, "the client's webhook is off"],
    ["a client no longer subscribed", { webhook_events: ["guest.updated"] }, "the client no longer subscribes to guest.created"],
    ["a client without the read permission", { permissions: ["open:guest:write"] }, "the client no longer holds open:guest:read"],
    ["a client whose URL is not http(s)", { webhook_url: "ftp://example.test/x" }, "the webhook URL is not http(s)"]
  ]
  for (const [name, change, expected] of table) {
    it(`${name}: ${expected ?? "delivered"}`, () => expect(refusal({ ...client, ...change }, event)).toBe(expected))
  }

  const test = { type: "webhook.test", permission: "" }
  const testTable: ReadonlyArray<readonly [string, Partial<Recipient>, string | undefined]> = [
    ["the asking client, subscribed to nothing, holding no permission", { webhook_events: [], permissions: [] }, undefined],
    ["the asking client with its webhook off", { webhook_enabled: false }, undefined],
    ["the asking client, disabled since", { status: "disabled" }, "the client is disabled"],
    ["the asking client without a URL", { webhook_url: null }, "the client has no webhook URL"],
    ["the asking client with a URL that is not http(s)", { webhook_url: "ftp://example.test/x" }, "the webhook URL is not http(s)"]
  ]
  for (const [name, change, expected] of testTable) {
    it(`webhook.test to ${name}: ${expected ?? "delivered"}`, () => expect(refusal({ ...client, ...change }, test)).toBe(expected))
  }

  it("a masking client's payload is masked like every read; others get it as recorded", () => {
    const payload = { id: "evt_1", type: "guest.created", created_at: "2025-01-01T20:00:00", data: { phone: "13812345678", name: "李雷" } }
    expect(payloadFor(payload, true).data).toEqual({ phone: "138****5678", name: "李雷" })
    expect(payloadFor(payload, false)).toBe(payload)
  })
})

describe("the event catalogue (DECISIONS §12)", () => {
  it("lists every type of every resource once, and not webhook.test (addressed to one client only)", () => {
    expect(EVENT_TYPES).toHaveLength(29)
    expect(new Set(EVENT_TYPES).size).toBe(EVENT_TYPES.length)
    for (const [resource, types] of Object.entries(EVENT_CATALOGUE)) {
      for (const type of types) expect([resource, isEventType(type)]).toEqual([resource, true])
    }
    expect(["webhook.test", "guest.deleted", ""].map(isEventType)).toEqual([false, false, false])
  })
})

describe("PUT /webhook settings", () => {
  const none = { url: null, events: [], enabled: false }
  const set = { url: "https://example.test/a", events: ["guest.created"], enabled: true }
  const table: ReadonlyArray<
    readonly [string, typeof none | typeof set, Parameters<typeof changeWebhook>[1], ReturnType<typeof changeWebhook>]
  > = [
    ["a first URL turns the webhook on", none, { url: "https://example.test/a" }, {
      _tag: "Changed",
      settings: { url: "https://example.test/a", events: [], enabled: true }
    }],
    ["a URL with enabled: false stays off", none, { url: "https://example.test/a", enabled: false }, {
      _tag: "Changed",
      settings: { url: "https://example.test/a", events: [], enabled: false }
    }],
    ["events alone keep the rest, once each", set, { events: ["match.created", "match.created", "guest.created"] }, {
      _tag: "Changed",
      settings: { ...set, events: ["match.created", "guest.created"] }
    }],
    ["a new URL on a webhook that was turned off turns it on", { ...set, enabled: false }, { url: "https://example.test/b" }, {
      _tag: "Changed",
      settings: { ...set, url: "https://example.test/b" }
    }],
    ["enabled: false keeps the URL", set, { enabled: false }, { _tag: "Changed", settings: { ...set, enabled: false } }],
    ["an empty change changes nothing", set, {}, { _tag: "Changed", settings: set }],
    ["enabled: true without a URL is refused", none, { enabled: true }, {
      _tag: "Refused",
      path: "enabled",
      message: "the webhook can be on only with a url"
    }]
  ]
  for (const [name, current, sent, expected] of table) it(name, () => expect(changeWebhook(current, sent)).toEqual(expected))
})

describe("what an attempt records for the client (DECISIONS §13): no address, at most 500 bytes", () => {
  const errors: ReadonlyArray<readonly [string | undefined, string]> = [
    ["ECONNREFUSED", "connection refused"],
    ["ECONNRESET", "connection reset"],
    ["EPIPE", "connection reset"],
    ["ETIMEDOUT", "timed out"],
    ["EHOSTUNREACH", "host unreachable"],
    ["ENETUNREACH", "host unreachable"],
    ["ENOTFOUND", "DNS lookup failed"],
    ["EAI_AGAIN", "DNS lookup failed"],
    ["CERT_HAS_EXPIRED", "TLS error"],
    ["DEPTH_ZERO_SELF_SIGNED_CERT", "TLS error"],
    ["UNABLE_TO_VERIFY_LEAF_SIGNATURE", "TLS error"],
    ["ERR_TLS_CERT_ALTNAME_INVALID", "TLS error"],
    ["ERR_SSL_WRONG_VERSION_NUMBER", "TLS error"],
    ["HPE_INVALID_CONSTANT", "invalid HTTP answer"],
    ["EWHATEVER", "connection failed"],
    [undefined, "connection failed"]
  ]
  it.each(errors)("system error %s reads %j", (code, phrase) => {
    expect(attemptErrorOf(code)).toBe(phrase)
    expect(Object.values(ATTEMPT_ERRORS)).toContain(phrase)
  })

  const bytes = (text: string) => new TextEncoder().encode(text)
  const excerpts: ReadonlyArray<readonly [string, Uint8Array, string]> = [
    ["an empty answer", new Uint8Array(0), ""],
    ["a short answer, whole", bytes("down for maintenance"), "down for maintenance"],
    ["ASCII: 500 characters", bytes("x".repeat(5000)), "x".repeat(500)],
    ["2-byte characters: 250 of them", bytes("é".repeat(300)), "é".repeat(250)],
    ["3-byte characters: cut before the one the limit splits", bytes("中".repeat(200)), "中".repeat(166)],
    ["after one ASCII byte, the limit falls between characters", bytes("x" + "中".repeat(200)), "x" + "中".repeat(166)],
    ["4-byte characters", bytes("😀".repeat(200)), "😀".repeat(125)],
    ["not UTF-8: replacement characters, still within 500 bytes", new Uint8Array(600).fill(0xff), "\ufffd".repeat(166)],
    ["U+0000, which PostgreSQL text cannot hold, is replaced", bytes("a\u0000b"), "a\ufffdb"]
  ]
  it.each(excerpts)("%s", (_, answer, expected) => {
    const excerpt = answerExcerpt(answer)
    expect(excerpt).toBe(expected)
    expect(Buffer.byteLength(excerpt, "utf8")).toBeLessThanOrEqual(EXCERPT_BYTES)
  })
})
