// The signed-request middlewares as part of the contract: what they provide to handlers (the
// calling client) and which errors they may answer with.
import * as Context from "effect/Context"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"

import type { CompanyScope } from "../src/domain/scope.js"
import { ErrorEnvelopes, ForbiddenEnvelopes, TransportErrorEnvelopes } from "./Errors.js"
import type { Permission } from "./Permissions.js"

export interface CallerInfo {
  readonly id: number
  readonly appKey: string
  readonly name: string
  readonly permissions: ReadonlySet<Permission>
  readonly masking: boolean
  /** The companies whose records it may read and change (DECISIONS §14): every one, or its own. */
  readonly scope: CompanyScope
  /**
   * The request was signed with the previous app secret during its grace (answers carry
   * X-Secret-Deprecated: true): it may not change credentials or webhook settings (CurrentSecret).
   */
  readonly deprecatedSecret: boolean
}

/** The authenticated client of the current request. */
export class Caller extends Context.Service<Caller, CallerInfo>()("Auth/Caller") {}

// What any signed operation can answer besides its own errors, middleware by middleware (the
// last one added to a group runs outermost: Authenticated, then Permitted, CheckedInput and
// Idempotent). Together: 400 (a query, path or body that does not decode), 401, 403, 429, 500 and
// 503 (the database behind authentication is unreachable), and the HTTP layer's 408, 417 and 431;
// 415 comes from the body checks, so the document keeps it only on operations with a request
// body, 413 on every operation but GETs (the edge reads any other request's body), and 409/422
// only on POSTs (see finishSpec in Api.ts).

/**
 * The signature (DECISIONS §2) and the rate limit (§10): provides the calling client. It also
 * declares the 500 every signed operation can answer and the HTTP layer's answers (Effect 4's
 * HttpApi has no API-wide error; GET /time declares its own).
 */
export class Authenticated extends HttpApiMiddleware.Service<Authenticated, { provides: Caller }>()("Auth/Authenticated", {
  error: [
    ...TransportErrorEnvelopes,
    ErrorEnvelopes.Unauthorized,
    ErrorEnvelopes.TooManyRequests,
    ErrorEnvelopes.DatabaseUnavailable,
    ErrorEnvelopes.InternalError
  ]
}) {}

/** The endpoint's permission (its `RequiredPermission` annotation). */
export class Permitted extends HttpApiMiddleware.Service<Permitted, { requires: Caller }>()("Auth/Permitted", {
  error: [ForbiddenEnvelopes.permission_denied]
}) {}

/** The text rules of path, query and body (DECISIONS §1), the body's media type and size. */
export class CheckedInput extends HttpApiMiddleware.Service<CheckedInput>()("Auth/CheckedInput", {
  error: [ErrorEnvelopes.InvalidInput, ErrorEnvelopes.UnsupportedMediaType, ErrorEnvelopes.PayloadTooLarge]
}) {}

/** A POST's Idempotency-Key (DECISIONS §11): 503 when the database that keeps answers is gone. */
export class Idempotent extends HttpApiMiddleware.Service<Idempotent, { requires: Caller }>()("Auth/Idempotent", {
  error: [
    ErrorEnvelopes.InvalidInput,
    ErrorEnvelopes.IdempotencyKeyInProgress,
    ErrorEnvelopes.IdempotencyKeyReused,
    ErrorEnvelopes.DatabaseUnavailable
  ]
}) {}

// Two endpoint middlewares of self-service operations (DECISIONS §13). Declared on the endpoint,
// so they run inside the group's: inside Idempotent, after a retry's recorded answer has been
// replayed (a retry signed with the secret its lost answer made deprecated gets that answer), and
// their refusals are not kept for the key (a 403 or 429 is not kept: domain/idempotency.ts).

/**
 * Operations that change credentials or where events go: refused (403 deprecated_secret) to a
 * request signed with the previous app secret during its grace, so that a leaked old secret
 * cannot take the client over.
 */
export class CurrentSecret extends HttpApiMiddleware.Service<CurrentSecret, { requires: Caller }>()("Auth/CurrentSecret", {
  error: [ForbiddenEnvelopes.deprecated_secret]
}) {}

/**
 * A self-service limit (the endpoint's ActionLimit annotation), per client across every API
 * instance: over it, 429 rate_limited with Retry-After. The hit commits only with the call.
 */
export class ActionLimited extends HttpApiMiddleware.Service<ActionLimited, { requires: Caller }>()("Auth/ActionLimited", {
  error: [ErrorEnvelopes.TooManyRequests, ErrorEnvelopes.DatabaseUnavailable]
}) {}

/**
 * Operations open only to unscoped clients (DECISIONS §14): the platform-wide resources (work
 * WeChat accounts, WeChat groups, the image blacklist) and company creation answer a client bound
 * to companies 403 out_of_scope. Declared on the group (or endpoint), inside the signing ones.
 */
export class Unscoped extends HttpApiMiddleware.Service<Unscoped, { requires: Caller }>()("Auth/Unscoped", {
  error: [ErrorEnvelopes.OutOfScope]
}) {}

export const SIGNING_HEADERS = {
  appKey: "x-app-key",
  timestamp: "x-timestamp",
  nonce: "x-nonce",
  signature: "x-signature"
} as const
