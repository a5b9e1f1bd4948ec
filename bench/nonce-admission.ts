// The admission statement before and after nonces were partitioned (migration 0025, issue 38):
// `node --import tsx bench/nonce-admission.ts`. One connection runs the statement for fresh nonces
// (the common case) in rounds that alternate between the two forms: the former one over a
// table as it was (unpartitioned, unlogged, its primary key on (app_key, nonce) and the pruning
// job's index on seen_ms), and admitSql's statement over the partitioned table (one slot or two). Each statement's `now` is
// spread over an hour, so a quarter of them (those within the 15-minute retention of the next
// hour) are recorded in two slots, as in production. Prints, per form, the PostgreSQL backend's
// CPU time per statement (from /proc/<pid>/schedstat, the median of its rounds) and the time per
// statement as the client sees it, and the ratios new / old. BENCH_ADMIT_STATEMENTS (4000 per
// round), BENCH_ADMIT_ROUNDS (5 per form). Linux only.
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"

import { NONCE_SLOT_MS } from "../src/domain/nonces.js"
import { admitSql } from "../src/repos/statements.js"
import { median } from "./paired.js"
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
// The partitions the daemon keeps (PARTITIONS_AHEAD_DAYS, 7 days of hours), as in production.
await db.query(`DO $$
DECLARE slot bigint; starts timestamp;
BEGIN
  FOR slot IN SELECT generate_series((floor(extract(epoch FROM now()) * 1000)::bigint / 3600000) * 3600000,
      (floor(extract(epoch FROM now()) * 1000)::bigint / 3600000 + 168) * 3600000, 3600000) LOOP
    starts := to_timestamp(slot / 1000.0) AT TIME ZONE 'UTC';
    EXECUTE format('CREATE UNLOGGED TABLE IF NOT EXISTS %I PARTITION OF request_nonces FOR VALUES FROM (%s) TO (%s)',
      'request_nonces_p' || to_char(starts, 'YYYYMMDD') || CASE WHEN slot % 86400000 = 0 THEN '' ELSE '_' || to_char(starts, 'HH24MISS') END,
      slot, slot + 3600000);
  END LOOP;
END
$$`)
const partitions =
  (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'request_nonces'::regclass")).rows[0]!.n
log(`bench: request_nonces has ${partitions} partitions`)
const [{ pid }] = (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows

const backendCpuNs = (): number => Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0])

// Within the partitions the migration made (the current hour through the next 24).
const base = (Math.floor(Date.now() / NONCE_SLOT_MS) + 1) * NONCE_SLOT_MS

/** A `now` within the hour after `base`: anywhere in it, or only where one slot (or two) is recorded. */
type Spread = "hour" | "one slot" | "two slots"
const nowIn = (spread: Spread) =>
  base + (spread === "two slots" ? NONCE_SLOT_MS - RETENTION_MS : 0) +
  Math.floor(Math.random() * (spread === "hour" ? NONCE_SLOT_MS : spread === "one slot" ? NONCE_SLOT_MS - RETENTION_MS : RETENTION_MS))

const round = async (statement: (nowMs: number) => string, spread: Spread = "hour") => {
  const appKey = `ak_bench_admit_${randomBytes(4).toString("hex")}`
  const cpu0 = backendCpuNs()
  const t0 = performance.now()
  let fresh = 0
  for (let i = 0; i < STATEMENTS; i++) {
    const nowMs = nowIn(spread)
    const { rows } = await db.query<{ fresh: boolean }>(statement(nowMs), [
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

log("bench: warming up both forms…")
await round(() => FORMER_ADMIT_SQL)
await round((nowMs) => admitSql(nowMs, nowMs - RETENTION_MS))
type Sample = { cpuUs: number; wallUs: number }
const former: Array<Sample> = []
const partitioned: Array<Sample> = []
const oneSlot: Array<Sample> = []
const twoSlots: Array<Sample> = []
const admit = (nowMs: number) => admitSql(nowMs, nowMs - RETENTION_MS)
for (let r = 0; r < ROUNDS; r++) {
  former.push(await round(() => FORMER_ADMIT_SQL))
  partitioned.push(await round(admit))
  oneSlot.push(await round(admit, "one slot"))
  twoSlots.push(await round(admit, "two slots"))
}
const summary = (label: string, xs: ReadonlyArray<Sample>) => ({
  label,
  cpuUs: median(xs.map((x) => x.cpuUs)),
  wallUs: median(xs.map((x) => x.wallUs))
})
const a = summary("former (unpartitioned)", former)
const rows = [
  a,
  summary("partitioned, the hour", partitioned),
  summary("  one slot (45 min)", oneSlot),
  summary("  two slots (15 min)", twoSlots)
]
process.stdout.write(`\nNonce admission, ${STATEMENTS} fresh nonces per round, ${ROUNDS} rounds per form (medians)\n`)
for (const s of rows) {
  process.stdout.write(
    `  ${s.label.padEnd(24)} backend CPU ${s.cpuUs.toFixed(1)} µs/statement (${(s.cpuUs / a.cpuUs).toFixed(2)}), client ${
      s.wallUs.toFixed(1)
    } µs/statement (${(s.wallUs / a.wallUs).toFixed(2)})\n`
  )
}
await db.query("DROP TABLE bench_nonces_flat")
await db.query("DELETE FROM request_nonces WHERE app_key LIKE 'ak_bench_admit_%'")
await db.end()
