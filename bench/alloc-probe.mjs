// Loaded into a benchmarked server with `--import` (bench/allocation.ts): on SIGUSR2 the process
// writes the bytes V8 has allocated since it started (v8.getHeapStatistics().total_allocated_bytes)
// to ALLOC_PROBE_DIR/<pid>. Plain JavaScript, so that it loads in any of the servers as it is.
import { renameSync, writeFileSync } from "node:fs"
import path from "node:path"
import process from "node:process"
import v8 from "node:v8"

const dir = process.env.ALLOC_PROBE_DIR
if (dir !== undefined) {
  process.on("SIGUSR2", () => {
    // Written aside and renamed: the reader never sees the file empty or half written.
    const file = path.join(dir, String(process.pid))
    writeFileSync(`${file}.tmp`, String(v8.getHeapStatistics().total_allocated_bytes))
    renameSync(`${file}.tmp`, file)
  })
}
