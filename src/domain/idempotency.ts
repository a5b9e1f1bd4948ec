// Safe retries (DECISIONS §11): what an `Idempotency-Key` may be, what identifies "the same
// request", what a repeat gets, given what is kept for the key, and the two refusals of a repeat.
// Pure and table-tested.
import * as Schema from "effect/Schema"

import { DeclaredError } from "./errors.js"
import { optionalOut } from "./schemaFields.js"

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

/** What is kept for a key of a client: the first request's fingerprint and its answer. */
export interface KeptRequest {
  readonly fingerprint: string
  readonly status: number
  readonly body: Uint8Array
  readonly contentType: string
}

/** A repeat of a key whose first request is still running (DECISIONS §11). */
export class IdempotencyKeyInProgress extends DeclaredError<IdempotencyKeyInProgress>()("IdempotencyKeyInProgress", {
  status: 409,
  reason: "idempotency_key_in_progress"
}, {
  /** Seconds until a retry may find the first attempt's answer (also the Retry-After header). */
  retry_after: optionalOut(Schema.Finite)
}) {}

/** The same key sent with a different request (DECISIONS §11). */
export class IdempotencyKeyReused extends DeclaredError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  status: 422,
  reason: "idempotency_key_reused"
}) {}

export type Repeat =
  /** Another request under the same key: 422 idempotency_key_reused. */
  | { readonly _tag: "Reused" }
  /** The first attempt still runs after the repeat waited for it: 409 idempotency_key_in_progress. */
  | { readonly _tag: "InProgress"; readonly retryAfterSeconds: number }
  /** Answer the kept response again, without running. */
  | {
    readonly _tag: "Replay"
    readonly status: number
    readonly body: Uint8Array
    readonly contentType: string
  }

/**
 * What a repeat of a key gets once the first attempt has committed. A key is kept only with the
 * answer, in the transaction of the first attempt's writes, so a committed key always has one.
 */
export const decideRepeat = (kept: KeptRequest, fingerprint: string): Repeat =>
  kept.fingerprint !== fingerprint
    ? { _tag: "Reused" }
    : { _tag: "Replay", status: kept.status, body: kept.body, contentType: kept.contentType }

/**
 * Retry-After of a repeat that waited `waitedSeconds` for the first attempt, which still runs:
 * about as long again (a first attempt that slow is a long one), between 1 and 10 seconds.
 */
export const inProgressRetryAfter = (waitedSeconds: number): number => Math.max(1, Math.min(10, Math.ceil(waitedSeconds)))

/**
 * A response is kept for replay unless the server failed (a 5xx rolls back: the retry runs for
 * real), or it refused who sent the request or when rather than the request itself (a 403: signed
 * with a deprecated secret; a 429: over a limit): signed with the current secret, or after
 * Retry-After, the same key runs (DECISIONS §13).
 */
export const isKept = (status: number): boolean => status < 500 && status !== 403 && status !== 429
