// One outbound webhook request (DECISIONS §9): a POST of the payload with the Standard Webhooks
// headers to the URL the operator configured. Redirects are not followed (a 3xx is a failed
// attempt), the whole exchange has a deadline, and at most a capped part of the answer is read.
// The service is what the webhook use cases call, so a test can put a recording fake in its place.
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

import { Signer, type SignerShape } from "../auth/Signer.js"
import { type AttemptResult, isWebhookUrl } from "../domain/webhooks.js"

export interface WebhookRequest {
  readonly url: string
  /** `webhook-id`: the event id, the same on every attempt. */
  readonly id: string
  readonly body: string
  /** The secrets that sign (the previous one too during a rotation). */
  readonly secrets: ReadonlyArray<string>
  readonly timeoutMs: number
  readonly responseLimitBytes: number
}

export interface WebhookResponse {
  readonly result: AttemptResult
  readonly startedAt: number
  readonly durationMs: number
  /** The start of the answer's body, for the operator (at most EXCERPT_CHARS). */
  readonly response: string | null
}

const EXCERPT_CHARS = 500

/** Reads at most `limit` bytes of a body and drops the rest (the connection is cut, not reused). */
const readCapped = (response: HttpClientResponse.HttpClientResponse, limit: number) =>
  Effect.suspend(() => {
    let size = 0
    return response.stream.pipe(
      Stream.takeUntil((chunk) => (size += chunk.length) >= limit),
      Stream.runCollect,
      Effect.map((chunks) => Buffer.concat(chunks).subarray(0, limit).toString("utf8")),
      // An answer without a body (a 204) is an empty excerpt.
      Effect.catchIf(
        (error) => error.reason._tag === "EmptyBodyError",
        () => Effect.succeed("")
      )
    )
  })

/** Why there was no answer, in a line: the system error code where there is one. */
const describeError = (error: unknown): string => {
  // The HTTP client wraps what fetch threw; the line is about that.
  const thrown = HttpClientError.isHttpClientError(error) && "cause" in error.reason && error.reason.cause !== undefined
    ? error.reason.cause
    : error
  const cause = (thrown as { cause?: { code?: unknown; message?: unknown } } | null)?.cause
  if (typeof cause?.code === "string") return `${cause.code}${typeof cause.message === "string" ? `: ${cause.message}` : ""}`
  return thrown instanceof Error ? thrown.message : String(thrown)
}

/** Sends one attempt; never fails (a failure is an attempt without an answer). */
export const sendWebhook =
  (signer: SignerShape, client: HttpClient.HttpClient) => (request: WebhookRequest): Effect.Effect<WebhookResponse> =>
    Effect.gen(function*() {
      const startedAt = yield* Clock.currentTimeMillis
      if (!isWebhookUrl(request.url)) {
        return { result: { _tag: "NoAnswer", error: "the webhook URL is not http(s)" }, startedAt, durationMs: 0, response: null }
      }
      const timestamp = Math.floor(startedAt / 1000)
      const post = HttpClientRequest.post(request.url).pipe(
        HttpClientRequest.setHeaders({
          "content-type": "application/json",
          "user-agent": "matchmaking-open-api-webhooks/1",
          "webhook-id": request.id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signer.webhookSignature(request.secrets, request.id, timestamp, request.body)
        }),
        HttpClientRequest.bodyText(request.body, "application/json")
      )
      const t0 = performance.now()
      const outcome = yield* Effect.gen(function*() {
        const res = yield* client.execute(post)
        const text = yield* readCapped(res, request.responseLimitBytes)
        const result: AttemptResult = { _tag: "Answered", status: res.status, retryAfter: res.headers["retry-after"] ?? undefined }
        return { result, response: text.slice(0, EXCERPT_CHARS) }
      }).pipe(
        Effect.timeout(request.timeoutMs),
        // The receiver gets exactly the headers above: no trace context, no redirects followed.
        Effect.provideService(HttpClient.TracerPropagationEnabled, false),
        Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" }),
        Effect.catch((error) => {
          const result: AttemptResult = {
            _tag: "NoAnswer",
            error: Cause.isTimeoutError(error) ? `no answer within ${request.timeoutMs} ms` : describeError(error)
          }
          return Effect.succeed({ result, response: null })
        })
      )
      return { ...outcome, startedAt, durationMs: Math.round(performance.now() - t0) }
    })

/** The outbound webhook call as a service: `sendWebhook` by default, a fake in tests. */
export class WebhookSender extends Context.Service<WebhookSender>()("Webhooks/Sender", {
  make: Effect.gen(function*() {
    const signer = yield* Signer
    const client = yield* HttpClient.HttpClient
    return { send: sendWebhook(signer, client) }
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(WebhookSender, WebhookSender.make)
  static readonly layer = WebhookSender.layerWithoutDependencies.pipe(Layer.provide([Signer.layer, FetchHttpClient.layer]))
}
