// Normalisation of recorded answers (the wire corpus): what depends on the clock or on chance is
// replaced by a placeholder, and nothing else is touched, so that the rest of each body is
// compared byte for byte, key order included. Plain TypeScript: no dependency at all.
//
// The rules, applied in this order to every text of an entry (request path and body summary,
// then response header values, then the response body text), in the order of the cases:
//
// 1. Known values (the app_keys and app_secrets of the run's clients) → `<app_key:NAME>`,
//    `<app_secret:NAME>` (NAME: the client's role in the corpus, e.g. `full`).
// 2. Any other app_key `ak_` + 16 hex → `<app_key:?N>`; event ids `evt_` + 24 hex → `<evt:N>`; card
//    task ids `ct_` + 24 hex → `<card_task:N>`; UUIDs → `<uuid:N>`. N numbers distinct values by first
//    appearance in the run, so equal values stay equal (a task id in an answer and in a later path).
//    Secrets a self-service answer shows: webhook signing secrets `whsec_…` → `<whsec:N>`, and the
//    `app_secret` of a rotation → `<app_secret:?N>`.
// 3. Date-times `YYYY-MM-DD HH:MM:SS` (and the ISO form with `T`, optional fraction and zone): a value
//    that falls within the run (± SLACK), read in the platform time zone (UTC+8, Asia/Shanghai: no DST)
//    unless it carries a zone → `<now>` for `YYYY-MM-DD HH:MM:SS`, `<now:T>` for
//    `YYYY-MM-DDTHH:MM:SS`, else `<now:SHAPE>` with the digits of the text as `#`. A value exactly N
//    whole days after the run (1 ≤ N ≤ MAX_DAYS: an expiry) → the same with `+Nd` (`<now+30d>`).
//    Other date-times (ones the corpus sends, far from any run) stay as they are.
// 4. Unix seconds: a 10-digit number within the run (or N whole days after it) → `<unix>` /
//    `<unix+Nd>` (data.timestamp of GET /time, data.server_time, the timestamp line of
//    data.string_to_sign); 13-digit milliseconds likewise → `<unix_ms>`.
// 5. Dates `YYYY-MM-DD` alone equal to the platform date during the run (or N days after) →
//    `<today>` / `<today+Nd>`.
// 6. Durations the service measures (`"uptime_seconds": N`, `"database_ms": N`) → `<n>`.
//
// Headers have their own rules (see `header` below): RateLimit-Remaining (unless 0) and
// RateLimit-Reset → `<n>` (they depend on how fast the run goes); X-Request-Id → `<echoed>` when it
// is the value the case sent, `<generated>` when it is a UUID. And for a 429 only (driver.ts), its
// Retry-After header and `data.retry_after` → `<n>`: the time left until the next token.

export const PLATFORM_UTC_OFFSET_MINUTES = 8 * 60
/** A clock-derived value may be this far outside the run's start and end (clock skew, rounding). */
const SLACK_MS = 10 * 60 * 1000
/** The furthest expiry recognised (the longest membership plan, renewed). */
const MAX_DAYS = 800
const DAY_MS = 24 * 3600 * 1000

