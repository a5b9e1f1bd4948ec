// Safe retries (DECISIONS §11): what an `Idempotency-Key` may be, what identifies "the same
// request", and what a repeat gets, given what is kept for the key. Pure and table-tested.

/** 1 to 255 printable ASCII characters (space included, DEL and controls not). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/

export const isValidIdempotencyKey = (key: string): boolean => IDEMPOTENCY_KEY_PATTERN.test(key)

/** The request a key stands for: method, path, sorted query and body MD5 (signing's own canonical parts). */
export const requestFingerprint = (parts: {
  readonly method: string
  readonly path: string
  readonly sortedQuery: string
  readonly bodyMd5: string
}): string => [parts.method.toUpperCase(), parts.path, parts.sortedQuery, parts.bodyMd5].join("\n")

/** What is kept for a key of a client. */
export type KeptRequest =
  | {
    readonly state: "running"
    readonly fingerprint: string
    /**
     * Seconds the first attempt is still presumed alive (0 or less: its process is presumed gone).
     * Measured by the database's clock, the one every instance shares.
     */
    readonly leaseLeftSeconds: number
  }
  | {
    readonly state: "done"
    readonly fingerprint: string
    readonly status: number
    readonly body: Uint8Array
    readonly contentType: string
  }

export type Repeat =
  /** Another request under the same key: 422 idempotency_key_reused. */
  | { readonly _tag: "Reused" }
  /** The first attempt still runs: 409 idempotency_key_in_progress, retry after this many seconds. */
  | { readonly _tag: "InProgress"; readonly retryAfterSeconds: number }
  /** Answer the kept response again, without running. */
  | {
    readonly _tag: "Replay"
    readonly status: number
    readonly body: Uint8Array
    readonly contentType: string
  }
  /** The first attempt died without an answer (its lease ran out): this one runs instead. */
  | { readonly _tag: "TakeOver" }

/** What a repeat of a key gets (the row exists and has not expired). */
export const decideRepeat = (kept: KeptRequest, fingerprint: string): Repeat => {
  if (kept.fingerprint !== fingerprint) return { _tag: "Reused" }
  if (kept.state === "done") return { _tag: "Replay", status: kept.status, body: kept.body, contentType: kept.contentType }
  if (kept.leaseLeftSeconds <= 0) return { _tag: "TakeOver" }
  // Soon enough to find the answer of a quick request, never longer than the lease or 10 s.
  return { _tag: "InProgress", retryAfterSeconds: Math.max(1, Math.min(10, Math.ceil(kept.leaseLeftSeconds))) }
}

/** A response is kept for replay unless the server failed (a 5xx is retried for real). */
export const isKept = (status: number): boolean => status < 500
