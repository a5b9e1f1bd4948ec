// The floor of the request-path benchmark: the simplest server doing the service's work per request
// with raw node:http and pg — the signing checks, the client row from an in-memory map (secrets
// opened once with AES-GCM), the HMAC, the nonce and rate-lease statement, the permission, the
// endpoint's own SQL (the repositories' column lists; a write and its events in one statement,
// bench/floor/pgWork.ts), the envelope with the same bytes, the
// request id and rate-limit headers and one JSON request log line (bench/floor/work.ts, shared with
// the Effect and Fastify floors). No framework, no schema, no fibers. `FLOOR_EXACT_COUNT=1` counts
// GET /guests totals with count(*) as the service did before its counters (the benchmark's "before").
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

import pg from "pg"

import { splitUrl } from "../../src/domain/signing.js"
import { createCompany, createGuest, updateGuest } from "./pgWork.js"
import {
  Admission,
  type Admitted,
  checkHeaders,
  checkSignature,
  CLIENT_SQL,
  clientLookup,
  type ClientRow,
  companyInput,
  fail,
  GUEST_COUNT_EVERY_ROW_SQL,
  GUEST_COUNTERS_SQL,
  GUEST_PAGE_SQL,
  GUEST_TIMES,
  guestChange,
  guestInput,
  isRefusal,
  logRequest,
  MATCHMAKER_SQL,
  ok,
  rateHeaders,
  ROW_TIMES,
  signingOf,
  UNKNOWN_APP_KEY,
  withTimes
} from "./work.js"

const EXACT_COUNT = process.env.FLOOR_EXACT_COUNT === "1"

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, application_name: "floor" })

const admission = new Admission()
const clientFor = clientLookup(async (appKey) => (await pool.query<ClientRow>(CLIENT_SQL, [appKey])).rows)

const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string>) => {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers })
  res.end(body)
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
      const { rows } = await pool.query(MATCHMAKER_SQL, [Number(m[1])])
      if (rows.length === 0) return [404, fail(404, "not_found", "matchmaker not found")]
      return [200, ok(withTimes(rows[0], ROW_TIMES))]
    }
  }],
  ["POST", /^\/api\/open\/v1\/companies$/, {
    permission: "open:company:manage",
    run: async (_m, body) => {
      const input = companyInput(JSON.parse(body.toString("utf8")))
      if (input === undefined) return [400, fail(400, "invalid_parameter", "invalid parameters")]
      return [200, ok(await createCompany(pool, input))]
    }
  }],
  ["POST", /^\/api\/open\/v1\/guests$/, {
    permission: "open:guest:write",
    run: async (_m, body) => {
      const input = guestInput(JSON.parse(body.toString("utf8")))
      if (input === undefined) return [400, fail(400, "invalid_parameter", "invalid parameters")]
      const guest = await createGuest(pool, input)
      return guest === undefined ? [404, fail(404, "not_found", "not found")] : [200, ok(guest)]
    }
  }],
  ["PUT", /^\/api\/open\/v1\/guests\/(\d+)$/, {
    permission: "open:guest:write",
    run: async (m, body) => {
      const change = guestChange(JSON.parse(body.toString("utf8")))
      if (change === undefined) return [400, fail(400, "invalid_parameter", "invalid parameters")]
      const guest = await updateGuest(pool, Number(m[1]), change)
      return guest === undefined ? [404, fail(404, "not_found", "not found")] : [200, ok(guest)]
    }
  }],
  ["GET", /^\/api\/open\/v1\/guests$/, {
    permission: "open:guest:read",
    run: async (_m, _b, query) => {
      const page = Math.max(1, Number(query.get("page") ?? 1))
      const size = Math.min(100, Math.max(1, Number(query.get("page_size") ?? 20)))
      const [list, total] = await Promise.all([
        pool.query(GUEST_PAGE_SQL, [size, (page - 1) * size]),
        EXACT_COUNT ? pool.query(GUEST_COUNT_EVERY_ROW_SQL) : pool.query(GUEST_COUNTERS_SQL, ["guests", "", ""])
      ])
      const rows = list.rows.map((r) => withTimes(r, GUEST_TIMES))
      return [200, ok({ list: rows, total: total.rows[0].n, next_cursor: null })]
    }
  }]
]

const authenticate = async (req: IncomingMessage, path: string, rawQuery: string, body: Buffer) => {
  const signing = signingOf(req.headers)
  const malformed = checkHeaders(signing)
  if (malformed !== undefined) return malformed
  const client = await clientFor(signing.appKey)
  if (client === null) return UNKNOWN_APP_KEY
  const nowMs = Date.now()
  const refused = checkSignature(client, signing, { method: req.method!, path, rawQuery, body }, nowMs)
  if (refused !== undefined) return refused
  const { local, params, sql: admit } = admission.begin(client, signing, nowMs)
  const { rows } = await pool.query<Admitted>(admit, [...params])
  const admitted = admission.end(client, local, rows[0]!)
  return isRefusal(admitted) ? admitted : { client, tokens: admitted.tokens }
}

const handle = async (req: IncomingMessage, res: ServerResponse) => {
  const started = performance.now()
  const requestId = randomUUID()
  const { path, rawQuery } = splitUrl(req.url ?? "/")
  const body = req.method === "GET" ? Buffer.alloc(0) : await readBody(req)
  let status = 404
  let text = fail(404, "not_found", "no such endpoint")
  let headers: Record<string, string> = { "x-request-id": requestId }
  const found = routes.find(([method, pattern]) => method === req.method && pattern.test(path))
  if (found !== undefined) {
    const [, pattern, route] = found
    const auth = await authenticate(req, path, rawQuery, body)
    if (isRefusal(auth)) {
      status = auth.status
      text = fail(auth.status, auth.error, auth.error)
    } else if (!auth.client.permissions.has(route.permission)) {
      status = 403
      text = fail(403, "permission_denied", "permission denied")
    } else {
      headers = { ...headers, ...rateHeaders(auth.client, auth.tokens) }
      ;[status, text] = await route.run(pattern.exec(path)!, body, new URLSearchParams(rawQuery))
    }
  }
  send(res, status, text, headers)
  logRequest({ request_id: requestId, method: req.method!, path, status, ms: Math.round(performance.now() - started) })
}

const server = createServer((req, res) => {
  handle(req, res).catch((e: unknown) => {
    send(res, 500, fail(500, "internal_error", String(e)), {})
  })
})
server.keepAliveTimeout = 65_000
server.listen(Number(process.env.PORT ?? 8090), "127.0.0.1", () => process.stdout.write("floor ready\n"))
process.on("SIGTERM", () => server.close(() => pool.end().then(() => process.exit(0))))
