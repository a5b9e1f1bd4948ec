// The one place where every response takes its final shape (DECISIONS §1): the body is read once
// within its size limit, every failure and defect becomes an error envelope, and every response
// gets X-Request-Id; each answer is counted, timed and logged with the reason of the error it was
// made of. A global router middleware: it wraps the routing itself, so an unknown route
// and an oversize body get the envelope too.
import { IncomingMessage } from "node:http"

import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as UrlParams from "effect/http/UrlParams"
import * as Option from "effect/Option"
import type * as Types from "effect/Types"

import { PayloadTooLarge } from "../../schema/EdgeErrors.js"
import { reasonOf } from "../../schema/Errors.js"
import { AppConfig } from "../Config.js"
import { InvalidInput } from "../domain/errors.js"
import { pathOf } from "../domain/signing.js"
import { clip } from "../domain/text.js"
import { answeredError } from "../observability/answers.js"
import { hasPathDelimiter } from "./allow.js"
import { responseOfCause } from "./errors.js"
import { observeRequest, requestLogLevel } from "./observe.js"
import { makeRequestBody, type RequestBodyShape, requestIdFor, RequestScope } from "./RequestState.js"
/** Multipart bodies carry the file plus the other parts and their headers. */
const MULTIPART_SLACK = 256 * 1024

const tooLarge = (limit: number) => new PayloadTooLarge({ message: `request body exceeds ${limit} bytes`, limit })

/**
 * A declared or actual oversize body is still read (and discarded) up to this many bytes before
 * the 413 is sent, so a client that sends `Connection: close` gets the answer rather than a broken
 * pipe; past it the connection is given up.
 */
const DRAIN_CAP = 64 * 1024 * 1024

const EMPTY = new Uint8Array(0)

/**
 * Reads a Node request body, keeping at most `limit` bytes. Past the limit it keeps reading
 * without keeping (up to DRAIN_CAP) and fails once the body has ended.
 */
const readNodeBody = (msg: IncomingMessage, limit: number) =>
  Effect.callback<Uint8Array, PayloadTooLarge>((resume) => {
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
    msg.on("end", () =>
      finish(
        over ? Effect.fail(tooLarge(limit)) : Effect.succeed(chunks.length === 0 ? EMPTY : new Uint8Array(Buffer.concat(chunks)))
      ))
    msg.on("error", (err) => finish(Effect.die(err)))
  })

/** Node answers `Expect: 100-continue` only when asked to (the server listens for checkContinue). */
const continueIfExpected = (request: HttpServerRequest.HttpServerRequest): void => {
  if (request.headers["expect"]?.toLowerCase() !== "100-continue") return
  const response = NodeHttpServerRequest.toServerResponse(request)
  if (!response.headersSent) response.writeContinue()
}

const readBody = (request: HttpServerRequest.HttpServerRequest, limit: number): Effect.Effect<Uint8Array, PayloadTooLarge> => {
  const declared = Number(request.headers["content-length"] ?? "0")
  const msg = request.source instanceof IncomingMessage ? request.source : undefined
  const declaredOver = Number.isFinite(declared) && declared > limit
  if (declaredOver && (msg === undefined || declared > DRAIN_CAP || request.headers["expect"] !== undefined)) {
    return Effect.fail(tooLarge(limit))
  }
  if (msg !== undefined) {
    continueIfExpected(request)
    return readNodeBody(msg, limit)
  }
  return Effect.flatMap(
    Effect.orDie(request.arrayBuffer),
    (buffer) => buffer.byteLength > limit ? Effect.fail(tooLarge(limit)) : Effect.succeed(new Uint8Array(buffer))
  )
}

/**
 * The request as the router's decoders see it: the same method, URL, headers and addresses, over
 * the bytes read once instead of the consumed Node stream (a request built from its parts, with
 * Effect's public constructors: the body is the bytes, read synchronously, any method allowed).
 */
export const withBody = (request: HttpServerRequest.HttpServerRequest, body: RequestBodyShape): HttpServerRequest.HttpServerRequest =>
  HttpServerRequest.fromClientRequest(
    HttpClientRequest.makeWith(
      request.method,
      // Absolute: the conversion parses the URL, and a relative one fails that parse at the cost of
      // an exception with its stack, on every request with a body (in a loop: 8.7 µs a request
      // against 0.4; about 30 µs of a POST's CPU sampled by bench:profile under load). The URL
      // the request keeps is the one sent (below).
      request.url.startsWith("/") ? `http://localhost${request.url}` : request.url,
      UrlParams.empty,
      Option.none(),
      request.headers,
      HttpBody.uint8Array(body.bytes, body.contentType)
    )
  ).modify({
    // As sent: a request target in absolute form would otherwise be normalised.
    url: request.url,
    remoteAddress: request.remoteAddress,
    peerAddress: request.peerAddress,
    ...(request.protocol !== undefined ? { protocol: request.protocol } : {})
  })

