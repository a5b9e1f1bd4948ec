// The route template a request matched (`/api/open/v1/guests/:id`), for metric labels: a label per
// raw path would grow without bound (ids, hostile paths), one per template stays a short list.
// The edge runs around the router, where the matched route is not known, so it is found again here.

/** The label of a request that matched no route (404s of every unknown path share it). */
export const UNMATCHED = "unmatched"

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

/** The method as a label: one of the HTTP methods, or OTHER (a label per invented method would grow too). */
export const methodLabel = (method: string): string => {
  const upper = method.toUpperCase()
  return METHODS.has(upper) ? upper : "OTHER"
}

interface Template {
  readonly path: string
  /** The literal text of each segment, or undefined where the segment is a parameter (`:id`). */
  readonly segments: ReadonlyArray<string | undefined>
}

const segmentsOf = (path: string): Array<string> => {
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
  return trimmed.split("/").slice(1)
}

/** The number of segments of `url` up to `end` (as `segmentsOf` counts them): its slashes. */
const segmentCount = (url: string, end: number): number => {
  let count = 0
  for (let i = url.indexOf("/"); i !== -1 && i < end; i = url.indexOf("/", i + 1)) count++
  return count
}

/**
 * Whether the path `url` up to `end` has the template's segments (as many, checked before): read
 * in place, without splitting the path (this runs on every request).
 */
const matches = (template: Template, url: string, end: number): boolean => {
  let slash = url.indexOf("/")
  for (const literal of template.segments) {
    const start = slash + 1
    let next = url.indexOf("/", start)
    if (next === -1 || next > end) next = end
    if (literal === undefined ? next === start : next - start !== literal.length || !url.startsWith(literal, start)) return false
    slash = next
  }
  return true
}

/**
 * Earlier literal segments win (`/guests/batch` over `/guests/:id`), as in the router, which
 * prefers a static segment to a parameter at the first place they differ.
 */
const moreSpecific = (a: Template, b: Template): boolean => {
  for (let i = 0; i < a.segments.length; i++) {
    const aLiteral = a.segments[i] !== undefined
    const bLiteral = b.segments[i] !== undefined
    if (aLiteral !== bLiteral) return aLiteral
  }
  return false
}

/**
 * A matcher over route keys `METHOD /path/:param`: `match(method, path)` gives the template the
 * request matched, or UNMATCHED. The query string is ignored.
 */
export const routeMatcher = (keys: Iterable<string>) => {
  // By method, then by segment count: a request is compared with a handful of templates.
  const table = new Map<string, Array<Array<Template>>>()
  for (const key of keys) {
    const space = key.indexOf(" ")
    const method = key.slice(0, space).toUpperCase()
    const path = key.slice(space + 1)
    const segments = segmentsOf(path).map((s) => (s.startsWith(":") ? undefined : s))
    const byCount = table.get(method) ?? []
    ;(byCount[segments.length] ??= []).push({ path, segments })
    table.set(method, byCount)
  }
  return (method: string, url: string): string => {
    const q = url.indexOf("?")
    let end = q === -1 ? url.length : q
    if (end > 1 && url.charCodeAt(end - 1) === 47 /* "/" */) end--
    const count = segmentCount(url, end)
    // HEAD is answered by the GET route.
    const upper = method.toUpperCase()
    const candidates = table.get(upper)?.[count] ?? (upper === "HEAD" ? table.get("GET")?.[count] : undefined)
    let best: Template | undefined
    for (const template of candidates ?? []) {
      if (matches(template, url, end) && (best === undefined || moreSpecific(template, best))) best = template
    }
    return best?.path ?? UNMATCHED
  }
}
