// Typed client for integrators, derived from the contract in schema/: every request is signed
// (DECISIONS §2) over the exact bytes it sends, multipart bodies included; every POST carries an
// Idempotency-Key (DECISIONS §11), so a lost answer is retried safely, re-signed with a fresh nonce.
import { randomBytes, randomUUID } from "node:crypto"

import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpBody from "effect/http/HttpBody"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"

import { OpenApiDef } from "../../schema/Api.js"
import { Signer, type SignerShape } from "../auth/Signer.js"

export interface Credentials {
  readonly appKey: string
  readonly appSecret: string
}

export interface SignOptions {
  /** Overrides for tests: a fixed nonce or timestamp. */
  readonly nonce?: () => string
  readonly timestamp?: (nowMs: number) => number
}

export const newNonce = (): string => randomBytes(18).toString("base64url")

/** The exact bytes of a request body, and the content type they go with. */
const bodyBytes = (body: HttpBody.HttpBody): Effect.Effect<{ bytes: Uint8Array; contentType?: string }> => {
  switch (body._tag) {
    case "Empty":
      return Effect.succeed({ bytes: new Uint8Array(0) })
    case "Uint8Array":
      return Effect.succeed({ bytes: body.body, contentType: body.contentType })
    case "Raw":
      if (typeof body.body === "string") {
        return Effect.succeed({
          bytes: new TextEncoder().encode(body.body),
          ...(body.contentType ? { contentType: body.contentType } : {})
        })
      }
      if (body.body instanceof Uint8Array) {
        return Effect.succeed({ bytes: body.body, ...(body.contentType ? { contentType: body.contentType } : {}) })
      }
      return Effect.die(new Error("cannot sign a raw body of this kind"))
    case "FormData":
      // Serialise the form once to learn its bytes and boundary, then send exactly those bytes.
      return Effect.promise(async () => {
        const response = new Response(body.formData)
        return { bytes: new Uint8Array(await response.arrayBuffer()), contentType: response.headers.get("content-type")! }
      })
    case "Stream":
      return Effect.die(new Error("cannot sign a streamed body"))
  }
}

/** signRequest's work: one generator function for every request (docs/contributor.md, "Generators are made once"). */
const signed = Effect.fnUntraced(function*(
  signer: SignerShape,
  credentials: Credentials,
  options: SignOptions,
  request: HttpClientRequest.HttpClientRequest
) {
  const { bytes, contentType } = yield* bodyBytes(request.body)
  const nowMs = yield* Clock.currentTimeMillis
  const timestamp = String(options.timestamp ? options.timestamp(nowMs) : Math.floor(nowMs / 1000))
  const nonce = options.nonce ? options.nonce() : newNonce()
  // The query is sent as URLSearchParams serialises it; sign that same text.
  const url = new URL(request.url)
  for (const [k, v] of request.urlParams) url.searchParams.append(k, Redacted.isRedacted(v) ? Redacted.value(v) : v)
  const rawQuery = url.search.startsWith("?") ? url.search.slice(1) : ""
  const signature = signer.sign(credentials.appSecret, {
    method: request.method,
    path: url.pathname,
    rawQuery,
    appKey: credentials.appKey,
    timestamp,
    nonce,
    body: bytes
  })
  const withBody = request.body._tag === "FormData" || request.body._tag === "Raw"
    ? HttpClientRequest.bodyUint8Array(request, bytes, contentType)
    : request
  return withBody.pipe(
    HttpClientRequest.setHeaders({
      "x-app-key": credentials.appKey,
      "x-timestamp": timestamp,
      "x-nonce": nonce,
      "x-signature": signature
    })
  )
})

/** Adds X-App-Key, X-Timestamp, X-Nonce and X-Signature to a request with an absolute URL. */
export const signRequest =
  (signer: SignerShape, credentials: Credentials, options: SignOptions = {}) =>
  (request: HttpClientRequest.HttpClientRequest): Effect.Effect<HttpClientRequest.HttpClientRequest> =>
    signed(signer, credentials, options, request)

