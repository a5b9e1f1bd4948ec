// The middlewares of every signed group, in the order they run (the contract, schema/Auth.ts,
// declares them): Authenticated verifies the signature and the client's rate limit, provides the
// caller, and answers every typed failure inside it with its envelope; Permitted checks the endpoint's permission; CheckedInput applies the text rules of
// DECISIONS §1 and the body's media type; Idempotent claims a POST's Idempotency-Key and keeps its
// answer. Inside them, two of some self-service endpoints (DECISIONS §13): CurrentSecret refuses a
// request signed with the previous secret, ActionLimited counts the call against its limit. Each
// one only reads what the edge or an outer middleware provided, and answers with a typed error or
// a response: no state is passed back out.
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import type * as Types from "effect/Types"

import { ActionLimited, Authenticated, Caller, CheckedInput, CurrentSecret, Idempotent, Permitted, Unscoped } from "../../schema/Auth.js"
import { ResponseMask } from "../../schema/Common.js"
import { Forbidden, TooManyRequests, UnsupportedMediaType } from "../../schema/EdgeErrors.js"
import { type ApiError, disclosesExistence, errorHeaders, isApiError } from "../../schema/Errors.js"
import { Authenticator } from "../auth/Authenticator.js"
import { Masker } from "../auth/Masker.js"
import { Signer } from "../auth/Signer.js"
import { ACTION_LIMITS, decideHit, describeLimit, type LimitedAction } from "../domain/actionLimits.js"
import { InvalidInput, OutOfScope } from "../domain/errors.js"
import { IdempotencyKeyInProgress, IdempotencyKeyReused, isValidIdempotencyKey, requestFingerprint } from "../domain/idempotency.js"
import { isScoped } from "../domain/scope.js"
import { sortedQuery, splitUrl } from "../domain/signing.js"
import { clip, jsonTextIssues, pathIssues, queryIssues } from "../domain/text.js"
import { answeredError, answerOf, errorResponse, keptError } from "../observability/answers.js"
import { recordDuplicateRefusal } from "../observability/metrics.js"
import { ActionWindowsRepo } from "../repos/ActionWindowsRepo.js"
import { Transaction } from "../repos/sqlHelpers.js"
import { type Answer, Idempotency } from "../services/Idempotency.js"
import { withBody } from "./Edge.js"
import { responseOfCause } from "./errors.js"
import { makeRequestBody, RequestBody } from "./RequestState.js"
import { type RouteInfo, routeInfo } from "./routes.js"

const EMPTY_OBJECT = makeRequestBody(new TextEncoder().encode("{}"), "application/json")

const mediaType = (header: string | undefined): string => (header ?? "").split(";")[0]!.trim().toLowerCase()

/** Headers added to the answer of this request, whatever it turns out to be (an error included). */
const addToAnswer = (headers: Readonly<Record<string, string>>) =>
  HttpEffect.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))

/**
 * A signed request's typed failures answered here, where the error is still at hand (HttpApi would
 * encode them the same way, but hand on a response that has forgotten its error).
 */
const answered = <E, R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.catchIf(effect, (e): e is E & ApiError => isApiError(e), (error) => Effect.succeed(errorResponse(error)))

/**
 * Counts the duplicate_* refusals a masking client is answered (DECISIONS §13: trying phones one
 * by one tells which exist), a replayed one excepted (it tells nothing new).
 */
const countExistenceAnswer = (appKey: string, response: HttpServerResponse.HttpServerResponse): Effect.Effect<void> => {
  const error = answeredError(response)
  return error !== undefined && disclosesExistence(error) && response.headers["idempotent-replayed"] === undefined
    ? recordDuplicateRefusal(appKey)
    : Effect.void
}

