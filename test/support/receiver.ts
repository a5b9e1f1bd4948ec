// A webhook receiver for tests: a node:http server on 127.0.0.1 (random port) that keeps every
// request it gets and answers as the test says (status, headers, a delay, or holding the request
// until released). Deliveries are verified with the reference library (standardwebhooks).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Webhook } from "standardwebhooks"

export interface Received {
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: string
  /** Arrival, ms since the epoch. */
  readonly at: number
}

export interface Reply {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body?: string
  /** Answer only once this settles. */
  readonly hold?: Promise<unknown>
}

export interface Receiver {
  readonly url: string
  readonly received: Array<Received>
  /** How to answer from now on (default 200); `n` counts this path's requests, from 1. */
  readonly reply: (f: (r: Received, n: number) => Reply) => void
  /** The most requests that were open at once, per path. */
  readonly maxOpen: Map<string, number>
  readonly open: Map<string, number>
}

const headersOf = (req: IncomingMessage): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") out[k] = v
  return out
}

/**
 * A receiver for the scope on `host` (another loopback address, such as 127.0.0.2, stands for a
 * second machine) and `port` (0: a free one); its URL is `http://HOST:PORT` (append a path per client).
 */
export const makeReceiverOn = (host: string, port = 0) =>
  Effect.acquireRelease(
    Effect.callback<Receiver & { readonly close: () => void }>((resume) => {
      let answer: (r: Received, n: number) => Reply = () => ({ status: 200 })
      const received: Array<Received> = []
      const counts = new Map<string, number>()
      const open = new Map<string, number>()
      const maxOpen = new Map<string, number>()
      const server = createServer((req: IncomingMessage, res: ServerResponse) => {
        const chunks: Array<Buffer> = []
        const path = req.url ?? "/"
        open.set(path, (open.get(path) ?? 0) + 1)
        maxOpen.set(path, Math.max(maxOpen.get(path) ?? 0, open.get(path)!))
        let closed = false
        const done = () => {
          if (!closed) {
            closed = true
            open.set(path, open.get(path)! - 1)
          }
        }
        res.on("close", done)
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const r: Received = { path, headers: headersOf(req), body: Buffer.concat(chunks).toString("utf8"), at: Date.now() }
          received.push(r)
          const n = (counts.get(path) ?? 0) + 1
          counts.set(path, n)
          const reply = answer(r, n)
          const send = () => {
            res.writeHead(reply.status, { "content-type": "text/plain", ...reply.headers })
            res.end(reply.body ?? "ok")
          }
          if (reply.hold) void reply.hold.then(send)
          else send()
        })
      })
      server.once("error", (error) => resume(Effect.die(error)))
      server.listen(port, host, () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({
          url: `http://${host}:${port}`,
          received,
          maxOpen,
          open,
          reply: (f) => {
            answer = f
          },
          close: () => {
            server.closeAllConnections()
            server.close()
          }
        }))
      })
    }),
    (r) => Effect.sync(r.close)
  )

/** A receiver on 127.0.0.1, at a free port. */
export const makeReceiver = makeReceiverOn("127.0.0.1")

/** Verifies a delivery with the reference library under this secret; the parsed payload. */
export const verify = (secret: string, r: Received): unknown => new Webhook(secret).verify(r.body, r.headers)

/** Moves a delivery's creation an hour back: a failure from before the time a test calls "since". */
export const backdateDelivery = (id: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => Effect.orDie(sql`UPDATE webhook_deliveries SET created_at = created_at - interval '1 hour' WHERE id = ${id}`)
  )

/** A real-time pause for a receiver's simulated latency (never to wait for something: see eventually). */
export const sleep = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))
