// A fake Anthropic Messages API on 127.0.0.1 (random port) for tests: the real SDK talks to it
// through `baseURL`, so nothing reaches the real API. Answers are set per test.
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

import * as Effect from "effect/Effect"

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: unknown
}

export interface FakeReply {
  readonly status: number
  readonly body: unknown
  /** Wait this long before answering, ms. */
  readonly delayMs?: number
}

export interface FakeAnthropic {
  readonly baseURL: string
  readonly requests: Array<RecordedRequest>
  /** Replaces how the next requests are answered. */
  readonly reply: (f: (req: RecordedRequest) => FakeReply) => void
}

/** A Messages API response whose only content block is `text`. */
export const messageWithText = (text: string): unknown => ({
  id: "msg_fake_01",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  content: [{ type: "text", text }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 1500, output_tokens: 300 }
})

export const apiError = (status: number, message: string): FakeReply => ({
  status,
  body: { type: "error", error: { type: status >= 500 ? "api_error" : "invalid_request_error", message } }
})

/** Starts the fake server for the scope; by default every request gets a 500. */
export const fakeAnthropic = Effect.acquireRelease(
  Effect.callback<{ fake: FakeAnthropic; close: () => Promise<void> }>((resume) => {
    const requests: Array<RecordedRequest> = []
    let answer: (req: RecordedRequest) => FakeReply = () => apiError(500, "no reply configured")
    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8")
        let body: unknown = raw
        try {
          body = raw === "" ? null : JSON.parse(raw)
        } catch {
          body = raw
        }
        const recorded: RecordedRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body }
        requests.push(recorded)
        const r = recorded.method === "POST" && recorded.path.startsWith("/v1/messages")
          ? answer(recorded)
          : apiError(404, `unexpected ${recorded.method} ${recorded.path}`)
        const send = () => {
          if (res.destroyed) return
          res.writeHead(r.status, { "content-type": "application/json", "request-id": `req_fake_${requests.length}` })
          res.end(JSON.stringify(r.body))
        }
        if (r.delayMs !== undefined) setTimeout(send, r.delayMs)
        else send()
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      const fake: FakeAnthropic = {
        baseURL: `http://127.0.0.1:${port}`,
        requests,
        reply: (f) => {
          answer = f
        }
      }
      const close = () =>
        new Promise<void>((done) => {
          server.closeAllConnections()
          server.close(() => done())
        })
      resume(Effect.succeed({ fake, close }))
    })
  }),
  ({ close }) => Effect.promise(close)
).pipe(Effect.map(({ fake }) => fake))