export interface ClientOptions extends SignOptions {
  /**
   * Retries of one call after a lost connection, a 429, a 5xx or a 409 idempotency_key_in_progress
   * (default 3; 0 turns retrying off). Each attempt is signed again with a fresh nonce; a POST
   * keeps its Idempotency-Key, so the server runs it at most once.
   */
  readonly retries?: number
  /** Send an Idempotency-Key with every POST that has none (default true). */
  readonly idempotencyKeys?: boolean
}

/** Gives a POST a fresh Idempotency-Key unless the caller set one (one key per call, kept across its retries). */
export const withIdempotencyKey = (request: HttpClientRequest.HttpClientRequest): HttpClientRequest.HttpClientRequest =>
  request.method === "POST" && request.headers["idempotency-key"] === undefined
    ? HttpClientRequest.setHeader(request, "idempotency-key", randomUUID())
    : request

/** An answer worth another attempt: the server may answer differently in a moment. */
const retriable = (response: HttpClientResponse.HttpClientResponse): boolean =>
  response.status === 429 || response.status >= 500 ||
  // idempotency_key_in_progress carries Retry-After; task_locked does not and is final.
  (response.status === 409 && response.headers["retry-after"] !== undefined)

/** A retriable answer, failed for the retry schedule; the last one is handed back as the answer. */
class RetriableAnswer {
  readonly _tag = "RetriableAnswer"
  constructor(readonly response: HttpClientResponse.HttpClientResponse) {}
}

/**
 * The pauses between attempts: exponential from 200 ms with ±20% jitter, or the server's
 * Retry-After when it gave one; never more than 10 s; at most `retries` more attempts.
 */
const retrySchedule = (retries: number) =>
  Schedule.exponential("200 millis").pipe(
    Schedule.jittered,
    Schedule.modifyDelay(({ duration, input }: Schedule.Metadata<Duration.Duration, unknown>) => {
      const retryAfter = input instanceof RetriableAnswer ? Number(input.response.headers["retry-after"]) : Number.NaN
      const pause = Number.isFinite(retryAfter) && retryAfter > 0 ? Duration.seconds(retryAfter) : duration
      return Effect.succeed(Duration.min(pause, Duration.seconds(10)))
    }),
    Schedule.upTo({ times: retries })
  )

/** Sends again while the answer is retriable or the connection failed, on `retrySchedule`. */
const withRetries = (retries: number) => <E, R>(send: Effect.Effect<HttpClientResponse.HttpClientResponse, E, R>) =>
  send.pipe(
    Effect.flatMap((response) => retriable(response) ? Effect.fail(new RetriableAnswer(response)) : Effect.succeed(response)),
    Effect.retry({
      schedule: retrySchedule(retries),
      while: (error: E | RetriableAnswer) => error instanceof RetriableAnswer || isTransportError(error)
    }),
    Effect.catchIf((error): error is RetriableAnswer => error instanceof RetriableAnswer, (last) => Effect.succeed(last.response))
  )

const isTransportError = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "HttpClientError" && "reason" in error &&
  typeof error.reason === "object" && error.reason !== null && "_tag" in error.reason && error.reason._tag === "TransportError"

/**
 * The Open API client: `client.matchmakers.list({ query: {...} })` and so on. Signs with the
 * `Signer` of its context (`Signer.layer` in production).
 */
export const makeOpenApiClient = (baseUrl: string, credentials: Credentials, options: ClientOptions = {}) =>
  Effect.flatMap(Effect.service(Signer), (signer) =>
    HttpApiClient.make(OpenApiDef, {
      transformClient: (client) => {
        const retries = options.retries ?? 3
        // The request effect runs again on each retry (URL, then a fresh signature and nonce); the
        // Idempotency-Key is set on the input, once per call, so every attempt carries the same key.
        const signed = client.pipe(
          HttpClient.mapRequest(HttpClientRequest.prependUrl(baseUrl)),
          HttpClient.mapRequestEffect(signRequest(signer, credentials, options))
        )
        const retrying = retries <= 0 ? signed : signed.pipe(HttpClient.transformResponse(withRetries(retries)))
        return options.idempotencyKeys === false ? retrying : retrying.pipe(HttpClient.mapRequestInput(withIdempotencyKey))
      }
    }))
