// Loaded into a benchmarked server with `--import` (bench/allocation.ts): on SIGUSR2 the process
// writes, as one JSON line to ALLOC_PROBE_DIR/<pid>, the bytes V8 has allocated since it started
// (v8.getHeapStatistics().total_allocated_bytes) and its garbage collections so far, as Node's
// performance timeline reports them (`gc` entries: the main thread's pause of each, by kind:
// minor is a scavenge of the young generation, major a mark-compact, incremental a step of
// incremental marking), with how many paused it for 5 ms or more and the longest since the previous
// reading. Plain
// JavaScript, so that it loads in any of the servers as it is.
import { renameSync, writeFileSync } from "node:fs"
import path from "node:path"
import { constants, PerformanceObserver } from "node:perf_hooks"
import process from "node:process"
import v8 from "node:v8"

const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb"
}

const dir = process.env.ALLOC_PROBE_DIR
if (dir !== undefined) {
  const gc = { minor: { count: 0, ms: 0 }, major: { count: 0, ms: 0 }, incremental: { count: 0, ms: 0 }, weakcb: { count: 0, ms: 0 } }
  let longPauses = 0
  let longestMs = 0
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = gc[KINDS[entry.detail?.kind] ?? "weakcb"]
      kind.count++
      kind.ms += entry.duration
      if (entry.duration >= 5) longPauses++
      if (entry.duration > longestMs) longestMs = entry.duration
    }
  }).observe({ entryTypes: ["gc"] })
  process.on("SIGUSR2", () => {
    // Written aside and renamed: the reader never sees the file empty or half written.
    const file = path.join(dir, String(process.pid))
    const reading = { bytes: v8.getHeapStatistics().total_allocated_bytes, gc, longPauses, longestMs }
    longestMs = 0
    writeFileSync(`${file}.tmp`, JSON.stringify(reading))
    renameSync(`${file}.tmp`, file)
  })
}
