// Rendering of instants in the platform time zone (DECISIONS.md §10): `YYYY-MM-DD HH:MM:SS` for
// most fields, ISO `YYYY-MM-DDTHH:MM:SS` where SPEC asks for it.

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

export const formatTimestamp = (date: Date, timeZone: string): string => {
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
