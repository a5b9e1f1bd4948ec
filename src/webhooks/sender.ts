// One outbound webhook request (DECISIONS §9, §13): a POST of the payload with the Standard Webhooks
// headers to the client's URL. Each attempt resolves the host again, checks every address, and
// connects only to those checked addresses (the connection's lookup answers from them: no second
// lookup between check and connect; TLS still verifies the host name). Redirects are not followed
// (a 3xx is a failed attempt), the whole exchange has a deadline, and at most a capped part of the
// answer is read. What an attempt records names no address: a status, 500 bytes of the answer, or
// a fixed phrase. The service is what the webhook use cases call, so a test can put a fake in its place.
import type { LookupAddress, LookupOptions } from "node:dns"
import type { LookupFunction } from "node:net"

import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Stream from "effect/Stream"

import { Signer, type SignerShape } from "../auth/Signer.js"
import { answerExcerpt, ATTEMPT_ERRORS, type AttemptError, attemptErrorOf, type AttemptResult, isWebhookUrl } from "../domain/webhooks.js"
import { type CheckedDestination, DestinationUnreachable, WebhookDestinations } from "./destinations.js"

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
  /** The start of the answer's body (at most EXCERPT_BYTES of UTF-8). */
  readonly response: string | null
}

/** Reads at most `limit` bytes of a body and drops the rest (the connection is cut, not reused). */
const readCapped = (response: HttpClientResponse.HttpClientResponse, limit: number) =>
  Effect.suspend(() => {
    let size = 0
    return response.stream.pipe(
      Stream.takeUntil((chunk) => (size += chunk.length) >= limit),
      Stream.runCollect,
      Effect.map((chunks) => Buffer.concat(chunks).subarray(0, limit)),
      // An answer without a body (a 204) is an empty excerpt.
      Effect.catchIf(
        (error) => error.reason._tag === "EmptyBodyError",
        () => Effect.succeed(Buffer.alloc(0))
      )
    )
  })

/**
 * The connection's lookup: the addresses checked for this attempt, never a new resolution. Node
 * asks for every address (`all`, to try them in turn) or for one, maybe of one family.
 */
const pinnedLookup = (destination: CheckedDestination): LookupFunction =>
(
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | Array<LookupAddress>, family?: number) => void
) => {
  const family = (address: NetAddress.IpAddress) => (NetAddress.isIpv4Address(address) ? 4 : 6)
  const wanted = options.family === 4 || options.family === 6 ? options.family : undefined
  const addresses = destination.addresses
    .filter((a) => wanted === undefined || family(a) === wanted)
    .map((a) => ({ address: NetAddress.formatIp(a), family: family(a) }))
  const first = addresses[0]
  if (hostname !== destination.host || first === undefined) {
    // Not the host that was checked (or none of the family asked for): nothing to connect to.
    return callback(Object.assign(new Error("no checked address"), { code: "ENOTFOUND" }), [])
  }
  if (options.all === true) return callback(null, addresses)
  callback(null, first.address, first.family)
}

/** Why there was no answer, as a fixed phrase: the system error code where there is one. */
const describeError = (error: unknown): AttemptError => {
  if (Cause.isTimeoutError(error)) return ATTEMPT_ERRORS.timeout
  if (error instanceof DestinationUnreachable) {
    return error.reason === "lookup_failed" ? ATTEMPT_ERRORS.dns : ATTEMPT_ERRORS.notAllowed
  }
  // The HTTP client wraps what Node threw; its code says what happened.
  const thrown = HttpClientError.isHttpClientError(error) && "cause" in error.reason ? error.reason.cause : error
  const code = (thrown as { code?: unknown } | null)?.code
  return attemptErrorOf(typeof code === "string" ? code : undefined)
}

/**
 * The attempt's exchange: the host resolved and checked now, the POST over connections to the
 * checked addresses alone, and the start of the answer. Defined once (a generator function written
 * inside `send` would be a new one, with its own prototype and map, on every attempt).
 */
const exchange = Effect.fnUntraced(function*(
  destinations: WebhookDestinations["Service"],
  request: WebhookRequest,
  post: HttpClientRequest.HttpClientRequest
) {
  const destination = yield* destinations.resolve(request.url)
  // Agents of this attempt alone (no connection kept for another), closed with it.
  const agent = yield* NodeHttpClient.makeAgent({ lookup: pinnedLookup(destination), keepAlive: false })
  const client = yield* Effect.provideService(NodeHttpClient.makeNodeHttp, NodeHttpClient.HttpAgent, agent)
  const res = yield* client.execute(post)
  const body = yield* readCapped(res, request.responseLimitBytes)
  const result: AttemptResult = { _tag: "Answered", status: res.status, retryAfter: res.headers["retry-after"] ?? undefined }
  return { result, response: answerExcerpt(body) }
})

/** `sendWebhook`'s attempt, its generator function made once for every attempt. */
const send: (
  signer: SignerShape,
  destinations: WebhookDestinations["Service"],
  request: WebhookRequest
) => Effect.Effect<WebhookResponse> = Effect.fnUntraced(function*(
  signer: SignerShape,
  destinations: WebhookDestinations["Service"],
  request: WebhookRequest
) {
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
  const outcome = yield* exchange(destinations, request, post).pipe(
    Effect.scoped,
    Effect.timeout(request.timeoutMs),
    // The receiver gets exactly the headers above: no trace context (node:http follows no redirect).
    Effect.provideService(HttpClient.TracerPropagationEnabled, false),
    Effect.catch((error) => {
      const result: AttemptResult = { _tag: "NoAnswer", error: describeError(error) }
      return Effect.succeed({ result, response: null })
    })
  )
  return { ...outcome, startedAt, durationMs: Math.round(performance.now() - t0) }
})

/** Sends one attempt; never fails (a failure is an attempt without an answer). */
export const sendWebhook =
  (signer: SignerShape, destinations: WebhookDestinations["Service"]) => (request: WebhookRequest): Effect.Effect<WebhookResponse> =>
    send(signer, destinations, request)

/** The outbound webhook call as a service: `sendWebhook` by default, a fake in tests. */
export class WebhookSender extends Context.Service<WebhookSender>()("Webhooks/Sender", {
  make: Effect.gen(function*() {
    const signer = yield* Signer
    const destinations = yield* WebhookDestinations
    return { send: sendWebhook(signer, destinations) }
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(WebhookSender, WebhookSender.make)
  /** Needs the resolver (`Dns`) and AppConfig. */
  static readonly layer = WebhookSender.layerWithoutDependencies.pipe(Layer.provide([Signer.layer, WebhookDestinations.layer]))
}
