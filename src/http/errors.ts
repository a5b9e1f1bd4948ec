// Every way a request can go wrong, as the error envelope of DECISIONS §1: one mapping from a
// failure or defect to an ApiError, used by the edge (for whatever reaches it), by the signature
// middleware (a signed request's typed failures) and by the idempotency middleware (which keeps
// the answer a client would get). Each answer goes with the error it was made of, for the request
// log and the metrics (observability/answers.ts): nothing reads its own JSON back.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as HttpServerError from "effect/http/HttpServerError"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import { HttpApiSchemaError } from "effect/http-api/HttpApiError"

import { InternalError } from "../../schema/EdgeErrors.js"
import { type ApiError, isApiError } from "../../schema/Errors.js"
import { InvalidInput, NotFound } from "../domain/errors.js"
import { issuesOfSchemaError } from "../domain/issues.js"
import { errorResponse } from "../observability/answers.js"
import { databaseFaultOf, refusedValueOf } from "../repos/databaseFaults.js"
import { databaseUnavailable } from "../repos/sqlHelpers.js"
import { allowedMethods, methodNotAllowed } from "./allow.js"
import { RequestId } from "./RequestState.js"

export const routeNotFound = new NotFound({ resource: "route", message: "no such endpoint" })

/** What went wrong: the first failure of the cause, else its first defect. */
const culpritOf = (cause: Cause.Cause<unknown>): unknown => {
  let defect: unknown
  for (const reason of cause.reasons) {
    if (reason._tag === "Fail") return reason.error
    if (reason._tag === "Die" && defect === undefined) defect = reason.defect
  }
  return defect
}

const isRouteNotFound = (u: unknown): boolean =>
  HttpServerError.isHttpServerError(u) ? u.reason._tag === "RouteNotFound" : u instanceof HttpServerError.RouteNotFound

/** A router miss: 405 when the path is served with other methods (DECISIONS §1), else 404. */
const routeMiss = (u: unknown): ApiError => {
  const request = (u as HttpServerError.HttpServerError | HttpServerError.RouteNotFound).request
  const allow = allowedMethods(request.url)
  return allow.length === 0 ? routeNotFound : methodNotAllowed(request.method, allow)
}

/** Every cause becomes an ApiError; anything unforeseen is a logged 500 naming the request id. */
export const apiErrorOf = (cause: Cause.Cause<unknown>, requestId: string): Effect.Effect<ApiError> => {
  const logged = (level: "warning" | "error", message: string) =>
    (level === "warning" ? Effect.logWarning(message, Cause.pretty(cause)) : Effect.logError(message, Cause.pretty(cause))).pipe(
      Effect.annotateLogs({ request_id: requestId })
    )
  const culprit = culpritOf(cause)
  if (isApiError(culprit)) return Effect.succeed(culprit)
  // A request whose path, query, headers or body does not decode (the builder's decoders).
  if (HttpApiSchemaError.is(culprit) && culprit.kind !== "Body" && culprit.kind !== "ResponseHeaders") {
    return Effect.succeed(InvalidInput.of(issuesOfSchemaError(culprit.cause.issue, "body"), "invalid parameters"))
  }
  if (isRouteNotFound(culprit)) return Effect.succeed(routeMiss(culprit))
  // A fault of the database or its connections, or a conflict still there after the retries.
  const fault = databaseFaultOf(culprit)
  if (fault === "unavailable" || fault === "conflict") {
    return Effect.as(logged("warning", `database ${fault}`), databaseUnavailable())
  }
  if (fault === "invalid_value") {
    // The contract should have refused this value; it is still the client's input, not a 500.
    // Logged by what the database named, not its message, which quotes the value.
    return Effect.as(
      Effect.logWarning("database refused a value the contract let through").pipe(
        Effect.annotateLogs({ request_id: requestId, ...refusedValueOf(culprit) })
      ),
      InvalidInput.of([{ path: "body", message: "a value is out of range or not storable" }], "invalid parameters")
    )
  }
  return Effect.as(
    logged("error", "request failed with a defect"),
    new InternalError({
      message: "internal error; quote the request id when reporting it",
      request_id: requestId
    })
  )
}

/** The response a client gets for this cause (inside a request: its id comes from the edge). */
export const responseOfCause = (
  cause: Cause.Cause<unknown>,
  requestId?: string
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  requestId !== undefined
    ? Effect.map(apiErrorOf(cause, requestId), errorResponse)
    : Effect.flatMap(RequestId, (id) => Effect.map(apiErrorOf(cause, id), errorResponse))
