// One outbound webhook request (DECISIONS §9): a POST of the payload with the Standard Webhooks
// headers to the URL the operator configured. Redirects are not followed (a 3xx is a failed
// attempt), the whole exchange has a deadline, and at most a capped part of the answer is read.
// The service is what the webhook use cases call, so a test can put a recording fake in its place.
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

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

/** Reads at most `limit` bytes of a body and drops the rest. */
const readCapped = async (body: ReadableStream<Uint8Array> | null, limit: number): Promise<string> => {
  if (body === null) return ""
  const reader = body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  try {
    while (size < limit) {
      const { done, value } = await reader.read()
      if (done) return Buffer.concat(chunks).toString("utf8")
      chunks.push(value)
      size += value.length
    }
    return Buffer.concat(chunks).subarray(0, limit).toString("utf8")
  } finally {
    // A receiver that keeps talking is cut off here (the connection is not reused).
    await reader.cancel().catch(() => undefined)
  }
}

/** Why there was no answer, in a line: the system error code where there is one. */
const describeError = (error: unknown, timedOut: boolean, timeoutMs: number): string => {
  if (timedOut) return `no answer within ${timeoutMs} ms`
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause
  if (typeof cause?.code === "string") return `${cause.code}${typeof cause.message === "string" ? `: ${cause.message}` : ""}`
  return error instanceof Error ? error.message : String(error)
}

/** Sends one attempt; never fails (a failure is an attempt without an answer). */
export const sendWebhook = (signer: SignerShape) => (request: WebhookRequest): Effect.Effect<WebhookResponse> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    if (!isWebhookUrl(request.url)) {
      return { result: { _tag: "NoAnswer", error: "the webhook URL is not http(s)" }, startedAt, durationMs: 0, response: null }
    }
    const timestamp = Math.floor(startedAt / 1000)
    const headers = {
      "content-type": "application/json",
      "user-agent": "matchmaking-open-api-webhooks/1",
      "webhook-id": request.id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signer.webhookSignature(request.secrets, request.id, timestamp, request.body)
    }
    const t0 = performance.now()
    const outcome = yield* Effect.promise(async (interrupted) => {
      const deadline = AbortSignal.timeout(request.timeoutMs)
      const signal = AbortSignal.any([interrupted, deadline])
      try {
        const res = await fetch(request.url, { method: "POST", headers, body: request.body, redirect: "manual", signal })
        const text = await readCapped(res.body, request.responseLimitBytes)
        const result: AttemptResult = { _tag: "Answered", status: res.status, retryAfter: res.headers.get("retry-after") ?? undefined }
        return { result, response: text.slice(0, EXCERPT_CHARS) }
      } catch (error) {
        const result: AttemptResult = { _tag: "NoAnswer", error: describeError(error, deadline.aborted, request.timeoutMs) }
        return { result, response: null }
      }
    })
    return { ...outcome, startedAt, durationMs: Math.round(performance.now() - t0) }
  })

/** The outbound webhook call as a service: `sendWebhook` by default, a fake in tests. */
export class WebhookSender extends Effect.Service<WebhookSender>()("Webhooks/Sender", {
  dependencies: [Signer.Default],
  effect: Effect.map(Signer, (signer) => ({ send: sendWebhook(signer) }))
}) {}
