// Retention by partition (issue 38): the rules that decide, for a table partitioned by range on a
// time key, which partitions to create ahead of the clock and which to drop once every row they
// can hold is past the retention. Pure: given a policy, the clock's now and the partitions that
// exist with their bounds (src/repos/PartitionsRepo.ts reads them from the catalog), the plan.
//
// Partitions are laid on a grid: multiples of the policy's width counted from the Unix epoch (so a
// width of one day cuts at UTC midnight). The daemon creates every grid slot from the one holding
// now through the one holding now + ahead that no partition covers yet; a partition whose bounds
// differ from the grid (the width was changed, or the migration made it) is respected, and only
// the gaps around it are filled. A partition is dropped once its upper bound is at or before
// now − retention: every row it can hold is older than the retention. A DEFAULT partition (rows
// whose key no bounded partition covers) is never dropped here; the repository moves its rows into
// a partition when one is created for their range.

/** Milliseconds in a day. */
export const DAY_MS = 24 * 60 * 60 * 1000

/** The tables one policy keeps on the same bounds; created together, dropped together. */
export interface PartitionPolicy {
  /** Names the policy in logs, metrics and its advisory lock. */
  readonly name: string
  /**
   * The partitioned tables, in the order partitions are created; dropped in the reverse order (a
   * table whose rows belong to another's, such as an event's deliveries, comes after it).
   */
  readonly tables: ReadonlyArray<string>
  /** A partition's span, milliseconds (above 0). */
  readonly widthMs: number
  /** Partitions exist at least this far past now, milliseconds (0: only the current one). */
  readonly aheadMs: number
  /** A partition is dropped once its upper bound is this long ago, milliseconds. */
  readonly retentionMs: number
}

/** A partition as the catalog holds it: bounds in epoch milliseconds, null for MINVALUE/MAXVALUE. */
export interface ExistingPartition {
  readonly name: string
  readonly isDefault: boolean
  /** Inclusive lower bound; null: unbounded (MINVALUE). */
  readonly fromMs: number | null
  /** Exclusive upper bound; null: unbounded (MAXVALUE). */
  readonly toMs: number | null
}

/** A partition to create: [fromMs, toMs). */
export interface NewPartition {
  readonly name: string
  readonly fromMs: number
  readonly toMs: number
}

/** PostgreSQL truncates identifiers past 63 bytes: a longer partition name would not be the name asked for. */
export const MAX_IDENTIFIER_BYTES = 63

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/**
 * A partition's name: the table's, `_p`, and its lower bound in UTC, `YYYYMMDD` when it is a UTC
 * midnight and `YYYYMMDD_HHMMSS` otherwise (bounds never overlap, so no two partitions of a table
 * share a name). Throws when the name would pass PostgreSQL's identifier limit (a table name too
 * long for partitioning: a programming error).
 */