/**
 * An HTTP/1.1 request must name its host (RFC 9112 §3.2: a 400); HTTP/1.0 need not. Node would
 * answer it with an empty 400 (the server leaves it to the edge: Transport.ts).
 */
const lacksHost = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.headers["host"] === undefined && request.source instanceof IncomingMessage && request.source.httpVersionMajor === 1 &&
  request.source.httpVersionMinor >= 1

const noHost = InvalidInput.of(
  [{ path: "Host", message: "an HTTP/1.1 request must carry a Host header" }],
  "the HTTP request is malformed"
)

const mediaTypeOf = (request: HttpServerRequest.HttpServerRequest): string => (request.headers["content-type"] ?? "").toLowerCase()

/** The app_key a request sent, as far as it is fit for a log line (an unauthenticated request too). */
const sentAppKey = (value: string | undefined): string | null => value === undefined || value === "" ? null : clip(value, 64)

type Handler = Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>

/**
 * The request served inside the edge: its host and path checked, its body read within `limit`,
 * and the app run with the request's id and body. Defined once, outside the edge's generator: a
 * generator function written inside another (`yield* Effect.gen(function*() {…})`) is a new
 * function on every request, and V8 gives each new generator function a prototype and a map of its
 * own, in the old generation — where they keep the request's objects alive through every young
 * collection until the next full one (docs/benchmarks.md, "Generators made per request").
 */
const served = Effect.fnUntraced(function*(
  app: Handler,
  original: HttpServerRequest.HttpServerRequest,
  requestId: string,
  limit: number
) {
  if (lacksHost(original)) return yield* Effect.fail(noHost)
  const bodiless = original.method === "GET" || original.method === "HEAD"
  const bytes = bodiless ? EMPTY : yield* readBody(original, limit)
  if (hasPathDelimiter(original.url)) {
    // The router would cut the path at `;` and route what comes before (DECISIONS §1).
    return yield* Effect.fail(InvalidInput.of([{ path: "path", message: "must not contain ';' or '#'" }], "the path is not valid"))
  }
  const body = makeRequestBody(bytes, original.headers["content-type"] ?? "")
  // The request's values as overlays on the fiber's context: provideService adds one entry in
  // O(1), where provideContext would merge, copying the whole context (some sixty services),
  // on every request. As few as possible: past eight overlays the next one copies it too.
  const scoped = Effect.provideService(app, RequestScope, { id: requestId, body })
  return yield* bodiless ? scoped : Effect.provideService(scoped, HttpServerRequest.HttpServerRequest, withBody(original, body))
})

interface Limits {
  readonly json: number
  readonly multipart: number
}

/** One request through the edge, around `app`. */
const edge = Effect.fnUntraced(function*(app: Handler, limits: Limits) {
  const original = yield* HttpServerRequest.HttpServerRequest
  const requestId = requestIdFor(original.headers["x-request-id"])
  const started = yield* Clock.currentTimeMillis
  // Real time for the latency metrics (Clock is the test clock in tests).
  const startedAt = performance.now()
  yield* Effect.annotateCurrentSpan("http.request_id", requestId)
  const limit = mediaTypeOf(original).startsWith("multipart/") ? limits.multipart : limits.json

  let response = yield* served(app, original, requestId, limit).pipe(
    Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.interrupt : responseOfCause(cause, requestId))
  )
  // The error the answer was made of (here, in a middleware, or the one a replay was kept with):
  // its reason for the metrics and the log line; its headers came with the answer.
  const answered = answeredError(response)
  const error = answered === undefined ? undefined : reasonOf(answered)
  response = HttpServerResponse.setHeader(response, "x-request-id", requestId)
  const ended = yield* Clock.currentTimeMillis
  yield* observeRequest({ method: original.method, url: original.url, status: response.status, startedAt, error })
  yield* Effect.logWithLevel(requestLogLevel(original.url))("request").pipe(
    Effect.annotateLogs({
      request_id: requestId,
      method: original.method,
      path: pathOf(original.url),
      status: response.status,
      ms: ended - started,
      app_key: sentAppKey(original.headers["x-app-key"]),
      ...(error !== undefined ? { error } : {})
    })
  )
  return response
})

// The edge's generator function is made once (docs/contributor.md, "Generators are made once"),
// not each time the router's handler is built.
const makeEdge = (limits: Limits) =>
(
  app: Handler
): Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest> => edge(app, limits)

/**
 * The edge around every route (and the router's own 404). Provides the request's body and id to
 * everything inside; the middlewares of signed routes provide the caller in turn.
 */
export const EdgeLive = HttpRouter.middleware(
  Effect.map(AppConfig, (config) => makeEdge({ json: config.jsonBodyLimitBytes, multipart: config.cardFileLimitBytes + MULTIPART_SLACK })),
  { global: true }
)
