// The signature middleware of every signed group: authenticates the caller, applies the
// per-client rate limit, checks the endpoint's permission, the body's media type and text, and
// claims a POST's Idempotency-Key.
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { Signed } from "../../schema/Auth.js"
import { BadRequest, Conflict, Forbidden, TooManyRequests, UnprocessableEntity, UnsupportedMediaType } from "../../schema/Errors.js"
import { Authenticator } from "../auth/Authenticator.js"
import { Signer } from "../auth/Signer.js"
import { isValidIdempotencyKey, requestFingerprint } from "../domain/idempotency.js"
import { sortedQuery, splitUrl } from "../domain/signing.js"
import { clip, decodeUtf8, jsonTextIssues, pathIssues, queryIssues } from "../domain/text.js"
import { Idempotency } from "../services/Idempotency.js"
import { RequestState } from "./RequestState.js"
import { routeKey, ROUTES } from "./routes.js"

const mediaType = (header: string | undefined): string => (header ?? "").split(";")[0]!.trim().toLowerCase()

export const SignedLive = Layer.effect(
  Signed,
  Effect.gen(function*() {
    const auth = yield* Authenticator
    const signer = yield* Signer
    const idempotency = yield* Idempotency

    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const { route } = yield* HttpRouter.RouteContext
      const state = yield* RequestState
      const info = ROUTES.get(routeKey(String(route.method), String(route.path)))
      if (info === undefined || (info.permission === undefined && !info.perRecord)) {
        return yield* Effect.dieMessage(`route ${route.method} ${route.path} has no declared permission`)
      }

      const { bucket, caller, deprecatedSecret, rate } = yield* auth.authenticate({
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: state.body
      })
      state.caller = caller
      if (deprecatedSecret) state.headers["x-secret-deprecated"] = "true"

      const remaining = Math.max(0, Math.floor(bucket.tokens))
      state.headers["ratelimit-limit"] = String(rate.burst)
      state.headers["ratelimit-remaining"] = String(remaining)
      state.headers["ratelimit-reset"] = String(Math.ceil(Math.max(0, rate.burst - bucket.tokens) / rate.rps))
      state.headers["ratelimit-policy"] = `${rate.burst};w=${Math.max(1, Math.round(rate.burst / rate.rps))}`
      if (!bucket.allowed) {
        const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / rate.rps))
        state.headers["retry-after"] = String(retryAfter)
        return yield* new TooManyRequests({ error: "rate_limited", message: "rate limit exceeded", retry_after: retryAfter })
      }

      if (info.permission !== undefined && !caller.permissions.has(info.permission)) {
        return yield* new Forbidden({
          error: "permission_denied",
          message: `this client lacks the permission ${info.permission}`,
          required: info.permission
        })
      }

      // Text rules of DECISIONS §1 on what the decoders will see: path and query bytes, then the body.
      const { path, rawQuery } = splitUrl(request.url)
      const urlIssues = [...pathIssues(path), ...queryIssues(rawQuery)]
      if (urlIssues.length > 0) return yield* BadRequest.invalid(urlIssues, "a path or query parameter is not valid text")

      const type = mediaType(request.headers["content-type"])
      if (info.body === "json") {
        if (type !== "application/json") {
          return yield* new UnsupportedMediaType({
            error: "unsupported_media_type",
            message: "this endpoint takes a JSON body (Content-Type: application/json)",
            expected: "application/json"
          })
        }
        const text = decodeUtf8(state.body)
        if (text === undefined) {
          return yield* BadRequest.invalid([{ path: "body", message: "must be valid UTF-8" }], "the body is not valid UTF-8")
        }
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch (e) {
          return yield* BadRequest.invalid(
            [{ path: "body", message: `malformed JSON: ${clip((e as Error).message)}` }],
            "malformed JSON body"
          )
        }
        if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
          return yield* BadRequest.invalid([{ path: "body", message: "must be a JSON object" }], "the body must be a JSON object")
        }
        state.json = { value: parsed }
        const textIssues = jsonTextIssues(parsed, { skipItemsOf: info.itemwise })
        if (textIssues.length > 0) return yield* BadRequest.invalid(textIssues, "the body holds text or nesting the service refuses")
      } else if (info.body === "multipart" && type !== "multipart/form-data") {
        return yield* new UnsupportedMediaType({
          error: "unsupported_media_type",
          message: "this endpoint takes multipart/form-data",
          expected: "multipart/form-data"
        })
      }

      // Safe retries (DECISIONS §11): a POST with an Idempotency-Key runs once per client and key.
      const key = request.headers["idempotency-key"]
      if (request.method === "POST" && key !== undefined) {
        if (!isValidIdempotencyKey(key)) {
          return yield* BadRequest.invalid([{ path: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters" }])
        }
        const fingerprint = requestFingerprint({
          method: request.method,
          path,
          sortedQuery: sortedQuery(rawQuery),
          bodyMd5: signer.bodyMd5(state.body)
        })
        const attempt = yield* idempotency.begin(caller.appKey, key, fingerprint)
        switch (attempt._tag) {
          case "Run":
            state.idempotency = { appKey: caller.appKey, key }
            break
          case "Reused":
            return yield* new UnprocessableEntity({
              error: "idempotency_key_reused",
              message: "this Idempotency-Key was first sent with a different request; use a new key for a new request"
            })
          case "InProgress":
            state.headers["retry-after"] = String(attempt.retryAfterSeconds)
            return yield* new Conflict({
              error: "idempotency_key_in_progress",
              message: "the first request with this Idempotency-Key is still running; retry shortly",
              retry_after: attempt.retryAfterSeconds
            })
          case "Replay":
            // Not an error: the edge answers the kept response instead of running the endpoint.
            state.replay = attempt
            return yield* Effect.die(new IdempotentReplay())
        }
      }
      return caller
    })
  })
)

/** Ends a repeated POST early; the edge recognises it by `RequestState.replay`. */
export class IdempotentReplay extends Data.TaggedClass("IdempotentReplay")<{}> {}