/** The signature (DECISIONS §2) and the rate limit (§10): provides the caller and its mask. */
export const AuthenticatedLive = Layer.effect(
  Authenticated,
  Effect.gen(function*() {
    const auth = yield* Authenticator
    const masker = yield* Masker

    // Generator functions are made once (docs/contributor.md, "Generators are made once"): here,
    // not in the function below, which HttpApiBuilder calls for each route.
    const authenticated = Effect.fnUntraced(function*(
      httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, Caller>
    ) {
      const request = yield* HttpServerRequest.HttpServerRequest
      const body = yield* RequestBody
      const { bucket, caller, deprecatedSecret, rate } = yield* auth.authenticate({
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: body.bytes
      })
      const tokens = Math.max(0, Math.floor(bucket.tokens))
      yield* addToAnswer({
        ...(deprecatedSecret ? { "x-secret-deprecated": "true" } : {}),
        "ratelimit-limit": String(rate.burst),
        "ratelimit-remaining": String(tokens),
        "ratelimit-reset": String(Math.ceil(Math.max(0, rate.burst - bucket.tokens) / rate.rps)),
        "ratelimit-policy": `${rate.burst};w=${Math.max(1, Math.round(rate.burst / rate.rps))}`
      })
      if (!bucket.allowed) {
        const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / rate.rps))
        return yield* Effect.fail(new TooManyRequests({ message: "rate limit exceeded", retry_after: retryAfter }))
      }
      // Read when the success is encoded: a masking client's answers are masked (DECISIONS §3).
      // Overlays (provideService), not a merged context: a merge copies the whole context.
      const withCaller = Effect.provideService(httpEffect, Caller, caller)
      if (!caller.masking) return yield* withCaller
      const response = yield* answered(Effect.provideService(withCaller, ResponseMask, masker.forCaller(caller)))
      yield* countExistenceAnswer(caller.appKey, response)
      return response
    })

    return (httpEffect) => answered(authenticated(httpEffect))
  })
).pipe(Layer.provide(Masker.layer))

/** The endpoint's permission; the events feed filters each record by its own instead. */
export const PermittedLive = Layer.succeed(Permitted)((httpEffect, { endpoint, group }) => {
  const { permission, perRecord } = routeInfo(group, endpoint)
  if (permission === undefined) {
    return perRecord
      ? httpEffect
      : Effect.die(new Error(`route ${endpoint.method} ${endpoint.path} has no declared permission`))
  }
  const denied = Effect.fail(
    new Forbidden({ error: "permission_denied", message: `this client lacks the permission ${permission}`, required: permission })
  )
  return Effect.flatMap(
    Caller,
    (caller): Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled | Forbidden> =>
      caller.permissions.has(permission) ? httpEffect : denied
  )
})

/** The text rules of the path and query (DECISIONS §1); undefined when they hold. */
const urlFailure = (url: string): InvalidInput | undefined => {
  const { path, rawQuery } = splitUrl(url)
  const urlIssues = [...pathIssues(path), ...queryIssues(rawQuery)]
  return urlIssues.length > 0 ? InvalidInput.of(urlIssues, "a path or query parameter is not valid text") : undefined
}

/**
 * The checks of a request with a body (CheckedInputLive), then the request. Made once, not in the
 * middleware's function, which HttpApiBuilder calls for each route (docs/contributor.md,
 * "Generators are made once").
 */
const checkedBody = Effect.fnUntraced(function*(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>,
  info: RouteInfo
) {
  const request = yield* HttpServerRequest.HttpServerRequest
  const failure = urlFailure(request.url)
  if (failure !== undefined) return yield* Effect.fail(failure)

  if (info.emptyBodyAsObject && request.headers["content-type"] === undefined && (yield* RequestBody).bytes.length === 0) {
    // All fields optional: no body at all reads as `{}` (DECISIONS §1); the signature and the
    // Idempotency-Key fingerprint stay over the empty body that was sent.
    return yield* Effect.provideService(httpEffect, HttpServerRequest.HttpServerRequest, withBody(request, EMPTY_OBJECT))
  }
  const type = mediaType(request.headers["content-type"])
  if (info.body === "json") {
    if (type !== "application/json") {
      return yield* Effect.fail(
        new UnsupportedMediaType({
          message: "this endpoint takes a JSON body (Content-Type: application/json)",
          expected: "application/json"
        })
      )
    }
    const body = yield* RequestBody
    const text = body.utf8()
    if (text === undefined) {
      return yield* Effect.fail(InvalidInput.of([{ path: "body", message: "must be valid UTF-8" }], "the body is not valid UTF-8"))
    }
    const json = body.json()
    if (!json.ok) {
      return yield* Effect.fail(
        InvalidInput.of([{ path: "body", message: `malformed JSON: ${clip((json.error as Error).message)}` }], "malformed JSON body")
      )
    }
    const parsed = json.value
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      return yield* Effect.fail(
        InvalidInput.of([{ path: "body", message: "must be a JSON object" }], "the body must be a JSON object")
      )
    }
    const textIssues = jsonTextIssues(parsed, { skipItemsOf: info.itemwise })
    if (textIssues.length > 0) {
      return yield* Effect.fail(InvalidInput.of(textIssues, "the body holds text or nesting the service refuses"))
    }
  } else if (info.body === "multipart" && type !== "multipart/form-data") {
    return yield* Effect.fail(
      new UnsupportedMediaType({
        message: "this endpoint takes multipart/form-data",
        expected: "multipart/form-data"
      })
    )
  }
  return yield* httpEffect
})

