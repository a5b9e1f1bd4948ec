// `npm run bench` (generators): what a generator function made per call costs, in one process per
// way of writing the same effect (bench/generators-probe.mjs: the generator written inside the
// function called, the same body defined once with Effect.fnUntraced, and no generator at all),
// rounds taking turns. Printed: nanoseconds per call (median of the rounds), and from V8's own
// trace (--trace-gc-nvp) over the measured calls what each young collection promoted to the old
// generation and how many full collections ran, each against `once`. Why it matters:
// docs/benchmarks.md, "Generators made per request"; the lint rule that keeps them out:
// docs/contributor.md, "Generators are made once". BENCH_GEN_CALLS (300000), BENCH_GEN_ROUNDS (5).
import { execFileSync } from "node:child_process"
import path from "node:path"

import { projectRoot } from "../src/root.js"
import { median } from "./paired.js"

const CALLS = Number(process.env.BENCH_GEN_CALLS ?? 300_000)
const ROUNDS = Number(process.env.BENCH_GEN_ROUNDS ?? 5)
const MODES = ["per-call", "once", "combinators"] as const
type Mode = (typeof MODES)[number]
const PROBE = path.join(projectRoot(), "bench", "generators-probe.mjs")

interface Run {
  readonly ns: number
  readonly promotedMbPerScavenge: number
  readonly fullPer100k: number
}

/** One process: its ns per call, and from V8's trace lines after the marker, the collections. */
const runOnce = (mode: Mode): Run => {
  const out = execFileSync(process.execPath, ["--trace-gc-nvp", PROBE, mode, String(CALLS)], {
    cwd: projectRoot(),
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024
  })
  const lines = out.split("\n")
  const start = lines.indexOf("--- measured ---")
  if (start === -1) throw new Error(`the ${mode} probe printed no marker`)
  const measured = lines.slice(start + 1)
  const result = measured.find((line) => line.startsWith("{\"mode\""))
  if (result === undefined) throw new Error(`the ${mode} probe printed no result`)
  const gcs = measured.flatMap((line) => {
    const at = line.indexOf("GC: {")
    return at === -1 ? [] : [JSON.parse(line.slice(at + 4)) as { gc: string; promoted: number }]
  })
  const scavenges = gcs.filter((g) => g.gc === "s")
  const promoted = scavenges.reduce((sum, g) => sum + g.promoted, 0)
  return {
    ns: (JSON.parse(result) as { ns: number }).ns,
    promotedMbPerScavenge: scavenges.length === 0 ? 0 : promoted / scavenges.length / 1e6,
    fullPer100k: (gcs.filter((g) => g.gc !== "s").length * 100_000) / CALLS
  }
}

const runs: Record<Mode, Array<Run>> = { "per-call": [], once: [], combinators: [] }
for (let round = 0; round < ROUNDS; round++) {
  // The order turns each round, so that none is always first on a warming machine.
  for (let i = 0; i < MODES.length; i++) {
    const mode = MODES[(round + i) % MODES.length]!
    runs[mode].push(runOnce(mode))
  }
}

const med = (mode: Mode, key: keyof Run) => median(runs[mode].map((r) => r[key]))
process.stdout.write(
  `\nGenerators: an effect with one yield, ${CALLS} calls per process (after 20000 of warm-up), ${ROUNDS} rounds; medians\n`
)
console.table(MODES.map((mode) => ({
  "written as": mode === "per-call"
    ? "(req) => Effect.gen(function*() {…})"
    : mode === "once"
    ? "Effect.fnUntraced(function*(req) {…})"
    : "Effect.map (no generator)",
  "ns / call": Math.round(med(mode, "ns")),
  "against once": Number((med(mode, "ns") / med("once", "ns")).toFixed(2)),
  "MB promoted / young collection": Number(med(mode, "promotedMbPerScavenge").toFixed(2)),
  "full collections / 100k calls": Number(med(mode, "fullPer100k").toFixed(1))
})))
