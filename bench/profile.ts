// `npm run bench:profile`: where the service's CPU goes beside the minimal Effect 4 floor's, on the
// cheap requests of bench/request-cost.ts (GET /matchmakers/{id}, POST /companies). Each server
// runs under V8's sampling profiler (`--cpu-prof`) and serves the same signed load; the profiles
// are kept in .data/profiles/<server>-<case>.cpuprofile (open them in Chrome's DevTools) and the
// sampled time is summed by where the code lives (our modules by folder, Effect by module, Node's
// internals, the garbage collector, idle), printed side by side as µs per request. Sampling is
// statistical: read shares, not exact costs (request-cost.ts measures those).
// BENCH_PROFILE_REQUESTS (20000), BENCH_PROFILE_CASE (get, post or both), BENCH_NO_BUILD=1.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import path from "node:path"

import { projectRoot } from "../src/root.js"
import { runLoad } from "./load.js"
import { cheapRequestsSetup, type Server, startServer, stopServer } from "./servers.js"
import { log } from "./support.js"

const REQUESTS = Number(process.env.BENCH_PROFILE_REQUESTS ?? 20_000)
const WHICH = process.env.BENCH_PROFILE_CASE ?? "both"
const OUT = path.join(projectRoot(), ".data", "profiles")

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string }
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** Where a sampled frame's code lives, as a short bucket name. */
export const bucketOf = (frame: ProfileNode["callFrame"]): string => {
  const { url, functionName } = frame
  if (url === "") {
    if (functionName === "(garbage collector)") return "(gc)"
    if (functionName === "(idle)") return "(idle)"
    if (functionName === "(program)") return "(program)"
    return `(native) ${functionName}`
  }
  if (url.startsWith("node:")) return `node:${url.slice(5).split("/")[0]}`
  const modules = url.lastIndexOf("/node_modules/")
  if (modules >= 0) {
    const rest = url.slice(modules + "/node_modules/".length).split("/")
    const pkg = rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!
    // Effect by module (Effect.ts, Schema.ts, http/…): where its runtime goes.
    if (pkg === "effect") {
      const inDist = rest.slice(rest.indexOf("dist") + 1)
      return `effect/${inDist.length > 1 ? inDist.slice(0, -1).join("/") + "/" : ""}${inDist.at(-1)!.replace(/\.js$/, "")}`
    }
    return pkg
  }
  const dist = url.indexOf("/dist/")
  if (dist >= 0) return `ours: ${path.dirname(url.slice(dist + "/dist/".length))}`
  return url
}

/** Sampled µs by bucket. */
const summarize = (profile: Profile): Map<string, number> => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const sums = new Map<string, number>()
  profile.samples.forEach((id, i) => {
    const bucket = bucketOf(byId.get(id)!.callFrame)
    sums.set(bucket, (sums.get(bucket) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  return sums
}

const { client, db, matchmakerId, url } = await cheapRequestsSetup()

const CASES = [
  { key: "get", name: "GET /matchmakers/{id}", method: "GET" as const, path: `/api/open/v1/matchmakers/${matchmakerId}` },
  {
    key: "post",
    name: "POST /companies",
    method: "POST" as const,
    path: "/api/open/v1/companies",
    body: (i: number) => JSON.stringify({ name: `压测公司${i}`, city: "北京" })
  }
].filter((c) => WHICH === "both" || WHICH === c.key)

const KINDS = ["service", "effect"] as const
const PORTS = { service: 18_291, effect: 18_297 }
const table: Record<string, Record<string, number>> = {}
mkdirSync(OUT, { recursive: true })
for (const c of CASES) {
  for (const kind of KINDS) {
    const dir = path.join(OUT, `tmp-${kind}`)
    rmSync(dir, { recursive: true, force: true })
    const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: "Info", NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir}` }
    const server: Server = await startServer(kind, PORTS[kind], env)
    const load = (requests: number) =>
      runLoad({ ...c, targets: [{ ...client, port: server.port }], connections: 32, seconds: 600, requests })
    await load(Math.min(4000, REQUESTS)) // the warm-up is in the profile too; subtracted below by share
    const result = await load(REQUESTS)
    await stopServer(server)
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"))
    if (file === undefined) throw new Error(`the ${kind} wrote no profile (did it exit cleanly?)`)
    const kept = path.join(OUT, `${kind}-${c.key}.cpuprofile`)
    renameSync(path.join(dir, file), kept)
    rmSync(dir, { recursive: true, force: true })
    const sums = summarize(JSON.parse(readFileSync(kept, "utf8")) as Profile)
    const served = result.requests + Math.min(4000, REQUESTS)
    for (const [bucket, us] of sums) {
      if (bucket === "(idle)") continue
      ;(table[bucket] ??= {})[`${c.key} ${kind}`] = us / served
    }
    log(`bench: ${c.name} on the ${kind} profiled (${kept})`)
  }
}

const columns = CASES.flatMap((c) => KINDS.map((k) => `${c.key} ${k}`))
const totals = Object.fromEntries(columns.map((col) => [col, Object.values(table).reduce((s, row) => s + (row[col] ?? 0), 0)]))
const rows = Object.entries(table)
  .filter(([, row]) => Object.values(row).some((us) => us >= 3))
  .sort(([, a], [, b]) => (b[columns[0]!] ?? 0) - (a[columns[0]!] ?? 0))
process.stdout.write(
  `\nProfile: sampled CPU µs per request by where the code lives (${REQUESTS} requests, 32 connections; start-up and ` +
    `warm-up included; buckets under 3 µs left out)\n`
)
console.table([
  ...rows.map(([bucket, row]) => ({ bucket, ...Object.fromEntries(columns.map((col) => [col, Number((row[col] ?? 0).toFixed(1))])) })),
  { bucket: "total (but idle)", ...Object.fromEntries(columns.map((col) => [col, Number(totals[col]!.toFixed(1))])) }
])
await db.end()
process.exit(0)
