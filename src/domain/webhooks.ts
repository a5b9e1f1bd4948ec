// Webhook delivery rules (DECISIONS §9): the payload, which secrets sign (both during a rotation;
// the Standard Webhooks signature itself is the Signer's), the retry schedule with ±20% jitter, Retry-After, 410, and who may receive.
import { WEBHOOK_TEST_EVENT } from "./eventTypes.js"
import { maskDeep } from "./masking.js"

/** The schedule of DECISIONS §9: the waits before the 2nd … 10th attempt (about 3 days in all). */
export const DEFAULT_RETRY_SCHEDULE = "5s,5m,30m,2h,5h,10h,14h,20h,24h"

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** `5s,5m,2h` → milliseconds; units ms, s, m, h, d. Undefined when the text is not such a list. */
export const parseRetrySchedule = (text: string): ReadonlyArray<number> | undefined => {
  const items = text.split(",").map((s) => s.trim())
  const out: Array<number> = []
  for (const item of items) {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(item)
    if (m === null) return undefined
    out.push(Math.round(Number(m[1]) * UNIT_MS[m[2]!]!))
  }
  return out
}

/** A wait of ±20%: `random` is uniform in [0, 1). */
export const withJitter = (ms: number, random: number): number => Math.round(ms * (0.8 + 0.4 * random))

/** A receiver may ask for at most this long a pause with Retry-After. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000

/** Retry-After as seconds or an HTTP date → milliseconds from now (undefined when unusable). */
export const parseRetryAfter = (value: string | undefined, nowMs: number): number | undefined => {
  if (value === undefined) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS)
  const date = Date.parse(text)
  if (Number.isNaN(date)) return undefined
  return Math.min(Math.max(0, date - nowMs), MAX_RETRY_AFTER_MS)
}

/** What one HTTP attempt gave: an answer (any status), or no answer (timeout, refused, reset…). */
export type AttemptResult =
  | { readonly _tag: "Answered"; readonly status: number; readonly retryAfter?: string | undefined }
  | { readonly _tag: "NoAnswer"; readonly error: string }

/**
 * Why an attempt got no answer, as a client sees it (DECISIONS §13): one of these fixed phrases,
 * never an address, a port or the system's own message (which names them).
 */
export const ATTEMPT_ERRORS = {
  notAllowed: "destination not allowed",
  dns: "DNS lookup failed",
  refused: "connection refused",
  reset: "connection reset",
  timeout: "timed out",
  unreachable: "host unreachable",
  tls: "TLS error",
  protocol: "invalid HTTP answer",
  failed: "connection failed"
} as const
export type AttemptError = (typeof ATTEMPT_ERRORS)[keyof typeof ATTEMPT_ERRORS]

const SYSTEM_CODES: ReadonlyArray<readonly [RegExp, AttemptError]> = [
  [/^ECONNREFUSED$/, ATTEMPT_ERRORS.refused],
  [/^(ECONNRESET|EPIPE|ECONNABORTED)$/, ATTEMPT_ERRORS.reset],
  [/^(ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT)$/, ATTEMPT_ERRORS.timeout],
  [/^(EHOSTUNREACH|ENETUNREACH|EHOSTDOWN|ENETDOWN)$/, ATTEMPT_ERRORS.unreachable],
  [/^(ENOTFOUND|ENODATA|EAI_\w+)$/, ATTEMPT_ERRORS.dns],
  [/^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_CERT|HOSTNAME_MISMATCH)/, ATTEMPT_ERRORS.tls],
  [/^HPE_/, ATTEMPT_ERRORS.protocol]
]

/** The phrase for a system error code (`ECONNREFUSED`, `CERT_HAS_EXPIRED`, …); any other: connection failed. */
export const attemptErrorOf = (code: string | undefined): AttemptError =>
  SYSTEM_CODES.find(([pattern]) => code !== undefined && pattern.test(code))?.[1] ?? ATTEMPT_ERRORS.failed

/** At most this many bytes of an answer are kept and shown. */
export const EXCERPT_BYTES = 500

/**
 * The start of an answer as kept: at most EXCERPT_BYTES bytes of UTF-8, cut between characters;
 * bytes that are not UTF-8 read as U+FFFD, and U+0000 (which PostgreSQL text cannot hold) too.
 */
export const answerExcerpt = (bytes: Uint8Array): string => {
  // Back to the start of a character cut by the limit (at most 3 continuation bytes).
  let cut = Math.min(bytes.length, EXCERPT_BYTES)
  for (let back = 0; back < 3 && cut < bytes.length && cut > 0 && (bytes[cut]! & 0xc0) === 0x80; back++) cut--
  const text = new TextDecoder().decode(bytes.subarray(0, cut)).replaceAll("\u0000", "\ufffd")
  // A replacement character takes 3 bytes where it stood for 1: cut again on the encoded size.
  let size = 0
  let end = 0
  for (const char of text) {
    const width = Buffer.byteLength(char, "utf8")
    if (size + width > EXCERPT_BYTES) break
    size += width
    end += char.length
  }
  return text.slice(0, end)
}

