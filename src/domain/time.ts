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
