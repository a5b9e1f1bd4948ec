// The signed-request middleware as part of the contract: what it provides to handlers (the
// calling client) and which errors it may answer with.
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"

import type { Permission } from "./Common.js"
import {
  BadRequestEnvelope,
  ConflictEnvelope,
  ForbiddenEnvelope,
  PayloadTooLargeEnvelope,
  ServiceUnavailableEnvelope,
  TooManyRequestsEnvelope,
  UnauthorizedEnvelope,
  UnprocessableEntityEnvelope,
  UnsupportedMediaTypeEnvelope
} from "./Errors.js"

export interface CallerInfo {
  readonly id: number
  readonly appKey: string
  readonly name: string
  readonly permissions: ReadonlySet<Permission>
  readonly masking: boolean
}

/** The authenticated client of the current request. */
export class Caller extends Context.Tag("Auth/Caller")<Caller, CallerInfo>() {}

/**
 * What any signed operation can answer besides its own errors: 400 (a query, path or body that
 * does not decode), 401, 403, 429 and 503 (the database behind authentication is unreachable).
 * 413 and 415 come from the body checks, so the document keeps them only on operations with a
 * request body (see finishSpec in Api.ts).
 */
export class Signed extends HttpApiMiddleware.Tag<Signed>()("Auth/Signed", {
  provides: Caller,
  failure: Schema.Union(
    UnauthorizedEnvelope,
    ForbiddenEnvelope,
    TooManyRequestsEnvelope,
    UnsupportedMediaTypeEnvelope,
    PayloadTooLargeEnvelope,
    BadRequestEnvelope,
    ServiceUnavailableEnvelope,
    // Idempotency-Key on a POST (DECISIONS §11); finishSpec keeps 409/422 on POSTs only.
    ConflictEnvelope,
    UnprocessableEntityEnvelope
  )
}) {}

export const SIGNING_HEADERS = {
  appKey: "x-app-key",
  timestamp: "x-timestamp",
  nonce: "x-nonce",
  signature: "x-signature"
} as const
