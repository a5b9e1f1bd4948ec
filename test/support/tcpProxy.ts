// A TCP proxy in front of the test PostgreSQL that a test can take down and bring back, to play
// a database outage or restart without stopping the server other tests share.
import * as net from "node:net"

import * as Effect from "effect/Effect"

import type { DatabaseOptions } from "../../src/sql/Sql.js"
import { testDatabaseLayer } from "./harness.js"

export interface TcpProxy {
  readonly port: number
  /**
   * Cuts every open connection and refuses new ones (as a stopped server does); with `reset`, the
   * connections end with a TCP RST (as a broken network path does) rather than a close.
   */
  readonly down: (options?: { readonly reset?: boolean }) => Promise<void>
  /**
   * A silent network cut (a failed-over address, a firewall that dropped its state, a hung server):
   * open connections stay open but nothing passes either way, and new ones are accepted but never
   * reach the server; no FIN, no RST. What is sent meanwhile, a close included, waits (as TCP's
   * retransmissions would) and arrives once `up()` heals the path.
   */
  readonly blackhole: () => Promise<void>
  /** Accepts connections again on the same port; after a blackhole, lets everything through again. */
  readonly up: () => Promise<void>
  readonly close: () => Promise<void>
  /** How many connections opened with a PostgreSQL CancelRequest (a client cancelling a statement). */
  readonly cancelRequests: () => number
  /**
   * The connections that were through to the server when the last blackhole began, sent something
   * (a statement) into it, and are still open: while it lasts, or after `up()` (closed: the client
   * gave them up), less those on which the server has since confirmed a statement cancelled
   * (`ErrorResponse` 57014, `query_canceled`): such a session is in step again, and the service may
   * lend it again. Each with what it sent into the silence and what it has read since.
   */
  readonly heldOpen: () => ReadonlyArray<HeldConnection>
}

/** A connection held in a silence, as a failing test shows it. */
export interface HeldConnection {
  /** The first bytes the client sent into the silence, unprintable ones as `.`. */
  readonly sent: string
  /** Bytes the server has sent on it since the silence began, and their first ones. */
  readonly answered: number
  readonly answer: string
  /** The server's side is closed (the client's not yet). */
  readonly serverClosed: boolean
}

/** The first 8 bytes of a PostgreSQL CancelRequest: its length (16) and code (80877102). */
const isCancelRequest = (chunk: Buffer): boolean => chunk.length >= 8 && chunk.readInt32BE(0) === 16 && chunk.readInt32BE(4) === 80877102

/** A client connection and, once it is forwarded, its connection to the server. */
interface Pair {
  readonly client: net.Socket
  upstream?: net.Socket
  /**
   * The client's bytes read when the path went silent; undefined for a connection that was not
   * through to the server then (opened during the silence: it carried no statement into it).
   */
  readAtSilence?: number | undefined
  /** The server has answered a statement of this connection with 57014 (query_canceled). */
  cancelConfirmed?: boolean
  /** What the client sent, and the server answered, since the silence began (printable, capped). */
  sentInSilence?: string
  answeredSince?: string
  answeredBytes?: number
}

const SNIPPET = 160
const printable = (chunk: Buffer) => chunk.toString("latin1").replace(/[^\x20-\x7e]/g, ".")

/** An ErrorResponse's SQLSTATE field for query_canceled: the field's tag `C`, the code, its NUL. */
const QUERY_CANCELED = Buffer.from("C57014\0", "latin1")

