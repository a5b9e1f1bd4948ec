// One signing load generator for the HTTP benchmarks (request path, request cost, capacity): N
// keep-alive connections, each sending signed requests back to back (a fresh nonce each), for a
// fixed time or a fixed count; throughput, latency percentiles and statuses. The same generator
// measures the service and its floors.
import http from "node:http"

import { liveSigner } from "../src/auth/Signer.js"
import { newNonce } from "../src/client/Client.js"
import { percentile } from "./support.js"

export interface Target {
  readonly port: number
  readonly appKey: string
  readonly appSecret: string
}

export interface LoadSpec {
  /** One target per connection in turn (several ports and clients spread the load). */
  readonly targets: ReadonlyArray<Target>
  readonly method: "GET" | "POST" | "PUT"
  /** The path, or the path of the `i`th request (a record per request). */
  readonly path: string | ((i: number) => string)
  /** The query string, without `?`, sent and signed as it is. */
  readonly query?: string
  /** A fresh body per request (POST, PUT). */
  readonly body?: (i: number) => string
  /** Headers of the `i`th request beside the signing ones (an `Idempotency-Key`). */
  readonly headers?: (i: number) => Record<string, string>
  readonly connections: number
  readonly seconds: number
  /** At most this many requests in all (then it ends before `seconds` if it gets there). */
  readonly requests?: number
}

export interface LoadResult {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly requests: number
  readonly statuses: Record<string, number>
}

/** The signing headers of a request (a fresh nonce), and its JSON content type when it has a body. */
export const signedHeaders = (
  client: Omit<Target, "port">,
  request: { readonly method: string; readonly path: string; readonly rawQuery: string; readonly body: Uint8Array }
): Record<string, string> => {
  const timestamp = String(Math.floor(Date.now() / 1000))
  const nonce = newNonce()
  const signature = liveSigner.sign(client.appSecret, { ...request, appKey: client.appKey, timestamp, nonce })
  return {
    "x-app-key": client.appKey,
    "x-timestamp": timestamp,
    "x-nonce": nonce,
    "x-signature": signature,
    ...(request.body.length > 0 ? { "content-type": "application/json", "content-length": String(request.body.length) } : {})
  }
}

export const runLoad = async (spec: LoadSpec): Promise<LoadResult> => {
  const agents = spec.targets.map(() => new http.Agent({ keepAlive: true, maxSockets: spec.connections }))
  const latencies: Array<number> = []
  const statuses: Record<string, number> = {}
  let sent = 0
  const end = performance.now() + spec.seconds * 1000
  const one = (c: number) =>
    new Promise<void>((resolve) => {
      const t = c % spec.targets.length
      const target = spec.targets[t]!
      const i = sent++
      const body = Buffer.from(spec.body?.(i) ?? "")
      const path = typeof spec.path === "string" ? spec.path : spec.path(i)
      const rawQuery = spec.query ?? ""
      const headers = { ...spec.headers?.(i), ...signedHeaders(target, { method: spec.method, path, rawQuery, body }) }
      const started = performance.now()
      const req = http.request({
        host: "127.0.0.1",
        port: target.port,
        method: spec.method,
        path: rawQuery === "" ? path : `${path}?${rawQuery}`,
        agent: agents[t],
        headers
      }, (res) => {
        res.resume()
        res.on("end", () => {
          latencies.push(performance.now() - started)
          const key = String(res.statusCode)
          statuses[key] = (statuses[key] ?? 0) + 1
          resolve()
        })
      })
      req.on("error", (e: NodeJS.ErrnoException) => {
        const key = e.code ?? "error"
        statuses[key] = (statuses[key] ?? 0) + 1
        resolve()
      })
      req.end(body)
    })
  const began = performance.now()
  await Promise.all(Array.from({ length: spec.connections }, async (_, c) => {
    while (performance.now() < end && sent < (spec.requests ?? Infinity)) await one(c)
  }))
  const elapsed = (performance.now() - began) / 1000
  for (const a of agents) a.destroy()
  latencies.sort((a, b) => a - b)
  return {
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    requests: latencies.length,
    statuses
  }
}
