// Rendering of instants in the platform time zone (DECISIONS.md §10): `YYYY-MM-DD HH:MM:SS` for
// most fields, ISO `YYYY-MM-DDTHH:MM:SS` where SPEC asks for it.

/**
 * The zone's IANA name as Intl spells it (`asia/shanghai` → `Asia/Shanghai`), or undefined when
 * Intl knows no such zone: rendering an instant in it would throw on every answer.
 */
export const canonicalTimeZone = (text: string): string | undefined => {
  const name = text.trim()
  if (name === "") return undefined
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone
  } catch {
    return undefined
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>()
const formatterFor = (timeZone: string): Intl.DateTimeFormat => {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23"
    })
    formatters.set(timeZone, f)
  }
  return f
}

const parts = (date: Date, timeZone: string) => {
  const p: Record<string, string> = {}
  for (const { type, value } of formatterFor(timeZone).formatToParts(date)) p[type] = value
  return p as { year: string; month: string; day: string; hour: string; minute: string; second: string }
}

/** The zone's offset from UTC at `ms` (whole seconds), read from Intl: the slow, exact answer. */
const offsetAt = (ms: number, timeZone: string): number => {
  const p = parts(new Date(ms), timeZone)
  const wall = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second))
  return wall - (ms - (((ms % 1000) + 1000) % 1000))
}

const DAY_MS = 86_400_000
/** Per zone, per UTC day: the offset when it holds all day long, NaN when the day has a transition. */
const dayOffsets = new Map<string, Map<number, number>>()

/**
 * Intl's `formatToParts` is the exact answer and costs microseconds; rows carry several instants
 * each, so the offset is cached per UTC day: a day whose first and last second have the same offset
 * has it throughout (no zone changes its offset twice in a day), and a day with a transition takes
 * the slow path. Years outside 1000–9999 take it too (Intl writes them differently).
 */
export const formatTimestamp = (date: Date, timeZone: string): string => {
  const ms = date.getTime()
  const day = Math.floor(ms / DAY_MS)
  let days = dayOffsets.get(timeZone)
  if (days === undefined) dayOffsets.set(timeZone, days = new Map())
  let offset = days.get(day)
  if (offset === undefined) {
    const first = offsetAt(day * DAY_MS, timeZone)
    offset = first === offsetAt(day * DAY_MS + DAY_MS - 1000, timeZone) ? first : NaN
    if (days.size >= 20_000) days.clear()
    days.set(day, offset)
  }
  if (!Number.isNaN(offset)) {
    const wall = new Date(ms + offset)
    const year = wall.getUTCFullYear()
    if (year >= 1000 && year <= 9999) {
      return `${year}-${two(wall.getUTCMonth() + 1)}-${two(wall.getUTCDate())} ${two(wall.getUTCHours())}:${two(wall.getUTCMinutes())}:${
        two(wall.getUTCSeconds())
      }`
    }
  }
  return slowTimestamp(date, timeZone)
}

const two = (n: number): string => (n < 10 ? `0${n}` : String(n))

/** `formatTimestamp` straight from Intl, with no cache (the reference the fast path is tested against). */
export const slowTimestamp = (date: Date, timeZone: string): string => {
  const p = parts(date, timeZone)
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`
}

export const formatIso = (date: Date, timeZone: string): string => formatTimestamp(date, timeZone).replace(" ", "T")

export const formatDate = (date: Date, timeZone: string): string => formatTimestamp(date, timeZone).slice(0, 10)

/** `YYYY-MM-DD HH:MM:SS` read as wall time in `timeZone`. */
export const parseTimestamp = (text: string, timeZone: string): Date => {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/.exec(text)
  if (m === null) throw new Error(`not a timestamp: ${text}`)
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number]
  const asUtc = Date.UTC(y, mo - 1, d, h, mi, s)
  const p = parts(new Date(asUtc), timeZone)
  const wallAsUtc = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second))
  return new Date(asUtc - (wallAsUtc - asUtc))
}

/**
 * Whether `YYYY-MM-DDTHH:MM:SS` (with `.mmm` or not), read as UTC, names a time that exists:
 * Date.parse takes February 30 or 24:00 and rolls them over, so the text must survive the round trip.
 */
export const existsAsUtc = (text: string): boolean => {
  const t = Date.parse(`${text}Z`)
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, text.length) === text
}
