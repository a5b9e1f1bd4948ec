// Arithmetic the benchmarks share, apart so that it is tested (test/bench/paired.test.ts): the median,
// which builds bench/variants.ts compares, and how two servers' costs round by round become one ratio.
import path from "node:path"

/** A build of the service to measure: a name for the table, and the checkout it was built in. */
export interface Variant {
  readonly name: string
  readonly dir: string
}

const NAME = /^[A-Za-z0-9_.-]{1,32}$/

/**
 * BENCH_VARIANTS: `name=dir` pairs, comma separated (a relative dir is taken from `cwd`). Names
 * are unique and short, `current` is this checkout's own; an entry without `=` or with an empty
 * part is refused with the entry named, not skipped.
 */
export const parseVariants = (text: string, cwd: string): ReadonlyArray<Variant> => {
  const entries = text.split(",").map((s) => s.trim()).filter((s) => s !== "")
  const variants = entries.map((entry): Variant => {
    const at = entry.indexOf("=")
    const name = at < 0 ? "" : entry.slice(0, at).trim()
    const dir = at < 0 ? "" : entry.slice(at + 1).trim()
    if (!NAME.test(name) || dir === "") {
      throw new Error(`BENCH_VARIANTS: "${entry}" is not name=dir (a name of 1 to 32 letters, digits, _ . -, then a checkout)`)
    }
    if (name === "current") throw new Error("BENCH_VARIANTS: current is this checkout's own build; name the others otherwise")
    return { name, dir: path.resolve(cwd, dir) }
  })
  const names = new Set<string>()
  for (const { name } of variants) {
    if (names.has(name)) throw new Error(`BENCH_VARIANTS names ${name} twice`)
    names.add(name)
  }
  return variants
}

/** The middle value (the upper one of an even count). */
export const median = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) throw new Error("median of nothing")
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
}

/**
 * A server's cost against the reference's, round by round: the median of the per-round ratios.
 * Two servers measured seconds apart in one round share the machine's state (its load, its clock
 * speed), which the ratio cancels; the median then drops the rounds a burst of other work spoiled.
 */
export const pairedRatio = (costs: ReadonlyArray<number>, reference: ReadonlyArray<number>): number => median(roundRatios(costs, reference))

const roundRatios = (costs: ReadonlyArray<number>, reference: ReadonlyArray<number>): Array<number> => {
  if (costs.length !== reference.length) throw new Error(`paired rounds differ in number: ${costs.length} against ${reference.length}`)
  return costs.map((cost, i) => cost / reference[i]!)
}

/**
 * How far the per-round ratios spread: their lower and upper quartiles (the values a quarter and
 * three quarters up the sorted list). A paired ratio whose quartiles lie on both sides of 1 has not
 * told the two builds apart on that machine at that hour, whatever its median says.
 */
export const pairedQuartiles = (costs: ReadonlyArray<number>, reference: ReadonlyArray<number>): readonly [number, number] => {
  const sorted = roundRatios(costs, reference).sort((a, b) => a - b)
  if (sorted.length === 0) throw new Error("quartiles of nothing")
  return [sorted[Math.floor((sorted.length - 1) / 4)]!, sorted[Math.ceil(((sorted.length - 1) * 3) / 4)]!]
}
