// A TCP proxy in front of the test PostgreSQL that a test can take down and bring back, to play
// a database outage or restart without stopping the server other tests share.
import * as net from "node:net"

import * as Effect from "effect/Effect"

import { testDatabaseLayer } from "./harness.js"

export interface TcpProxy {
  readonly port: number
  /**
   * Cuts every open connection and refuses new ones (as a stopped server does); with `reset`, the
   * connections end with a TCP RST (as a broken network path does) rather than a close.
   */
  readonly down: (options?: { readonly reset?: boolean }) => Promise<void>
  /** Accepts connections again on the same port. */
  readonly up: () => Promise<void>
  readonly close: () => Promise<void>
  /** How many connections opened with a PostgreSQL CancelRequest (a client cancelling a statement). */
  readonly cancelRequests: () => number
}

/** The first 8 bytes of a PostgreSQL CancelRequest: its length (16) and code (80877102). */
const isCancelRequest = (chunk: Buffer): boolean => chunk.length >= 8 && chunk.readInt32BE(0) === 16 && chunk.readInt32BE(4) === 80877102

export const startTcpProxy = async (targetHost: string, targetPort: number): Promise<TcpProxy> => {
  const sockets = new Set<net.Socket>()
  let cancels = 0
  const track = (s: net.Socket) => {
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
    s.on("error", () => s.destroy())
  }
  const make = () =>
    net.createServer((client) => {
      const upstream = net.connect(targetPort, targetHost)
      track(client)
      track(upstream)
      client.once("data", (chunk: Buffer) => {
        if (isCancelRequest(chunk)) cancels++
      })
      client.pipe(upstream)
      upstream.pipe(client)
      client.on("close", () => upstream.destroy())
      upstream.on("close", () => client.destroy())
    })
  let server = make()
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject)
      server.listen(port, "127.0.0.1", () => {
        const address = server.address()
        resolve(typeof address === "object" && address !== null ? address.port : port)
      })
    })
  const port = await listen(0)
  let listening = true
  const cut = (s: net.Socket, reset: boolean) => {
    if (!reset || s.destroyed) return s.destroy()
    try {
      s.resetAndDestroy()
    } catch {
      s.destroy()
    }
  }
  const down = async (options?: { readonly reset?: boolean }) => {
    if (!listening) return
    listening = false
    await new Promise<void>((resolve) => {
      server.close(() => resolve())
      for (const s of sockets) cut(s, options?.reset === true)
    })
  }
  const up = async () => {
    if (listening) return
    server = make()
    await listen(port)
    listening = true
  }
  return { port, down, up, close: () => down(), cancelRequests: () => cancels }
}

/**
 * A private test database that the service reaches through a proxy (for outage tests): the layer,
 * and the proxy once the layer is built.
 */
export const databaseThroughProxy = () => {
  let current: TcpProxy | undefined
  const layer = testDatabaseLayer((url) =>
    Effect.acquireRelease(
      Effect.promise(async () => {
        const parsed = new URL(url)
        current = await startTcpProxy(parsed.hostname, Number(parsed.port || 5432))
        parsed.hostname = "127.0.0.1"
        parsed.port = String(current.port)
        return parsed.toString()
      }),
      () => Effect.promise(() => current?.close() ?? Promise.resolve())
    )
  )
  const proxy = (): TcpProxy => {
    if (current === undefined) throw new Error("the proxied database layer is not built")
    return current
  }
  return { layer, proxy } as const
}
