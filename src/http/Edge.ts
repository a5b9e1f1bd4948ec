// The one place where every response takes its final shape (DECISIONS §1): the body is read once
// within its size limit, every failure and defect becomes an error envelope, and every response
// gets X-Request-Id and the rate-limit headers; the caller's mask is handed to the success schemas.
import { randomUUID } from "node:crypto"
import type { IncomingMessage } from "node:http"

import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as UrlParams from "@effect/platform/UrlParams"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

import { OpenApiDef } from "../../schema/Api.js"
import { ResponseMask } from "../../schema/Common.js"
import {
  AnyErrorEnvelope,
  type ApiError,
  BadRequest,
  ErrorStatus,
  InternalError,
  isApiError,
  NotFound,
  PayloadTooLarge,
  ServiceUnavailable
} from "../../schema/Errors.js"
import { Masker } from "../auth/Masker.js"
import { AppConfig } from "../Config.js"
import { mergeIssues, renderPath } from "../domain/issues.js"
import { clip } from "../domain/text.js"
import { annotateRequestSpan, observeRequest, requestLogLevel } from "../observability/http.js"
import { isConnectionFailure, isDataException } from "../repos/sqlHelpers.js"
import { Idempotency } from "../services/Idempotency.js"
import { RequestState, type RequestStateShape } from "./RequestState.js"

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
/** Multipart bodies carry the file plus the other parts and their headers. */
const MULTIPART_SLACK = 256 * 1024

const tooLarge = (limit: number) =>
  new PayloadTooLarge({ error: "payload_too_large", message: `request body exceeds ${limit} bytes`, limit })

/**
 * A declared or actual oversize body is still read (and discarded) up to this many bytes before
 * the 413 is sent, so a client that sends `Connection: close` gets the answer rather than a broken
 * pipe; past it the connection is given up.
 */
const DRAIN_CAP = 64 * 1024 * 1024

/**
 * Reads a Node request body, keeping at most `limit` bytes. Past the limit it keeps reading
 * without keeping (up to DRAIN_CAP) and fails once the body has ended.
 */
const readNodeBody = (msg: IncomingMessage, limit: number) =>
  Effect.async<Uint8Array, PayloadTooLarge>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    let over = false
    const finish = (effect: Effect.Effect<Uint8Array, PayloadTooLarge>) => {
      if (!done) {
        done = true
        resume(effect)
      }
    }
    msg.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (!over && size > limit) {
        over = true
        chunks.length = 0
      }
      if (!over) chunks.push(chunk)
      else if (size > DRAIN_CAP) finish(Effect.fail(tooLarge(limit)))
    })
    msg.on("end", () => finish(over ? Effect.fail(tooLarge(limit)) : Effect.succeed(new Uint8Array(Buffer.concat(chunks)))))
    msg.on("error", (err) => finish(Effect.die(err)))
  })

const nodeMessage = (request: HttpServerRequest.HttpServerRequest): IncomingMessage | undefined => {
  try {
    return NodeHttpServerRequest.toIncomingMessage(request)
  } catch {
    return undefined
  }
}

const readBody = (request: HttpServerRequest.HttpServerRequest, limit: number) =>
  Effect.gen(function*() {
    const declared = Number(request.headers["content-length"] ?? "0")
    const msg = nodeMessage(request)
    if (Number.isFinite(declared) && declared > limit && (msg === undefined || declared > DRAIN_CAP)) {
      return yield* Effect.fail(tooLarge(limit))
    }
    if (msg !== undefined) return yield* readNodeBody(msg, limit)
    const buffer = yield* Effect.orDie(request.arrayBuffer)
    if (buffer.byteLength > limit) return yield* Effect.fail(tooLarge(limit))
    return new Uint8Array(buffer)
  })

/**
 * A multipart request rebuilt over the already-read bytes: the platform's multipart parser reads a
 * stream, so it gets a web Request (uploads are rare and large; the copy does not matter there).
 */
const multipartOver = (request: HttpServerRequest.HttpServerRequest, body: Uint8Array): HttpServerRequest.HttpServerRequest => {
  const headers = new Headers()
  for (const [k, v] of Object.entries(request.headers)) headers.set(k, v)
  const web = new Request(new URL(request.url, "http://localhost"), { method: request.method, headers, body })
  return HttpServerRequest.fromWeb(web).modify({ url: request.url, remoteAddress: Option.getOrUndefined(request.remoteAddress) })
}

