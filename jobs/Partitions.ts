// Retention by partition (issue 38): for every table kept by partition, the daemon creates the
// partitions ahead of the clock and drops the ones past their retention, instead of deleting rows
// (src/domain/partitions.ts decides which, src/repos/PartitionsRepo.ts runs the DDL).
//
// Each policy's pass creates, one partition a transaction, then drops, in one transaction; each
// transaction takes the policy's transaction-level advisory lock first (pg_try_advisory_xact_lock):
// a second daemon finds it taken and leaves that step to the first, so DDL never races and nothing
// is dropped twice. Lock
// waits are bounded (PARTITIONS_LOCK_TIMEOUT_MS): DDL stuck behind a long query gives up and
// tries again at the next pass rather than queueing the service's statements behind it.
//
// Registering a table: add an entry to `partitionPolicies` (its tables must be partitioned by
// range on one instant or epoch-milliseconds column by their migration, with a DEFAULT
// partition so that an insert never fails while no daemon runs).
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { AppConfig, type AppConfigShape } from "../src/Config.js"
import type { DatabaseUnavailable } from "../src/domain/errors.js"
import { NONCE_SLOT_MS } from "../src/domain/nonces.js"
import {
  coveredAheadMs,
  DAY_MS,
  defaultPruneBeforeMs,
  type ExpiredRange,
  expiredRanges,
  type PartitionPolicy,
  partitionsToCreate
} from "../src/domain/partitions.js"
import { partitionAheadSeconds, partitionRangesHeld, partitionRowsMoved, update } from "../src/observability/metrics.js"
import { EventsRepo } from "../src/repos/EventsRepo.js"
import { type PartitionedTable, PartitionsRepo } from "../src/repos/PartitionsRepo.js"
import { Transaction } from "../src/repos/sqlHelpers.js"
import { periodicJob } from "./Job.js"

/** Some policy's pass failed (each failure is logged with its cause). */
export class PartitionMaintenanceFailed extends Data.TaggedError("PartitionMaintenanceFailed")<{ readonly policies: number }> {}

/** How long a partition's DDL waits for a lock before the pass gives up (and the next one tries again). */
export const PARTITIONS_LOCK_TIMEOUT_MS = 5_000

/** A registered policy and what may hold an expired range back. */
export interface PartitionEntry {
  readonly policy: PartitionPolicy
  /**
   * How many rows of the range must outlive the retention (0: none); the range is kept while any
   * do, and dropped at a later pass. None: an expired range is always dropped.
   */
  readonly holds?: (range: ExpiredRange) => Effect.Effect<number, DatabaseUnavailable>
  /**
   * Each pass also deletes the DEFAULT partition's rows past the retention (defaultPruneBeforeMs):
   * rows inserted while no daemon ran, too old for a partition to be made for them. Only for
   * tables whose rows nothing else refers to and nothing holds.
   */
  readonly pruneDefault?: boolean
}

/** The ahead of every policy, from PARTITIONS_AHEAD_DAYS. */
export const aheadMs = (config: Pick<AppConfigShape, "partitionsAheadDays">): number => config.partitionsAheadDays * DAY_MS

/** How long after its day ended a day of Idempotency-Keys (all expired) is dropped. */
export const EXPIRED_KEYS_MARGIN_MS = 60 * 60 * 1000

/**
 * Every table kept by partition, from the configuration. Another table is one more entry here
 * (its migration partitions it).
 */