export const startTcpProxy = async (targetHost: string, targetPort: number): Promise<TcpProxy> => {
  const sockets = new Set<net.Socket>()
  const pairs = new Set<Pair>()
  let cancels = 0
  /** A blackhole: nothing passes, and a close of one side reaches the other only at `up()`. */
  let silent = false
  const closeLater = new Set<net.Socket>()
  /** The connections that sent something into the last blackhole. */
  let held: ReadonlyArray<Pair> = []
  const track = (s: net.Socket) => {
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
    s.on("error", () => s.destroy())
  }
  const closeWith = (other: net.Socket) => () => {
    if (silent) closeLater.add(other)
    else other.destroy()
  }
  const flow = (pair: Pair, upstream: net.Socket) => {
    pair.client.pipe(upstream)
    upstream.pipe(pair.client)
  }
  const forward = (pair: Pair) => {
    const { client } = pair
    const upstream = net.connect(targetPort, targetHost)
    pair.upstream = upstream
    track(upstream)
    client.once("data", (chunk: Buffer) => {
      if (isCancelRequest(chunk)) cancels++
    })
    client.on("data", (chunk: Buffer) => {
      if (pair.readAtSilence !== undefined && (pair.sentInSilence ?? "").length < SNIPPET) {
        pair.sentInSilence = ((pair.sentInSilence ?? "") + printable(chunk)).slice(0, SNIPPET)
      }
    })
    // The server's bytes, scanned for a confirmed cancel (the tail kept: a field may span chunks).
    let tail = Buffer.alloc(0)
    upstream.on("data", (chunk: Buffer) => {
      if (pair.readAtSilence !== undefined) {
        pair.answeredBytes = (pair.answeredBytes ?? 0) + chunk.length
        if ((pair.answeredSince ?? "").length < SNIPPET) {
          pair.answeredSince = ((pair.answeredSince ?? "") + printable(chunk)).slice(0, SNIPPET)
        }
      }
      const seen = Buffer.concat([tail, chunk])
      if (seen.includes(QUERY_CANCELED)) pair.cancelConfirmed = true
      tail = seen.subarray(Math.max(0, seen.length - QUERY_CANCELED.length + 1))
    })
    flow(pair, upstream)
    client.on("close", closeWith(upstream))
    upstream.on("close", closeWith(client))
  }
  /** Stops both directions: each socket keeps what arrives (up to its buffer, then TCP holds back). */
  const hold = (pair: Pair) => {
    const { client, upstream } = pair
    pair.readAtSilence = upstream === undefined ? undefined : client.bytesRead
    if (upstream !== undefined) {
      client.unpipe(upstream)
      upstream.unpipe(client)
      upstream.pause()
    }
    client.pause()
  }
  const sentIntoSilence = (pair: Pair) => pair.readAtSilence !== undefined && pair.client.bytesRead > pair.readAtSilence
  const make = () =>
    net.createServer((client) => {
      track(client)
      const pair: Pair = { client }
      pairs.add(pair)
      client.on("close", () => pairs.delete(pair))
      if (silent) hold(pair)
      else forward(pair)
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
    silent = false
    closeLater.clear()
    if (!listening) return
    listening = false
    await new Promise<void>((resolve) => {
      server.close(() => resolve())
      for (const s of sockets) cut(s, options?.reset === true)
    })
  }
  const blackhole = async () => {
    if (!listening || silent) return
    silent = true
    held = []
    for (const pair of pairs) hold(pair)
  }
  const up = async () => {
    if (silent) {
      silent = false
      held = [...pairs].filter(sentIntoSilence)
      for (const pair of pairs) {
        if (pair.upstream === undefined) forward(pair)
        else flow(pair, pair.upstream)
      }
      for (const s of closeLater) s.destroy()
      closeLater.clear()
    }
    if (listening) return
    server = make()
    await listen(port)
    listening = true
  }
  return {
    port,
    down,
    blackhole,
    up,
    close: () => down(),
    cancelRequests: () => cancels,
    heldOpen: () =>
      (silent ? [...pairs].filter(sentIntoSilence) : held)
        .filter((pair) => !pair.client.destroyed && pair.cancelConfirmed !== true)
        .map((pair) => ({
          sent: pair.sentInSilence ?? "",
          answered: pair.answeredBytes ?? 0,
          answer: pair.answeredSince ?? "",
          serverClosed: pair.upstream?.destroyed === true
        }))
  }
}

/**
 * A private test database that the service reaches through a proxy (for outage tests): the layer,
 * and the proxy once the layer is built. `options` set the service's database client.
 */
export const databaseThroughProxy = (options: DatabaseOptions = {}) => {
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
    ), options)
  const proxy = (): TcpProxy => {
    if (current === undefined) throw new Error("the proxied database layer is not built")
    return current
  }
  return { layer, proxy } as const
}
