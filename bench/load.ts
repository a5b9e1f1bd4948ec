// One signing load generator for the request-path benchmark: N keep-alive connections, each sending
// signed requests back to back (a fresh nonce each), for a fixed time; throughput, latency
// percentiles and statuses. The same generator measures the service and its floor.
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
  /** The path, or the path of the i-th request (a PUT spread over several records). */
  readonly path: string | ((i: number) => string)
  /** A fresh body per request (POST, PUT): the i-th request's. */
  readonly body?: (i: number) => string
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
      const timestamp = String(Math.floor(Date.now() / 1000))
      const nonce = newNonce()
      const signature = liveSigner.sign(target.appSecret, {
        method: spec.method,
        path,
        rawQuery: "",
        appKey: target.appKey,
        timestamp,
        nonce,
        body
      })
      const started = performance.now()
      const req = http.request({
        host: "127.0.0.1",
        port: target.port,
        method: spec.method,
        path,
        agent: agents[t],
        headers: {
          "x-app-key": target.appKey,
          "x-timestamp": timestamp,
          "x-nonce": nonce,
          "x-signature": signature,
          ...(body.length > 0 ? { "content-type": "application/json", "content-length": String(body.length) } : {})
        }
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