export const partitionPolicies: Effect.Effect<ReadonlyArray<PartitionEntry>, never, AppConfig | EventsRepo> = Effect.gen(function*() {
  const config = yield* AppConfig
  const events = yield* EventsRepo
  const entries: Array<PartitionEntry> = [
    // The events outbox (migration 0024): a partition of events (a week's by default), their
    // deliveries and the deliveries' attempts go together, EVENTS_RETENTION_DAYS after it ended,
    // once none of its deliveries is pending (one still being retried, or redelivered, keeps it).
    {
      policy: {
        name: "events",
        tables: ["events", "webhook_deliveries", "webhook_attempts"],
        widthMs: config.eventsPartitionDays * DAY_MS,
        aheadMs: aheadMs(config),
        retentionMs: config.eventsRetentionDays * DAY_MS
      },
      holds: (range) => events.pendingDeliveries(range.fromMs, range.toMs)
    },
    // Request nonces (migration 0025; DECISIONS §2): partitioned by the hour slot a row stands in
    // (a nonce is recorded in every slot its retention touches, admitSql). An hour goes once it
    // ended NONCE_RETENTION_SECONDS ago: every nonce in it was seen before the retention, when
    // the former pruning job forgot it too.
    {
      policy: {
        name: "request_nonces",
        tables: ["request_nonces"],
        widthMs: NONCE_SLOT_MS,
        aheadMs: aheadMs(config),
        retentionMs: config.nonceRetentionSeconds * 1000
      },
      pruneDefault: true
    },
    // Idempotency-Keys (migration 0025; DECISIONS §11): partitioned by expiry, a UTC day a
    // partition, made far enough ahead for a key claimed now (its window later). A day goes once
    // every key in it expired, with a margin for a daemon clock ahead of the database's.
    {
      policy: {
        name: "idempotency_keys",
        tables: ["idempotency_keys"],
        widthMs: DAY_MS,
        aheadMs: aheadMs(config) + config.idempotencyTtlSeconds * 1000,
        retentionMs: EXPIRED_KEYS_MARGIN_MS
      },
      pruneDefault: true
    }
  ]
  return entries
})

/** What one pass did for one policy. */
export interface PartitionPass {
  readonly policy: string
  /** Another daemon held the policy's lock: this pass did nothing. */
  readonly skipped: boolean
  readonly created: ReadonlyArray<string>
  readonly dropped: ReadonlyArray<string>
  /** Rows moved out of DEFAULT partitions into the partitions created for them. */
  readonly moved: number
  /** Expired ranges kept, with how many rows hold each. */
  readonly held: ReadonlyArray<{ readonly range: ExpiredRange; readonly holding: number }>
  /** Rows past the retention deleted from DEFAULT partitions (policies with `pruneDefault`). */
  readonly pruned: number
}

const listAll = (repo: PartitionsRepo["Service"], tables: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const found = new Map<string, PartitionedTable>()
    for (const table of tables) {
      const parent = yield* repo.list(table)
      if (Option.isSome(parent)) found.set(table, parent.value)
      else yield* Effect.logWarning("table kept by partition is not partitioned by range: skipped").pipe(Effect.annotateLogs({ table }))
    }
    return found
  })

