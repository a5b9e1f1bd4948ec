// The signed-request middleware as part of the contract: what it provides to handlers (the
// calling client) and which errors it may answer with.
import { HttpApiMiddleware } from "@effect/platform"
import { Context, Schema } from "effect"
import type { Permission } from "./Common.js"
import { BadRequestEnvelope, ForbiddenEnvelope, PayloadTooLargeEnvelope, TooManyRequestsEnvelope, UnauthorizedEnvelope, UnsupportedMediaTypeEnvelope } from "./Errors.js"

export interface CallerInfo {
  readonly id: number
  readonly appKey: string
  readonly name: string
  readonly permissions: ReadonlySet<Permission>
  readonly masking: boolean
}

/** The authenticated client of the current request. */
export class Caller extends Context.Tag("Auth/Caller")<Caller, CallerInfo>() {}

export class Signed extends HttpApiMiddleware.Tag<Signed>()("Auth/Signed", {
  provides: Caller,
  failure: Schema.Union(
    UnauthorizedEnvelope,
    ForbiddenEnvelope,
    TooManyRequestsEnvelope,
    UnsupportedMediaTypeEnvelope,
    PayloadTooLargeEnvelope,
    BadRequestEnvelope
  )
}) {}

export const SIGNING_HEADERS = {
  appKey: "x-app-key",
  timestamp: "x-timestamp",
  nonce: "x-nonce",
  signature: "x-signature"
} as const
