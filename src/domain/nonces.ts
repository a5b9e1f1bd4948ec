// Request nonces by partition (migration 0025, DECISIONS §2): `request_nonces` is partitioned by
// the hour slot a row stands in, and a nonce seen at t is recorded in every slot that
// [t, t + retention] touches (src/repos/statements.ts, admitSql), so that a later sighting within
// the retention meets it on that slot's unique index, whichever partition holds the slot.

/** The span of a nonce slot, and of a partition of `request_nonces`: an hour. */
export const NONCE_SLOT_MS = 3_600_000

/**
 * The slots (their starts, epoch ms) a nonce seen at `nowMs` is recorded in, for a retention of
 * `retentionMs`: those [now, now + retention] touches, a retention past an hour counting as an hour
 * (one slot or two; a replay needs twice the timestamp window, 10 minutes by default).
 */
export const nonceSlots = (nowMs: number, retentionMs: number): ReadonlyArray<number> => {
  const first = Math.floor(nowMs / NONCE_SLOT_MS) * NONCE_SLOT_MS
  const last = Math.floor((nowMs + Math.min(Math.max(retentionMs, 0), NONCE_SLOT_MS)) / NONCE_SLOT_MS) * NONCE_SLOT_MS
  const out: Array<number> = []
  for (let slot = first; slot <= last; slot += NONCE_SLOT_MS) out.push(slot)
  return out
}