/**
 * The request as the router's decoders see it: the same request, whose body readers answer from
 * the bytes read once (and the JSON the signature middleware already parsed) instead of the
 * consumed Node stream. Nothing else is copied.
 */
const withBody = (
  request: HttpServerRequest.HttpServerRequest,
  body: Uint8Array,
  state: RequestStateShape
): HttpServerRequest.HttpServerRequest => {
  if (request.method !== "GET" && request.method !== "HEAD" && mediaTypeOf(request).startsWith("multipart/")) {
    return multipartOver(request, body)
  }
  let text: string | undefined
  const textOf = () => (text ??= Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"))
  const decodeError = (cause: unknown) => new HttpServerError.RequestError({ request, reason: "Decode", cause })
  return Object.create(request, {
    text: { get: () => Effect.sync(textOf) },
    json: {
      get: () =>
        state.json !== undefined ? Effect.succeed(state.json.value) : Effect.try({
          try: () => {
            const t = textOf()
            return t === "" ? null : JSON.parse(t) as unknown
          },
          catch: decodeError
        })
    },
    urlParamsBody: {
      get: () => Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(textOf())), catch: decodeError })
    },
    arrayBuffer: { get: () => Effect.succeed(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength)) },
    stream: { get: () => Stream.succeed(body) },
    modify: {
      value: (options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]) => withBody(request.modify(options), body, state)
    }
  }) as HttpServerRequest.HttpServerRequest
}

const mediaTypeOf = (request: HttpServerRequest.HttpServerRequest): string => (request.headers["content-type"] ?? "").toLowerCase()

const encodeError = Schema.encodeSync(AnyErrorEnvelope)

/** The app_key a request sent, as far as it is fit for a log line (an unauthenticated request too). */
const sentAppKey = (value: string | undefined): string | null => value === undefined || value === "" ? null : clip(value, 64)

export const errorResponse = (error: ApiError): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(encodeError(error), {
    status: ErrorStatus[error._tag],
    ...(error._tag === "ServiceUnavailable" && error.retry_after !== undefined
      ? { headers: { "retry-after": String(error.retry_after) } }
      : {})
  })

/** Seconds a client should wait before retrying while the database is unreachable. */
const DATABASE_RETRY_AFTER = 2

/** Every cause becomes an ApiError; anything unforeseen is a logged 500. */
const toApiError = (cause: Cause.Cause<unknown>, requestId: string): Effect.Effect<ApiError> => {
  const failure = Cause.failureOption(cause)
  const defect = Option.isNone(failure) ? Cause.dieOption(cause) : Option.none()
  const err: unknown = Option.isSome(failure) ? failure.value : Option.getOrUndefined(defect)
  if (isApiError(err)) return Effect.succeed(err)
  if (err instanceof HttpApiError.HttpApiDecodeError) {
    return Effect.succeed(BadRequest.invalid(
      mergeIssues(err.issues.map((i) => ({ path: renderPath(i.path) || "body", message: clip(i.message) }))),
      "invalid parameters"
    ))
  }
  if (isConnectionFailure(err)) {
    return Effect.as(
      Effect.logWarning("database unavailable", Cause.pretty(cause)).pipe(Effect.annotateLogs({ request_id: requestId })),
      new ServiceUnavailable({
        error: "service_unavailable",
        message: "the database is unavailable for a moment; retry shortly",
        retry_after: DATABASE_RETRY_AFTER
      })
    )
  }
  if (isDataException(err)) {
    // The contract should have refused this value; it is still the client's input, not a 500.
    return Effect.as(
      Effect.logWarning("database refused a value the contract let through", Cause.pretty(cause)).pipe(
        Effect.annotateLogs({ request_id: requestId })
      ),
      BadRequest.invalid([{ path: "body", message: "a value is out of range or not storable" }], "invalid parameters")
    )
  }
  if (HttpServerError.isServerError(err) && err._tag === "RouteNotFound") {
    return Effect.succeed(new NotFound({ error: "not_found", resource: "route", message: "no such endpoint" }))
  }
  if (
    typeof err === "object" && err !== null && "_tag" in err && err._tag === "MultipartError" && "reason" in err &&
    (err.reason === "FileTooLarge" || err.reason === "BodyTooLarge")
  ) {
    return Effect.succeed(
      new PayloadTooLarge({ error: "payload_too_large", message: "uploaded file is too large", limit: 10 * 1024 * 1024 })
    )
  }
  return Effect.as(
    Effect.logError("request failed with a defect", Cause.pretty(cause)).pipe(Effect.annotateLogs({ request_id: requestId })),
    new InternalError({ error: "internal_error", message: "internal error; quote the request id when reporting it", request_id: requestId })
  )
}

