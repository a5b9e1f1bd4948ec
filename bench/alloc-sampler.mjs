// Loaded into a benchmarked server with `--import` (bench/alloc-profile.ts): V8's sampling heap
// profiler, switched by SIGUSR2. The first signal starts sampling (an allocation sampled about
// every ALLOC_SAMPLER_INTERVAL bytes, 128 unless set, the objects young and old collections freed
// included, so that garbage counts as much as what stays); the next one stops it and writes the
// profile (V8's tree of allocating stacks, with the bytes each allocated) to ALLOC_SAMPLER_FILE.
// Each step, once done, is marked by writing `<file>.started` or renaming the profile into place.
// Plain JavaScript, so that it loads in any of the servers as it is.
import { renameSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector"
import process from "node:process"

const file = process.env.ALLOC_SAMPLER_FILE
if (file !== undefined) {
  const session = new Session()
  session.connect()
  const post = (method, params) =>
    new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))))
  let sampling = false
  process.on("SIGUSR2", () => {
    if (!sampling) {
      sampling = true
      post("HeapProfiler.startSampling", {
        samplingInterval: Number(process.env.ALLOC_SAMPLER_INTERVAL ?? 128),
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true
      }).then(() => writeFileSync(`${file}.started`, ""))
    } else {
      sampling = false
      post("HeapProfiler.stopSampling").then(({ profile }) => {
        writeFileSync(`${file}.tmp`, JSON.stringify(profile))
        renameSync(`${file}.tmp`, file)
      })
    }
  })
}