/**
 * Text rules of DECISIONS §1 on what the decoders will see (path and query bytes, then the body),
 * and the body's media type. A JSON body must be valid UTF-8 and a JSON object.
 */
export const CheckedInputLive = Layer.succeed(CheckedInput)((httpEffect, { endpoint, group }) => {
  const info = routeInfo(group, endpoint)
  if (info.body === "none") {
    // No body to check (the router answers a body sent to a GET like any other).
    return Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request): Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled | InvalidInput> => {
        const failure = urlFailure(request.url)
        return failure === undefined ? httpEffect : Effect.fail(failure)
      }
    )
  }
  return checkedBody(httpEffect, info)
})

/**
 * A kept answer, byte for byte, marked as a replay. An error answer goes with the error its bytes
 * encode (for the request log and the metrics, and its Retry-After), read back from them: the
 * answer is kept as bytes, not as the error it was made of.
 */
const replayed = (kept: { readonly status: number; readonly body: Uint8Array; readonly contentType: string }) => {
  const error = keptError(kept)
  const response = HttpServerResponse.uint8Array(kept.body, {
    status: kept.status,
    contentType: kept.contentType,
    headers: { ...(error === undefined ? {} : errorHeaders(error)), "idempotent-replayed": "true" }
  })
  return error === undefined ? response : answerOf(error, response)
}

/**
 * Safe retries (DECISIONS §11): a POST with an Idempotency-Key runs once per client and key, crash
 * included; its answer, as the client gets it, is kept for the repeats in the transaction of the
 * endpoint's writes (Idempotency.once). Once the key is held the request runs to its end even if
 * the client goes away, so that the answer is there for the retry.
 */
