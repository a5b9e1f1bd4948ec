// A fake of the outside world a webhook is sent to: the WebhookSender service answers from a
// script (an HTTP status with headers and body, or no answer with an error), records every
// request it was asked to send, and takes no time unless told to (its clock is the fiber's, the
// TestClock in tests). A request with no scripted answer left dies, naming the URL: a test states
// every answer it expects to be asked for.
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import type { AttemptError, AttemptResult } from "../../src/domain/webhooks.js"
import { type WebhookRequest, type WebhookResponse, WebhookSender } from "../../src/webhooks/sender.js"

export type ScriptedAnswer =
  | { readonly status: number; readonly headers?: Readonly<Record<string, string>>; readonly body?: string; readonly durationMs?: number }
  /** No answer: the phrase the real sender records (it never names an address). */
  | { readonly noAnswer: AttemptError; readonly durationMs?: number }

export interface SentRequest extends WebhookRequest {
  readonly sentAt: number
}

export interface WebhookReceiverShape {
  /** Every request sent, in order. */
  readonly requests: Array<SentRequest>
  /** Appends answers for the next requests, in order. */
  readonly answer: (...answers: ReadonlyArray<ScriptedAnswer>) => void
}

export class WebhookReceiver extends Context.Service<WebhookReceiver, WebhookReceiverShape>()("Test/WebhookReceiver") {}

const EXCERPT_CHARS = 500

const makeReceiver = () => {
  const requests: Array<SentRequest> = []
  const script: Array<ScriptedAnswer> = []
  const send = (request: WebhookRequest): Effect.Effect<WebhookResponse> =>
    Effect.gen(function*() {
      const startedAt = yield* Clock.currentTimeMillis
      requests.push({ ...request, sentAt: startedAt })
      const next = script.shift()
      if (next === undefined) {
        return yield* Effect.die(new Error(`fake webhook receiver: no answer scripted for request ${requests.length} to ${request.url}`))
      }
      const durationMs = next.durationMs ?? 0
      if ("noAnswer" in next) return { result: { _tag: "NoAnswer", error: next.noAnswer }, startedAt, durationMs, response: null }
      const retryAfter = Object.entries(next.headers ?? {}).find(([k]) => k.toLowerCase() === "retry-after")?.[1]
      const result: AttemptResult = { _tag: "Answered", status: next.status, retryAfter }
      return { result, startedAt, durationMs, response: (next.body ?? "").slice(0, EXCERPT_CHARS) }
    })
  const receiver: WebhookReceiverShape = { requests, answer: (...answers) => void script.push(...answers) }
  return { receiver, sender: WebhookSender.of({ send }) }
}

/** The sender and its receiver (for scripting answers and reading requests), fresh per build. */
export const FakeWebhookSender: Layer.Layer<WebhookSender | WebhookReceiver> = Layer.unwrap(
  Effect.sync(() => {
    const { receiver, sender } = makeReceiver()
    return Layer.merge(Layer.succeed(WebhookSender, sender), Layer.succeed(WebhookReceiver, receiver))
  })
)