/** The kept answer of a repeated POST, byte for byte, marked as a replay. */
const replayed = (kept: NonNullable<RequestStateShape["replay"]>): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.uint8Array(kept.body, {
    status: kept.status,
    contentType: kept.contentType,
    headers: { "idempotent-replayed": "true" }
  })

export const EdgeLive = HttpApiBuilder.middleware(
  OpenApiDef,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const idempotency = yield* Idempotency
    const masker = yield* Masker
    return (app) =>
      Effect.gen(function*() {
        const original = yield* HttpServerRequest.HttpServerRequest
        const given = original.headers["x-request-id"]
        const requestId = given !== undefined && REQUEST_ID.test(given) ? given : randomUUID()
        const state: RequestStateShape = { requestId, body: new Uint8Array(0), caller: undefined, headers: {} }
        const started = yield* Clock.currentTimeMillis
        // Real time for the latency metrics (Clock is the test clock in tests).
        const startedAt = performance.now()
        yield* annotateRequestSpan(requestId)
        const limit = mediaTypeOf(original).startsWith("multipart/")
          ? config.cardFileLimitBytes + MULTIPART_SLACK
          : config.jsonBodyLimitBytes

        // A POST under an Idempotency-Key runs to its end even if the client goes away, so that its
        // answer is kept for the retry (DECISIONS §11).
        const retriable = original.method === "POST" && original.headers["idempotency-key"] !== undefined
        let response = yield* Effect.gen(function*() {
          const body = original.method === "GET" || original.method === "HEAD" ? new Uint8Array(0) : yield* readBody(original, limit)
          state.body = body
          // The request's services in one step: each provideService copies the whole context (some
          // sixty services), and this runs for every request.
          const services = Context.make(RequestState, state).pipe(
            // Read when the success is encoded, after the signature middleware has named the caller.
            Context.add(ResponseMask, (data: unknown) => masker.forCaller(state.caller)(data)),
            Context.add(HttpServerRequest.HttpServerRequest, withBody(original, body, state))
          )
          const run = Effect.provide(app, services)
          return yield* (retriable ? Effect.uninterruptible(run) : run)
        }).pipe(
          Effect.catchAllCause((cause) =>
            state.replay !== undefined
              ? Effect.succeed(replayed(state.replay))
              : Cause.isInterruptedOnly(cause)
              ? Effect.interrupt
              : Effect.map(toApiError(cause, requestId), (error) => {
                state.error = error.error
                return errorResponse(error)
              })
          )
        )
        response = HttpServerResponse.setHeaders(response, { ...state.headers, "x-request-id": requestId })
        if (state.idempotency !== undefined) {
          const { appKey, key } = state.idempotency
          const kept = response.body._tag === "Uint8Array"
            ? idempotency.finish(appKey, key, { status: response.status, body: response.body.body, contentType: response.body.contentType })
            : idempotency.abandon(appKey, key)
          // The answer is already decided; a failure to keep it only costs the retry a real run.
          yield* Effect.catchAllCause(kept, (cause) => Effect.logWarning("could not keep an idempotent answer", Cause.pretty(cause)))
        }
        const ended = yield* Clock.currentTimeMillis
        yield* observeRequest({ method: original.method, url: original.url, status: response.status, startedAt, error: state.error })
        yield* Effect.logWithLevel(requestLogLevel(original.url), "request").pipe(
          Effect.annotateLogs({
            request_id: requestId,
            method: original.method,
            path: original.url.split("?")[0],
            status: response.status,
            ms: ended - started,
            app_key: state.caller?.appKey ?? sentAppKey(original.headers["x-app-key"]),
            ...(state.error !== undefined ? { error: state.error } : {})
          })
        )
        return response
      })
  }),
  { withContext: true }
)