export const partitionName = (table: string, fromMs: number): string => {
  const d = new Date(fromMs)
  const day = `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}`
  const midnight = fromMs % DAY_MS === 0
  const name = `${table}_p${day}${midnight ? "" : `_${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`}`
  if (new TextEncoder().encode(name).length > MAX_IDENTIFIER_BYTES) {
    throw new Error(`partition name ${name} is longer than ${MAX_IDENTIFIER_BYTES} bytes`)
  }
  return name
}

/** The name of a table's DEFAULT partition (the migrations name it so). */
export const defaultPartitionName = (table: string): string => `${table}_default`

/** The grid line at or before `ms`. */
const floorTo = (ms: number, widthMs: number) => Math.floor(ms / widthMs) * widthMs

/** Whether [from, to) and the partition's range share an instant (a default partition covers none). */
const overlaps = (from: number, to: number, p: ExistingPartition) =>
  !p.isDefault && (p.fromMs === null || p.fromMs < to) && (p.toMs === null || p.toMs > from)

/**
 * The partitions to create so that the grid slots from the one holding `nowMs` through the one
 * holding `nowMs + aheadMs` are covered, oldest first: each uncovered stretch of a slot (a slot
 * is cut where an existing partition with other bounds begins or ends). When the DEFAULT
 * partition holds rows from before now (`oldestDefaultMs`: inserted while no daemon created
 * partitions), the slots from the oldest of them on are created too, so that every such row gets
 * a partition to move to; not further back than the retention (and one slot), since those slots
 * would be dropped at once.
 */
export const partitionsToCreate = (
  table: string,
  policy: Pick<PartitionPolicy, "widthMs" | "aheadMs" | "retentionMs">,
  nowMs: number,
  existing: ReadonlyArray<ExistingPartition>,
  oldestDefaultMs: number | null = null
): ReadonlyArray<NewPartition> => {
  const { aheadMs, retentionMs, widthMs } = policy
  if (!(widthMs > 0) || !(aheadMs >= 0)) throw new Error(`invalid partition policy: width ${widthMs} ms, ahead ${aheadMs} ms`)
  const out: Array<NewPartition> = []
  const end = floorTo(nowMs + aheadMs, widthMs) + widthMs
  const start = oldestDefaultMs === null ? nowMs : Math.min(nowMs, Math.max(oldestDefaultMs, nowMs - retentionMs - widthMs))
  for (let slot = floorTo(start, widthMs); slot < end; slot += widthMs) {
    let from = slot
    const slotEnd = slot + widthMs
    while (from < slotEnd) {
      const covering = existing.find((p) => overlaps(from, from + 1, p))
      if (covering !== undefined) {
        // Covered from here up to that partition's end (unbounded: the rest of the slot).
        from = covering.toMs === null ? slotEnd : Math.min(Math.max(covering.toMs, from + 1), slotEnd)
        continue
      }
      // Uncovered from here up to the next partition that begins within the slot, or the slot's end.
      const next = existing
        .filter((p) => !p.isDefault && p.fromMs !== null && p.fromMs > from && p.fromMs < slotEnd)
        .reduce((min, p) => Math.min(min, p.fromMs!), slotEnd)
      out.push({ name: partitionName(table, from), fromMs: from, toMs: next })
      from = next
    }
  }
  return out
}

/**
 * The partitions past the retention, oldest first: bounded above, with the upper bound at or
 * before `nowMs − retentionMs`. Never the DEFAULT partition, never one unbounded above.
 */
export const expiredPartitions = (
  policy: Pick<PartitionPolicy, "retentionMs">,
  nowMs: number,
  existing: ReadonlyArray<ExistingPartition>
): ReadonlyArray<ExistingPartition> =>
  existing
    .filter((p) => !p.isDefault && p.toMs !== null && p.toMs <= nowMs - policy.retentionMs)
    .toSorted((a, b) => a.toMs! - b.toMs!)

/**
 * The key below which a DEFAULT partition's rows are past the retention (for a policy that prunes
 * its DEFAULT partition): the start of the grid slot holding `nowMs − retentionMs`. A row below it
 * belongs to a slot that ended at or before now − retention, one whose partition would be dropped.
 */
export const defaultPruneBeforeMs = (policy: Pick<PartitionPolicy, "widthMs" | "retentionMs">, nowMs: number): number =>
  floorTo(nowMs - policy.retentionMs, policy.widthMs)

/** One range's partitions across the policy's tables, dropped in one transaction (reverse table order). */
export interface ExpiredRange {
  /** Lower bound (null: MINVALUE) and upper bound of the range. */
  readonly fromMs: number | null
  readonly toMs: number
  /** Table and partition, in drop order: the policy's tables reversed. */
  readonly partitions: ReadonlyArray<{ readonly table: string; readonly name: string }>
}

/**
 * The expired partitions of every table of the policy, grouped by their bounds (tables on the same
 * bounds drop together), oldest range first, each range's partitions in drop order.
 */
export const expiredRanges = (
  policy: Pick<PartitionPolicy, "retentionMs" | "tables">,
  nowMs: number,
  existing: ReadonlyMap<string, ReadonlyArray<ExistingPartition>>
): ReadonlyArray<ExpiredRange> => {
  const ranges = new Map<string, { fromMs: number | null; toMs: number; partitions: Array<{ table: string; name: string }> }>()
  for (const table of policy.tables.toReversed()) {
    for (const p of expiredPartitions(policy, nowMs, existing.get(table) ?? [])) {
      const key = `${p.fromMs ?? "min"}:${p.toMs}`
      const range = ranges.get(key) ?? { fromMs: p.fromMs, toMs: p.toMs!, partitions: [] }
      range.partitions.push({ table, name: p.name })
      ranges.set(key, range)
    }
  }
  return [...ranges.values()].toSorted((a, b) => a.toMs - b.toMs)
}

/**
 * How far past `nowMs` the bounded partitions cover without a gap, milliseconds: 0 when no
 * partition holds now (its rows go to the DEFAULT partition, or nowhere), Infinity when one
 * unbounded above does. What the daemon watches: it falls towards 0 while no daemon creates ahead.
 */
export const coveredAheadMs = (nowMs: number, existing: ReadonlyArray<ExistingPartition>): number => {
  let at = nowMs
  for (;;) {
    const covering = existing.find((p) => overlaps(at, at + 1, p))
    if (covering === undefined) return at - nowMs
    if (covering.toMs === null) return Infinity
    at = covering.toMs
  }
}
