// Rate limiting without a round trip per request (DECISIONS §10): each API instance leases a few
// tokens at a time from the client's shared bucket and spends them locally. Tokens are never
// created locally, so instances together admit at most what the shared bucket hands out plus what
// they hold (each at most one lease, 5% of a second's rate): within 10% with two instances.

/** Tokens an instance leases at once: 5% of a second's rate (or of the burst when smaller), 1 to 1,000. */
export const leaseSize = (rps: number, burst: number): number => Math.min(1_000, Math.max(1, Math.floor(Math.min(rps, burst) * 0.05)))

/** Past this many clients with leftover tokens (a hostile caller's made-up keys never get here) the pool starts over. */
const MAX_CLIENTS = 10_000

/** The tokens this instance holds per app_key, and the shared bucket's level at the last lease. */
export class LocalTokens {
  readonly #held = new Map<string, { tokens: number; shared: number }>()

  /** Takes one held token if there is one. */
  take(appKey: string): boolean {
    const entry = this.#held.get(appKey)
    if (entry === undefined || entry.tokens < 1) return false
    entry.tokens -= 1
    return true
  }

  /** Gives back a token taken for a request that was not admitted after all. */
  refund(appKey: string): void {
    const entry = this.#held.get(appKey)
    if (entry !== undefined) entry.tokens += 1
  }

  /** Keeps the tokens of a lease beyond the one its request spends, and the shared level it reported. */
  keep(appKey: string, tokens: number, shared: number): void {
    const entry = this.#held.get(appKey)
    if (entry === undefined) {
      if (this.#held.size >= MAX_CLIENTS) this.#held.clear()
      this.#held.set(appKey, { tokens, shared })
    } else {
      entry.tokens += tokens
      entry.shared = shared
    }
  }

  /** Drops what this instance holds for a client (its rate changed), or for every client (none given). */
  forget(appKey?: string): void {
    if (appKey === undefined) this.#held.clear()
    else this.#held.delete(appKey)
  }

  /** Tokens a client may still spend as far as this instance knows (held + shared at the last lease). */
  remaining(appKey: string): number {
    const entry = this.#held.get(appKey)
    return entry === undefined ? 0 : entry.tokens + entry.shared
  }
}
