// Self-service limits (DECISIONS §13): how often one client may take each action that costs the
// platform more than a read (a rotation, a test event, a bulk redelivery), and what a hit on its
// window decides. Pure and table-tested; the window itself is a row shared by every API instance.

/** Each limited action: at most `limit` in a window of `windowSeconds`, per client. */
export const ACTION_LIMITS = {
  credentials_rotate: { limit: 1, windowSeconds: 60 },
  webhook_secret_rotate: { limit: 1, windowSeconds: 60 },
  webhook_test: { limit: 10, windowSeconds: 60 },
  webhook_redeliver: { limit: 1, windowSeconds: 60 }
} as const satisfies Record<string, { readonly limit: number; readonly windowSeconds: number }>

export type LimitedAction = keyof typeof ACTION_LIMITS

/** A client's window for an action after a hit was counted in it: since when, and the hits in it. */
export interface ActionWindow {
  readonly windowStartMs: number
  readonly hits: number
}

export type ActionDecision =
  | { readonly _tag: "Allowed" }
  /** Over the limit: the window ends in `retryAfterSeconds` (at least 1). */
  | { readonly _tag: "Refused"; readonly retryAfterSeconds: number }

/**
 * A window starts with the first hit after the previous one ended and lasts `windowSeconds`; the
 * hits counted in it up to the limit are allowed. (The window's row is updated by one statement:
 * `ActionWindowsRepo.hit`, which starts a new window or counts the hit; a refused hit is not kept.)
 */
export const decideHit = (action: LimitedAction, window: ActionWindow, nowMs: number): ActionDecision => {
  const { limit, windowSeconds } = ACTION_LIMITS[action]
  if (window.hits <= limit) return { _tag: "Allowed" }
  const endsInMs = window.windowStartMs + windowSeconds * 1000 - nowMs
  return { _tag: "Refused", retryAfterSeconds: Math.max(1, Math.ceil(endsInMs / 1000)) }
}

/** How the limit reads in a message or a document: `1 a minute`, `10 a minute`. */
export const describeLimit = (action: LimitedAction): string => {
  const { limit, windowSeconds } = ACTION_LIMITS[action]
  return windowSeconds === 60 ? `${limit} a minute` : `${limit} per ${windowSeconds} seconds`
}
