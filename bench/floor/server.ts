// The floor of the request-path benchmark: the simplest server doing the service's work per request
// with raw node:http and pg — the signing checks, the client row from an in-memory map (secrets
// opened once with AES-GCM), the HMAC, the nonce and rate-lease statement, the permission, the
// endpoint's own SQL (the repositories' column lists), the envelope with the same bytes, the
// request id and rate-limit headers and one JSON request log line. No framework, no schema, no
// fibers. `FLOOR_EXACT_COUNT=1` counts GET /guests totals with count(*) as the service did before
// its counters (the "before" line of the benchmark).
import { createDecipheriv, createHash, createHmac, randomUUID, timingSafeEqual } from "node:crypto"
import fs from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

import pg from "pg"

// Pure modules only (no Effect): the canonical string, the lease rule, time formatting, SQL text.
import { leaseSize, LocalTokens } from "../../src/domain/rateLease.js"
import { canonicalString } from "../../src/domain/signing.js"
import { formatTimestamp } from "../../src/domain/time.js"
import { ADMIT_SQL, COMPANY_COLUMNS, GUEST_LIST_COLUMNS, MATCHMAKER_COLUMNS } from "../../src/repos/statements.js"

const TZ = process.env.TZ_PLATFORM ?? "Asia/Shanghai"
const WINDOW_S = 300
const RETENTION_MS = 900_000
const EXACT_COUNT = process.env.FLOOR_EXACT_COUNT === "1"

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, application_name: "floor" })
const masterKey = Buffer.from(process.env.SECRET_KEY!, "hex")
/** AES-256-GCM `v1:` + base64(iv | tag | ciphertext), as the service stores secrets. */
const openSecret = (sealed: string): string => {
  const raw = Buffer.from(sealed.slice(3), "base64")
  const decipher = createDecipheriv("aes-256-gcm", masterKey, raw.subarray(0, 12))
  decipher.setAuthTag(raw.subarray(12, 28))
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
}
const hmac = (secret: string, text: string) => createHmac("sha256", secret).update(text).digest("hex")

interface Client {
  readonly appKey: string
  readonly status: string
  readonly permissions: ReadonlySet<string>
  readonly secret: string
  readonly rps: number
  readonly burst: number
}
const clients = new Map<string, Client | null>()
const held = new LocalTokens()

const clientOf = async (appKey: string): Promise<Client | null> => {
  const cached = clients.get(appKey)
  if (cached !== undefined) return cached
  const { rows } = await pool.query(
    "SELECT app_key, status, permissions, secret_enc, rate_rps, rate_burst FROM clients WHERE app_key = $1",
    [
      appKey
    ]
  )
  const r = rows[0]
  const client = r === undefined ? null : {
    appKey: r.app_key,
    status: r.status,
    permissions: new Set<string>(r.permissions),
    secret: openSecret(r.secret_enc),
    rps: r.rate_rps ?? 50,
    burst: r.rate_burst ?? 100
  }
  clients.set(appKey, client)
  return client
}

// Log lines gathered per turn and written asynchronously, as the service does.
const pending: Array<string> = []
let flushing = false
const log = (line: object) => {
  pending.push(JSON.stringify(line) + "\n")
  if (!flushing) {
    flushing = true
    setImmediate(() => {
      const chunk = pending.join("")
      pending.length = 0
      fs.write(2, chunk, () => {
        flushing = false
      })
    })
  }
}

const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string>) => {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers })
  res.end(body)
}
const ok = (data: unknown) => JSON.stringify({ code: 200, message: "ok", data })
const fail = (status: number, error: string, message: string) => JSON.stringify({ code: status, message, data: { error } })

const withTimes = <T extends Record<string, unknown>>(row: T, keys: ReadonlyArray<string>): T => {
  for (const k of keys) if (row[k] instanceof Date) (row as Record<string, unknown>)[k] = formatTimestamp(row[k] as Date, TZ)
  return row
}

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

type Route = { permission: string; run: (match: RegExpExecArray, body: Buffer, query: URLSearchParams) => Promise<[number, string]> }

const routes: Array<[string, RegExp, Route]> = [
  ["GET", /^\/api\/open\/v1\/matchmakers\/(\d+)$/, {
    permission: "open:matchmaker:read",
    run: async (m) => {
      const { rows } = await pool.query(`SELECT ${MATCHMAKER_COLUMNS} FROM matchmakers WHERE id = $1`, [Number(m[1])])
      if (rows.length === 0) return [404, fail(404, "not_found", "matchmaker not found")]
      return [200, ok(withTimes(rows[0], ["created_at", "updated_at"]))]
    }
  }],
  ["POST", /^\/api\/open\/v1\/companies$/, {
    permission: "open:company:manage",
    run: async (_m, body) => {
      const input = JSON.parse(body.toString("utf8")) as Record<string, unknown>
      if (typeof input.name !== "string" || input.name.trim() === "") return [400, fail(400, "invalid_parameter", "invalid parameters")]
      const keys = Object.keys(input)
      const { rows } = await pool.query(
        `INSERT INTO companies (${keys.map((k) => `"${k}"`).join(", ")}) VALUES (${keys.map((_, i) => `$${i + 1}`).join(", ")})
         RETURNING ${COMPANY_COLUMNS}`,
        keys.map((k) => input[k])
      )
      return [200, ok(withTimes(rows[0], ["created_at", "updated_at"]))]
    }
  }],
  ["GET", /^\/api\/open\/v1\/guests$/, {
    permission: "open:guest:read",
    run: async (_m, _b, query) => {
      const page = Math.max(1, Number(query.get("page") ?? 1))
      const size = Math.min(100, Math.max(1, Number(query.get("page_size") ?? 20)))
      const [list, total] = await Promise.all([
        pool.query(`SELECT ${GUEST_LIST_COLUMNS} FROM guests WHERE true ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`, [
          size,
          (page - 1) * size
        ]),
        EXACT_COUNT
          ? pool.query("SELECT count(*)::int AS n FROM guests WHERE true")
          : pool.query("SELECT coalesce(sum(n), 0)::int AS n FROM row_counts WHERE tbl = $1 AND dim = $2 AND val = $3", ["guests", "", ""])
      ])
      const rows = list.rows.map((r) => withTimes(r, ["photo_time", "created_at", "updated_at"]))
      return [200, ok({ list: rows, total: total.rows[0].n })]
    }
  }]
]

