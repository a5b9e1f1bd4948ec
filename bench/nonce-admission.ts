// The admission statement before and after nonces were partitioned (migration 0025, issue 38):
// `node --import tsx bench/nonce-admission.ts`. One connection runs the statement for fresh nonces
// (the common case) in rounds that alternate between the two forms: the former one over a
// table as it was (unpartitioned, unlogged, its primary key on (app_key, nonce) and the pruning
// job's index on seen_ms), and ADMIT_SQL over the partitioned table. Each statement's `now` is
// spread over an hour, so a quarter of them (those within the 15-minute retention of the next
// hour) are recorded in two slots, as in production. Prints, per form, the PostgreSQL backend's
// CPU time per statement (from /proc/<pid>/schedstat, the median of its rounds) and the time per
// statement as the client sees it, and the ratios new / old. BENCH_ADMIT_STATEMENTS (4000 per
// round), BENCH_ADMIT_ROUNDS (5 per form). Linux only.
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"

import { NONCE_SLOT_MS } from "../src/domain/nonces.js"
import { ADMIT_SQL } from "../src/repos/statements.js"
import { benchDatabase } from "./servers.js"
import { log } from "./support.js"

const STATEMENTS = Number(process.env.BENCH_ADMIT_STATEMENTS ?? 4000)
const ROUNDS = Number(process.env.BENCH_ADMIT_ROUNDS ?? 5)
const RETENTION_MS = 900_000

/** The admission statement as it was before migration 0025, over a table of that shape. */
const FORMER_ADMIT_SQL = `WITH ep AS (SELECT since_s FROM nonce_epoch WHERE id = 1),
n AS (
  INSERT INTO bench_nonces_flat (app_key, nonce, seen_ms)
  SELECT $1::text, $2::text, $3::bigint FROM ep WHERE ep.since_s <= $5::bigint
  ON CONFLICT (app_key, nonce) DO UPDATE SET seen_ms = EXCLUDED.seen_ms WHERE bench_nonces_flat.seen_ms < $4::bigint
  RETURNING 1),
b AS (
  INSERT INTO rate_buckets AS b (app_key, tokens, updated_ms, granted)
  SELECT $1::text, $8::float8 - LEAST($6::float8, $8::float8), $3::bigint, LEAST($6::float8, $8::float8)
  WHERE $6::float8 > 0 AND EXISTS (SELECT 1 FROM n)
  ON CONFLICT (app_key) DO UPDATE SET
    granted = LEAST(EXCLUDED.granted, floor(bucket_refill(b.tokens, b.updated_ms, $3::bigint, $7::float8, $8::float8))),
    tokens = bucket_refill(b.tokens, b.updated_ms, $3::bigint, $7::float8, $8::float8)
      - LEAST(EXCLUDED.granted, floor(bucket_refill(b.tokens, b.updated_ms, $3::bigint, $7::float8, $8::float8))),
    updated_ms = GREATEST(b.updated_ms, $3::bigint)
  RETURNING b.granted, b.tokens)
SELECT (SELECT since_s FROM ep)::float8 AS epoch_s, EXISTS (SELECT 1 FROM n) AS fresh,
  (SELECT granted FROM b) AS granted, (SELECT tokens FROM b) AS tokens`

if (!existsSync("/proc/self/task")) {
  process.stdout.write("\nNonce admission: skipped (it reads the backend's CPU time from /proc)\n")
  process.exit(0)
}

const { db } = await benchDatabase()
await db.query(`CREATE UNLOGGED TABLE IF NOT EXISTS bench_nonces_flat (
  app_key text NOT NULL, nonce text NOT NULL, seen_ms bigint NOT NULL, PRIMARY KEY (app_key, nonce))`)
await db.query("CREATE INDEX IF NOT EXISTS bench_nonces_flat_seen_idx ON bench_nonces_flat (seen_ms)")
await db.query("TRUNCATE bench_nonces_flat")
await db.query("DELETE FROM request_nonces WHERE app_key LIKE 'ak_bench_admit_%'")
const [{ pid }] = (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows

const backendCpuNs = (): number => Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0])

// Within the partitions the migration made (the current hour through the next 24).
const base = (Math.floor(Date.now() / NONCE_SLOT_MS) + 1) * NONCE_SLOT_MS

const round = async (sql: string) => {
  const appKey = `ak_bench_admit_${randomBytes(4).toString("hex")}`
  const cpu0 = backendCpuNs()
  const t0 = performance.now()
  let fresh = 0
  for (let i = 0; i < STATEMENTS; i++) {
    const nowMs = base + Math.floor(Math.random() * NONCE_SLOT_MS)
    const { rows } = await db.query<{ fresh: boolean }>(sql, [
      appKey,
      randomBytes(16).toString("hex"),
      nowMs,
      nowMs - RETENTION_MS,
      Math.floor(nowMs / 1000),
      0,
      50,
      100
    ])
    if (rows[0]!.fresh) fresh++
  }
  const wallUs = ((performance.now() - t0) * 1000) / STATEMENTS
  const cpuUs = (backendCpuNs() - cpu0) / 1000 / STATEMENTS
  if (fresh !== STATEMENTS) throw new Error(`only ${fresh} of ${STATEMENTS} fresh nonces were admitted`)
  return { cpuUs, wallUs }
}

const median = (xs: ReadonlyArray<number>) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)]!

log("bench: warming up both forms…")
await round(FORMER_ADMIT_SQL)
await round(ADMIT_SQL)
const former: Array<{ cpuUs: number; wallUs: number }> = []
const partitioned: Array<{ cpuUs: number; wallUs: number }> = []
for (let r = 0; r < ROUNDS; r++) {
  former.push(await round(FORMER_ADMIT_SQL))
  partitioned.push(await round(ADMIT_SQL))
}
const summary = (label: string, xs: ReadonlyArray<{ cpuUs: number; wallUs: number }>) => ({
  label,
  cpuUs: median(xs.map((x) => x.cpuUs)),
  wallUs: median(xs.map((x) => x.wallUs))
})
const a = summary("former (unpartitioned)", former)
const b = summary("partitioned (0025)", partitioned)
process.stdout.write(`\nNonce admission, ${STATEMENTS} fresh nonces per round, ${ROUNDS} rounds per form (medians)\n`)
for (const s of [a, b]) {
  process.stdout.write(`  ${s.label.padEnd(24)} backend CPU ${s.cpuUs.toFixed(1)} µs/statement, client ${s.wallUs.toFixed(1)} µs/statement\n`)
}
process.stdout.write(`  ratio partitioned / former: backend CPU ${(b.cpuUs / a.cpuUs).toFixed(2)}, client ${(b.wallUs / a.wallUs).toFixed(2)}\n`)
await db.query("DROP TABLE bench_nonces_flat")
await db.query("DELETE FROM request_nonces WHERE app_key LIKE 'ak_bench_admit_%'")
await db.end()