export const IdempotentLive = Layer.effect(
  Idempotent,
  Effect.gen(function*() {
    const idempotency = yield* Idempotency
    const signer = yield* Signer

    const keptAnswer = (response: HttpServerResponse.HttpServerResponse): Answer | undefined =>
      response.body._tag === "Uint8Array"
        ? { status: response.status, body: response.body.body, contentType: response.body.contentType }
        : undefined

    // Made once per layer, not per route (as in AuthenticatedLive).
    const idempotent = Effect.fnUntraced(function*(
      httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>,
      computedAnswer: boolean
    ) {
      const request = yield* HttpServerRequest.HttpServerRequest
      const key = request.headers["idempotency-key"]
      if (key === undefined) return yield* httpEffect
      if (!isValidIdempotencyKey(key)) {
        return yield* Effect.fail(
          InvalidInput.of([{ path: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters" }])
        )
      }
      const caller = yield* Caller
      const { path, rawQuery } = splitUrl(request.url)
      const fingerprint = requestFingerprint({
        method: request.method,
        path,
        sortedQuery: sortedQuery(rawQuery),
        bodyMd5: signer.bodyMd5((yield* RequestBody).bytes)
      })
      const attempt = yield* Effect.uninterruptible(
        (computedAnswer ? idempotency.onceComputed : idempotency.once)({ appKey: caller.appKey, key, fingerprint }, httpEffect, {
          recover: (cause) => responseOfCause(cause),
          answerOf: keptAnswer
        })
      )
      switch (attempt._tag) {
        case "Ran":
          return attempt.value
        case "Reused":
          return yield* Effect.fail(
            new IdempotencyKeyReused({
              message: "this Idempotency-Key was first sent with a different request; use a new key for a new request"
            })
          )
        case "InProgress":
          // Its answer carries data.retry_after as Retry-After too.
          return yield* Effect.fail(
            new IdempotencyKeyInProgress({
              message: "the first request with this Idempotency-Key is still running; retry shortly",
              retry_after: attempt.retryAfterSeconds
            })
          )
        case "Replay":
          return replayed(attempt)
      }
    })

    return (httpEffect, { endpoint, group }) => {
      // Only a POST can carry a key that counts (DECISIONS §11); other methods pass untouched.
      if (endpoint.method !== "POST") return httpEffect
      const { computedAnswer } = routeInfo(group, endpoint)
      return idempotent(httpEffect, computedAnswer)
    }
  })
)

const deprecatedSecret = new Forbidden({
  error: "deprecated_secret",
  message: "this request was signed with the previous app_secret, which may not change credentials or webhook settings",
  hint: "sign with the current app_secret (the one the last rotation answered)"
})

/** Operations that need the current secret (DECISIONS §13): 403 deprecated_secret to the previous one. */
export const CurrentSecretLive = Layer.succeed(CurrentSecret)((httpEffect) =>
  Effect.flatMap(
    Caller,
    (caller): Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled | Forbidden> =>
      caller.deprecatedSecret ? Effect.fail(deprecatedSecret) : httpEffect
  )
)

const outOfScope = new OutOfScope({
  message: "this operation is open only to clients not bound to companies (its records belong to no company, or it creates one)"
})

/** Operations open only to unscoped clients (DECISIONS §14): 403 out_of_scope to a client bound to companies. */
export const UnscopedLive = Layer.succeed(Unscoped)((httpEffect) =>
  Effect.flatMap(
    Caller,
    (caller): Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled | OutOfScope> =>
      isScoped(caller.scope) ? Effect.fail(outOfScope) : httpEffect
  )
)

/**
 * A self-service limit (DECISIONS §13): the call is a hit on the client's window of its action,
 * shared by every API instance. The hit and the call run in one transaction (a savepoint of the
 * Idempotency-Key's), so a refused hit, or a call that fails, does not count, and calls of one
 * client's action take turns on the window's row.
 */
export const ActionLimitedLive = Layer.effect(
  ActionLimited,
  Effect.gen(function*() {
    const windows = yield* ActionWindowsRepo
    const tx = yield* Transaction
    // Made once per layer, not per route (as in AuthenticatedLive).
    const limited = Effect.fnUntraced(function*(
      httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>,
      action: LimitedAction,
      windowMs: number
    ) {
      const caller = yield* Caller
      const nowMs = yield* Clock.currentTimeMillis
      const decision = decideHit(action, yield* windows.hit(caller.id, action, nowMs, windowMs), nowMs)
      if (decision._tag === "Refused") {
        // Its answer carries data.retry_after as Retry-After too.
        return yield* Effect.fail(
          new TooManyRequests({
            // No number in the message: the wait is data.retry_after (and Retry-After).
            message: `this operation is limited to ${describeLimit(action)} per client; retry when its window ends (Retry-After)`,
            retry_after: decision.retryAfterSeconds
          })
        )
      }
      return yield* httpEffect
    })

    return (httpEffect, { endpoint, group }) => {
      const action = routeInfo(group, endpoint).actionLimit
      if (action === undefined) return Effect.die(new Error(`route ${endpoint.method} ${endpoint.path} has no ActionLimit`))
      const windowMs = ACTION_LIMITS[action].windowSeconds * 1000
      return tx.run(limited(httpEffect, action, windowMs))
    }
  })
).pipe(Layer.provide([ActionWindowsRepo.layer, Transaction.layer]))

/** The middlewares of the signed groups, and those of some self-service endpoints. */
export const SignedLive = Layer.mergeAll(
  AuthenticatedLive,
  PermittedLive,
  CheckedInputLive,
  IdempotentLive,
  CurrentSecretLive,
  ActionLimitedLive,
  UnscopedLive
)