const authenticate = async (req: IncomingMessage, path: string, rawQuery: string, body: Buffer) => {
  const appKey = String(req.headers["x-app-key"] ?? "")
  const timestamp = String(req.headers["x-timestamp"] ?? "")
  const nonce = String(req.headers["x-nonce"] ?? "")
  const signature = String(req.headers["x-signature"] ?? "")
  if (!appKey || !timestamp || !nonce || !signature) return { error: [401, "missing_credentials"] as const }
  if (!/^\d{1,16}$/.test(timestamp) || !/^[A-Za-z0-9_-]{16,64}$/.test(nonce)) return { error: [401, "missing_credentials"] as const }
  const client = await clientOf(appKey)
  if (client === null) return { error: [401, "unknown_app_key"] as const }
  if (client.status !== "active") return { error: [401, "app_key_disabled"] as const }
  const nowMs = Date.now()
  const ts = Number(timestamp)
  if (Math.abs(Math.floor(nowMs / 1000) - ts) > WINDOW_S) return { error: [401, "timestamp_out_of_window"] as const }
  const bodyMd5 = createHash("md5").update(body).digest("hex")
  const canonical = canonicalString({ method: req.method!, path, rawQuery, appKey, timestamp, nonce, bodyMd5 })
  const expected = Buffer.from(hmac(client.secret, canonical))
  const given = Buffer.from(signature.toLowerCase())
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { error: [401, "invalid_signature"] as const }
  const local = held.take(appKey)
  const { rows } = await pool.query<{ fresh: boolean; granted: number | null; tokens: number | null }>(ADMIT_SQL, [
    appKey,
    nonce,
    nowMs,
    nowMs - RETENTION_MS,
    ts,
    local ? 0 : leaseSize(client.rps, client.burst),
    client.rps,
    client.burst
  ])
  const a = rows[0]
  if (!a.fresh) return { error: [401, "nonce_replayed"] as const }
  const granted = a.granted ?? 0
  if (!local && granted >= 1) held.keep(appKey, granted - 1, a.tokens ?? 0)
  if (!local && granted < 1) return { error: [429, "rate_limited"] as const, client }
  return { client, tokens: held.remaining(appKey) }
}

const handle = async (req: IncomingMessage, res: ServerResponse) => {
  const started = performance.now()
  const requestId = randomUUID()
  const url = req.url ?? "/"
  const q = url.indexOf("?")
  const path = q === -1 ? url : url.slice(0, q)
  const rawQuery = q === -1 ? "" : url.slice(q + 1)
  const body = req.method === "GET" ? Buffer.alloc(0) : await readBody(req)
  let status = 404
  let text = fail(404, "not_found", "no such endpoint")
  const headers: Record<string, string> = { "x-request-id": requestId }
  const found = routes.find(([method, pattern]) => method === req.method && pattern.test(path))
  if (found !== undefined) {
    const [, pattern, route] = found
    const auth = await authenticate(req, path, rawQuery, body)
    if ("error" in auth && auth.error !== undefined) {
      ;[status] = auth.error
      text = fail(auth.error[0], auth.error[1], auth.error[1])
    } else if (!auth.client.permissions.has(route.permission)) {
      status = 403
      text = fail(403, "permission_denied", "permission denied")
    } else {
      headers["ratelimit-limit"] = String(auth.client.burst)
      headers["ratelimit-remaining"] = String(Math.max(0, Math.floor(auth.tokens)))
      headers["ratelimit-reset"] = String(Math.ceil(Math.max(0, auth.client.burst - auth.tokens) / auth.client.rps))
      headers["ratelimit-policy"] = `${auth.client.burst};w=${Math.max(1, Math.round(auth.client.burst / auth.client.rps))}`
      ;[status, text] = await route.run(pattern.exec(path)!, body, new URLSearchParams(rawQuery))
    }
  }
  send(res, status, text, headers)
  log({
    message: "request",
    logLevel: "INFO",
    timestamp: new Date().toISOString(),
    annotations: { request_id: requestId, method: req.method, path, status, ms: Math.round(performance.now() - started) }
  })
}

const server = createServer((req, res) => {
  handle(req, res).catch((e: unknown) => {
    send(res, 500, fail(500, "internal_error", String(e)), {})
  })
})
server.keepAliveTimeout = 65_000
server.listen(Number(process.env.PORT ?? 8090), "127.0.0.1", () => process.stdout.write("floor ready\n"))
process.on("SIGTERM", () => server.close(() => pool.end().then(() => process.exit(0))))