export type Decision =
  | { readonly _tag: "Succeeded" }
  /** 410 Gone: the delivery fails and the client's webhook is turned off. */
  | { readonly _tag: "Gone" }
  | { readonly _tag: "Retry"; readonly delayMs: number; readonly step: number }
  /** The schedule is used up: failed until an operator redelivers it. */
  | { readonly _tag: "Failed" }

/**
 * The outcome of an attempt. `step` is the number of retries already used in this round; a
 * failure retries after `schedule[step]` with jitter, or after Retry-After on 429/503.
 */
export const decide = (
  result: AttemptResult,
  step: number,
  schedule: ReadonlyArray<number>,
  nowMs: number,
  random: number
): Decision => {
  if (result._tag === "Answered" && result.status >= 200 && result.status < 300) return { _tag: "Succeeded" }
  if (result._tag === "Answered" && result.status === 410) return { _tag: "Gone" }
  const wait = schedule[step]
  if (wait === undefined) return { _tag: "Failed" }
  const asked = result._tag === "Answered" && (result.status === 429 || result.status === 503)
    ? parseRetryAfter(result.retryAfter, nowMs)
    : undefined
  return { _tag: "Retry", delayMs: asked ?? withJitter(wait, random), step: step + 1 }
}

/**
 * The retry schedule of a delivery: a `webhook.test` event is attempted once, never retried
 * (DECISIONS §13: a client asks for it on demand, and sees its one attempt in its delivery log).
 */
export const retryScheduleOf = (type: string, schedule: ReadonlyArray<number>): ReadonlyArray<number> =>
  type === WEBHOOK_TEST_EVENT ? [] : schedule

/** The secrets that sign now: the current one, and the previous one until its overlap ends. */
export const signingSecrets = (
  current: string,
  previous: string | null,
  previousExpiresAt: Date | null,
  nowMs: number
): ReadonlyArray<string> =>
  previous !== null && previousExpiresAt !== null && previousExpiresAt.getTime() > nowMs ? [current, previous] : [current]

/** An event as a receiver (and the events feed) sees it. */
export interface EventPayload {
  readonly id: string
  readonly type: string
  readonly created_at: string
  readonly data: Readonly<Record<string, unknown>>
}

/** The payload for a client: masked for a client configured for masking, as every read is. */
export const payloadFor = (event: EventPayload, masking: boolean): EventPayload =>
  masking ? { ...event, data: maskDeep(event.data) as Record<string, unknown> } : event

/** What the delivery of an event to a client needs to know of the client, now. */
export interface Recipient {
  readonly status: string
  readonly permissions: ReadonlyArray<string>
  readonly webhook_enabled: boolean
  readonly webhook_url: string | null
  readonly webhook_events: ReadonlyArray<string>
}

/**
 * Why an event may not be delivered to this client any more (checked at each attempt, since an
 * operator may have changed the client after the fan-out), or undefined when it may.
 */
export const refusal = (client: Recipient, event: { readonly type: string; readonly permission: string }): string | undefined => {
  if (client.status !== "active") return "the client is disabled"
  // The client asked for it: sent to its URL even while its webhook is off (DECISIONS §12).
  if (event.type === WEBHOOK_TEST_EVENT) {
    if (client.webhook_url === null) return "the client has no webhook URL"
    return isWebhookUrl(client.webhook_url) ? undefined : "the webhook URL is not http(s)"
  }
  if (!client.webhook_enabled || client.webhook_url === null) return "the client's webhook is off"
  if (!client.webhook_events.includes(event.type)) return `the client no longer subscribes to ${event.type}`
  if (!client.permissions.includes(event.permission)) return `the client no longer holds ${event.permission}`
  if (!isWebhookUrl(client.webhook_url)) return "the webhook URL is not http(s)"
  return undefined
}

/** Only http and https URLs are ever called. */
export const isWebhookUrl = (url: string): boolean => {
  try {
    const u = new URL(url)
    return u.protocol === "http:" || u.protocol === "https:"
  } catch {
    return false
  }
}

/** A client's webhook settings, as kept. */
export interface WebhookState {
  readonly url: string | null
  readonly events: ReadonlyArray<string>
  readonly enabled: boolean
}

/**
 * The settings after a change (PUT /webhook): fields left out keep their value, a URL sent without
 * `enabled` turns the webhook on (as the operator's `clients webhook --url` does), and the webhook
 * can be on only with a URL. Events are kept once each, in the order sent.
 */
export const changeWebhook = (
  current: WebhookState,
  sent: { readonly url?: string; readonly events?: ReadonlyArray<string>; readonly enabled?: boolean }
): { readonly _tag: "Changed"; readonly settings: WebhookState } | {
  readonly _tag: "Refused"
  readonly path: string
  readonly message: string
} => {
  const url = sent.url ?? current.url
  const enabled = sent.enabled ?? (sent.url !== undefined ? true : current.enabled)
  if (enabled && url === null) return { _tag: "Refused", path: "enabled", message: "the webhook can be on only with a url" }
  return { _tag: "Changed", settings: { url, events: sent.events === undefined ? current.events : [...new Set(sent.events)], enabled } }
}
