// Reads the Prometheus text format in tests: the value of one series, by metric name and labels.
import * as Effect from "effect/Effect"

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

const LABEL = /([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/** Every sample of an exposition (comments and blank lines skipped). */
export const parsePrometheus = (text: string): ReadonlyArray<Sample> =>
  text.split("\n").flatMap((line) => {
    if (line === "" || line.startsWith("#")) return []
    const brace = line.indexOf("{")
    const space = line.lastIndexOf(" ")
    const name = brace === -1 ? line.slice(0, line.indexOf(" ")) : line.slice(0, brace)
    const labels: Record<string, string> = {}
    if (brace !== -1) {
      for (const m of line.slice(brace, line.lastIndexOf("}") + 1).matchAll(LABEL)) labels[m[1]!] = m[2]!
    }
    return [{ name, labels, value: Number(line.slice(space + 1)) }]
  })

/** The sum of the samples named `name` whose labels include `labels` (0 when there is none). */
export const valueOf = (samples: ReadonlyArray<Sample>, name: string, labels: Readonly<Record<string, string>> = {}): number =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0)

/** Whether any sample is named `name` with these labels. */
export const hasSeries = (samples: ReadonlyArray<Sample>, name: string, labels: Readonly<Record<string, string>> = {}): boolean =>
  samples.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))

/** GET `${baseUrl}/metrics`, parsed; with the response's content type. */
export const scrape = (baseUrl: string) =>
  Effect.promise(async () => {
    const res = await fetch(`${baseUrl}/metrics`)
    const text = await res.text()
    return { status: res.status, contentType: res.headers.get("content-type"), text, samples: parsePrometheus(text) }
  })