/** One pass of one policy at `nowMs`: create ahead, then drop what expired and nothing holds. */
export const maintainPolicy = (entry: PartitionEntry, nowMs: number) =>
  Effect.gen(function*() {
    const repo = yield* PartitionsRepo
    const tx = yield* Transaction
    const { policy } = entry
    const locked = <A, E, R>(body: Effect.Effect<A, E, R>) =>
      tx.run(Effect.gen(function*() {
        if (!(yield* repo.tryLock(policy.name))) return Option.none<A>()
        yield* repo.lockTimeout(PARTITIONS_LOCK_TIMEOUT_MS)
        return Option.some(yield* body)
      }))

    // One partition a transaction, the policy's lock taken again for each: a transaction that did
    // DDL keeps its transaction id until it ends, and the events feed lists only what every older
    // transaction settled (DECISIONS §12), so a first pass making a week of hourly partitions in one
    // transaction would hold the feed back for as long as it ran.
    const createOne = locked(Effect.gen(function*() {
      for (const [table, parent] of yield* listAll(repo, policy.tables)) {
        const [partition] = partitionsToCreate(table, policy, nowMs, parent.partitions, parent.oldestDefaultMs)
        if (partition === undefined) continue
        const rows = yield* repo.create(parent, partition)
        return Option.some({ table, name: partition.name, rows })
      }
      return Option.none<{ readonly table: string; readonly name: string; readonly rows: number }>()
    }))

    const createdPass = yield* Effect.gen(function*() {
      const created: Array<string> = []
      let moved = 0
      let ran = false
      for (;;) {
        const made = yield* createOne
        // Another daemon holds the policy: it makes the rest.
        if (Option.isNone(made)) break
        ran = true
        if (Option.isNone(made.value)) break
        const { name, rows, table } = made.value.value
        created.push(name)
        if (rows > 0) {
          moved += rows
          yield* update(partitionRowsMoved, { table }, rows)
          yield* Effect.logWarning("rows moved out of the DEFAULT partition into the partition created for them").pipe(
            Effect.annotateLogs({ table, partition: name, rows })
          )
        }
      }
      if (!ran) return Option.none<{ readonly created: ReadonlyArray<string>; readonly moved: number }>()
      for (const [table, parent] of yield* listAll(repo, policy.tables)) {
        const ahead = coveredAheadMs(nowMs, parent.partitions)
        yield* update(partitionAheadSeconds, { table }, Number.isFinite(ahead) ? ahead / 1000 : Number.MAX_SAFE_INTEGER)
      }
      return Option.some({ created, moved })
    })

    const droppedPass = yield* locked(Effect.gen(function*() {
      const dropped: Array<string> = []
      const held: Array<{ range: ExpiredRange; holding: number }> = []
      const parents = yield* listAll(repo, policy.tables)
      const existing = new Map([...parents].map(([table, parent]) => [table, parent.partitions] as const))
      const holdsOf = (range: ExpiredRange) => entry.holds === undefined ? Effect.succeed(0) : entry.holds(range)
      let tablesLocked = false
      for (const range of expiredRanges(policy, nowMs, existing)) {
        let holding = yield* holdsOf(range)
        if (holding === 0 && !tablesLocked) {
          // Before the first drop, the tables are locked in the policy's order (see lockTables)
          // and the holds read again under the locks: nothing can start holding a range (a
          // redelivery) between the read and the drop.
          yield* repo.lockTables([...parents.values()])
          tablesLocked = true
          holding = yield* holdsOf(range)
        }
        if (holding > 0) {
          held.push({ range, holding })
          continue
        }
        for (const { name, table } of range.partitions) {
          yield* repo.drop(parents.get(table)!, name)
          dropped.push(name)
        }
      }
      let pruned = 0
      if (entry.pruneDefault === true) {
        for (const [table, parent] of parents) {
          const n = yield* repo.pruneDefault(parent, defaultPruneBeforeMs(policy, nowMs))
          if (n > 0) {
            pruned += n
            yield* Effect.logInfo("rows past the retention deleted from the DEFAULT partition").pipe(
              Effect.annotateLogs({ table, rows: n })
            )
          }
        }
      }
      return { dropped, held, pruned }
    }))

    const pass: PartitionPass = {
      policy: policy.name,
      skipped: Option.isNone(createdPass) && Option.isNone(droppedPass),
      created: Option.match(createdPass, { onNone: () => [], onSome: (p) => p.created }),
      moved: Option.match(createdPass, { onNone: () => 0, onSome: (p) => p.moved }),
      dropped: Option.match(droppedPass, { onNone: () => [], onSome: (p) => p.dropped }),
      held: Option.match(droppedPass, { onNone: () => [], onSome: (p) => p.held }),
      pruned: Option.match(droppedPass, { onNone: () => 0, onSome: (p) => p.pruned })
    }
    if (Option.isSome(droppedPass)) yield* update(partitionRangesHeld, { policy: policy.name }, pass.held.length)
    if (pass.created.length > 0 || pass.dropped.length > 0) {
      yield* Effect.logInfo("partitions maintained").pipe(
        Effect.annotateLogs({ policy: policy.name, created: pass.created.join(","), dropped: pass.dropped.join(",") })
      )
    }
    for (const { holding, range } of pass.held) {
      yield* Effect.logWarning("partitions past the retention kept: rows of theirs must outlive it").pipe(
        Effect.annotateLogs({
          policy: policy.name,
          partitions: range.partitions.map((p) => p.name).join(","),
          holding
        })
      )
    }
    return pass
  }).pipe(Effect.annotateLogs({ policy: entry.policy.name }))

/** One pass over every registered policy at the clock's now; a policy that fails is logged and the others go on. */
export const maintainPartitionsOnce = Effect.gen(function*() {
  const entries = yield* partitionPolicies
  const now = yield* Clock.currentTimeMillis
  const passes: Array<PartitionPass> = []
  let failed = 0
  for (const entry of entries) {
    const exit = yield* Effect.exit(maintainPolicy(entry, now))
    if (Exit.isSuccess(exit)) passes.push(exit.value)
    else {
      failed++
      yield* Effect.logError("partition maintenance failed", exit.cause).pipe(Effect.annotateLogs({ policy: entry.policy.name }))
    }
  }
  // The job's run counts as failed (job_failures_total) when a policy failed.
  if (failed > 0) return yield* Effect.fail(new PartitionMaintenanceFailed({ policies: failed }))
  return passes
})

export const PartitionsJob = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    periodicJob({
      name: "partitions",
      every: Duration.seconds(config.partitionsIntervalSeconds),
      run: maintainPartitionsOnce
    }))
)