const DATE_TIME = /(?<![\d-])(\d{4})-(\d{2})-(\d{2})([T ])(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})?(?![\d])/g
const DATE_ONLY = /(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d:T-])/g
const UNIX_SECONDS = /(?<![\d.])(1\d{9})(?![\d.])/g
const UNIX_MS = /(?<![\d.])(1\d{12})(?![\d.])/g
const EVENT_ID = /evt_[0-9a-f]{24}/g
const CARD_TASK_ID = /ct_[0-9a-f]{24}/g
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi
const APP_KEY = /ak_[0-9a-f]{16}/g
const WHSEC = /whsec_[A-Za-z0-9+/]{43}=/g
const APP_SECRET = /("app_secret":\s*")([0-9a-f]{64})"/g
const MEASURED = /"(uptime_seconds|database_ms)":(\s*)\d+(\.\d+)?/g

export interface RunWindow {
  /** Unix milliseconds when the run began and ended. */
  readonly startMs: number
  readonly endMs: number
}

export class Normaliser {
  private readonly ordinals = new Map<string, Map<string, number>>()
  private readonly known: ReadonlyArray<readonly [string, string]>

  constructor(private readonly window: RunWindow, known: ReadonlyArray<readonly [value: string, placeholder: string]>) {
    // Longest first, so that no value is replaced inside a longer one.
    this.known = [...known].filter(([v]) => v !== "").sort((a, b) => b[0].length - a[0].length)
  }

  private ordinal(kind: string, value: string): number {
    let map = this.ordinals.get(kind)
    if (map === undefined) this.ordinals.set(kind, map = new Map())
    let n = map.get(value)
    if (n === undefined) map.set(value, n = map.size + 1)
    return n
  }

  /** "" when `ms` falls within the run, "+Nd" when N whole days after it, undefined otherwise. */
  private relative(ms: number): string | undefined {
    const lo = this.window.startMs - SLACK_MS
    const hi = this.window.endMs + SLACK_MS
    if (ms >= lo && ms <= hi) return ""
    const days = Math.round((ms - this.window.startMs) / DAY_MS)
    if (days < 1 || days > MAX_DAYS) return undefined
    const back = ms - days * DAY_MS
    return back >= lo && back <= hi ? `+${days}d` : undefined
  }

  /** The platform-time calendar date of an instant, as YYYY-MM-DD. */
  private static platformDate(ms: number): string {
    return new Date(ms + PLATFORM_UTC_OFFSET_MINUTES * 60_000).toISOString().slice(0, 10)
  }

  /** "" when `date` is the platform date during the run, "+Nd" when N days after it, undefined otherwise. */
  private relativeDate(date: string): string | undefined {
    const day = (d: string) => Math.round(Date.parse(`${d}T00:00:00Z`) / DAY_MS)
    const d = day(date)
    const first = day(Normaliser.platformDate(this.window.startMs - SLACK_MS))
    const last = day(Normaliser.platformDate(this.window.endMs + SLACK_MS))
    if (d >= first && d <= last) return ""
    const days = d - first
    return days >= 1 && days <= MAX_DAYS ? `+${days}d` : undefined
  }

  /** Applies the rules 1-6 to one text. */
  text(input: string): string {
    let s = input
    for (const [value, placeholder] of this.known) s = s.split(value).join(placeholder)
    s = s.replace(APP_KEY, (m) => `<app_key:?${this.ordinal("app_key", m)}>`)
    s = s.replace(EVENT_ID, (m) => `<evt:${this.ordinal("evt", m)}>`)
    s = s.replace(CARD_TASK_ID, (m) => `<card_task:${this.ordinal("card_task", m)}>`)
    s = s.replace(UUID, (m) => `<uuid:${this.ordinal("uuid", m.toLowerCase())}>`)
    s = s.replace(WHSEC, (m) => `<whsec:${this.ordinal("whsec", m)}>`)
    s = s.replace(APP_SECRET, (_m, key: string, secret: string) => `${key}<app_secret:?${this.ordinal("app_secret", secret)}>"`)
    s = s.replace(DATE_TIME, (m, y, mo, d, sep, h, mi, sec, frac, zone) => {
      const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec), 0)
      const offsetMinutes = zone === undefined
        ? PLATFORM_UTC_OFFSET_MINUTES
        : zone === "Z"
        ? 0
        : (zone.startsWith("-") ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2)))
      const rel = this.relative(utc - offsetMinutes * 60_000)
      if (rel === undefined) return m
      const shape = sep === " " && frac === undefined && zone === undefined
        ? ""
        : sep === "T" && frac === undefined && zone === undefined
        ? ":T"
        : `:${m.replace(/\d/g, "#")}`
      return `<now${rel}${shape}>`
    })
    s = s.replace(UNIX_MS, (m) => {
      const rel = this.relative(Number(m))
      return rel === undefined ? m : `<unix_ms${rel}>`
    })
    s = s.replace(UNIX_SECONDS, (m) => {
      const rel = this.relative(Number(m) * 1000)
      return rel === undefined ? m : `<unix${rel}>`
    })
    s = s.replace(DATE_ONLY, (m) => {
      const rel = this.relativeDate(m)
      return rel === undefined ? m : `<today${rel}>`
    })
    s = s.replace(MEASURED, (_m, key: string, space: string) => `"${key}":${space}<n>`)
    return s
  }

  /** A response header's value (lower-case name), by the header rules, then the text rules. */
  header(name: string, value: string, sentRequestId: string | undefined): string {
    if (name === "ratelimit-remaining") return value === "0" ? value : "<n>"
    if (name === "ratelimit-reset") return "<n>"
    if (name === "x-request-id") {
      if (sentRequestId !== undefined && value === sentRequestId) return "<echoed>"
      if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return "<generated>"
    }
    return this.text(value)
  }
}
