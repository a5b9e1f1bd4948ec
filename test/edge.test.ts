// The HTTP edge of DECISIONS §1 over raw sockets: what Node's HTTP parser refuses, an unmet
// `Expect`, oversize headers and URLs, TRACE/CONNECT and unknown methods all answer the envelope
// with a documented status; a path is matched as sent (`;`, `//`, a trailing slash or another case
// never reach another endpoint); a path served with other methods is 405 with Allow; GET /
// redirects to /docs; /favicon.ico is an icon; and an endpoint whose body fields are all optional
// takes an empty body.
import * as net from "node:net"

import { expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { ROUTES } from "../src/http/routes.js"
import { signedClient, TestServer, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const BASE = "/api/open/v1"

interface SocketAnswer {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
  /** The connection was reset instead of closed. */
  readonly reset: boolean
}

/** Sends `bytes` as they are on a new connection and reads the answer until the server closes it. */
const sendRaw = (bytes: string | Buffer) =>
  Effect.gen(function*() {
    const { baseUrl } = yield* TestServer
    const { port } = new URL(baseUrl)
    return yield* Effect.promise(() =>
      new Promise<SocketAnswer>((resolve) => {
        const socket = net.connect(Number(port), "127.0.0.1")
        const chunks: Array<Buffer> = []
        let reset = false
        socket.on("data", (d: Buffer) => chunks.push(d))
        socket.on("error", () => (reset = true))
        socket.on("close", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          const split = text.indexOf("\r\n\r\n")
          const [statusLine = "", ...lines] = text.slice(0, split === -1 ? text.length : split).split("\r\n")
          const headers: Record<string, string> = {}
          for (const line of lines) {
            const colon = line.indexOf(":")
            headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
          }
          resolve({ status: Number(statusLine.split(" ")[1] ?? 0), headers, body: split === -1 ? "" : text.slice(split + 4), reset })
        })
        socket.write(bytes)
      })
    )
  })

/** A request line and headers (the connection closes after the answer). */
const request = (line: string, headers: ReadonlyArray<string> = [], body = "") =>
  `${line} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers.map((h) => `${h}\r\n`).join("")}Connection: close\r\n\r\n${body}`

/** The answer is the whole envelope: status equals code, data.error as expected, a request id. */
const expectEnvelope = (answer: SocketAnswer, status: number, error: string) => {
  expect(answer.reset, "the connection was reset").toBe(false)
  expect(answer.status).toBe(status)
  expect(answer.headers["content-type"]).toMatch(/^application\/json/)
  expect(answer.headers["x-request-id"]).toMatch(/^[A-Za-z0-9._:-]+$/)
  const json = JSON.parse(answer.body) as { code: number; message: string; data: { error: string; allow?: Array<string> } }
  expect(json.code).toBe(status)
  expect(json.message).toEqual(expect.any(String))
  expect(json.data.error).toBe(error)
  return json
}

layer(testServerLayer())("the HTTP edge", (it) => {
  it.effect("requests Node's HTTP parser refuses get the 400 envelope with a request id and Connection: close", () =>
    Effect.gen(function*() {
      const cases = [
        request(`GET ${BASE}/time`, ["X-Thing: a\u0000b"]),
        request(`GET ${BASE}/time`, ["Content-Length: abc"]),
        request(`POST ${BASE}/companies`, ["Content-Length: 2", "Content-Length: 3"], "{}"),
        request(`POST ${BASE}/companies`, ["Transfer-Encoding: chunked", "Content-Type: application/json"], "zz\r\n{}\r\n0\r\n\r\n"),
        `GET ${BASE}/time HTTP/9.9\r\n\r\n`
      ]
      for (const bytes of cases) {
        const answer = yield* sendRaw(bytes)
        const json = expectEnvelope(answer, 400, "invalid_parameter")
        expect(answer.headers["connection"], JSON.stringify(bytes)).toBe("close")
        expect(json.data).toMatchObject({ issues: [{ path: "request" }] })
      }
    }))

  it.effect("the HTTP layer's answers are counted like any other (by status, on /metrics)", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      yield* sendRaw(request(`GET ${BASE}/time`, ["Expect: teapot"]))
      yield* sendRaw(request(`GET ${BASE}/time`, [`X-Big: ${"a".repeat(17 * 1024)}`]))
      yield* sendRaw(request(`GET ${BASE}/time`, ["Content-Length: abc"]))
      const metrics = yield* Effect.promise(() => fetch(`${baseUrl}/metrics`).then((r) => r.text()))
      for (const status of ["417", "431", "400"]) {
        expect(metrics, status).toMatch(new RegExp(`http_server_requests_total\\{[^}]*status="${status}"[^}]*\\} [1-9]`))
      }
    }))

  it.effect("a `#` in the request target is the envelope too (never the path before it)", () =>
    Effect.gen(function*() {
      const answer = yield* sendRaw(request(`GET ${BASE}/time#x`))
      expectEnvelope(answer, 400, "invalid_parameter")
    }))

  it.effect("an Expect other than 100-continue is 417 expectation_failed", () =>
    Effect.gen(function*() {
      const answer = yield* sendRaw(request(`GET ${BASE}/time`, ["Expect: teapot", "X-Request-Id: edge-expect-1"]))
      expectEnvelope(answer, 417, "expectation_failed")
      expect(answer.headers["x-request-id"]).toBe("edge-expect-1")
    }))

  it.effect("headers or a query over 16 KiB are 431 headers_too_large, a 64 KiB query too (no reset)", () =>
    Effect.gen(function*() {
      for (
        const bytes of [
          request(`GET ${BASE}/time`, [`X-Big: ${"a".repeat(17 * 1024)}`]),
          request(`GET ${BASE}/guests?keyword=${"a".repeat(17 * 1024)}`),
          request(`GET ${BASE}/guests?keyword=${"a".repeat(64 * 1024)}`)
        ]
      ) {
        const json = expectEnvelope(yield* sendRaw(bytes), 431, "headers_too_large")
        expect(json.data).toMatchObject({ limit: 16 * 1024 })
      }
    }))

  it.effect("TRACE, CONNECT and unknown methods are 405 method_not_allowed with Allow, never a 500 or a silent close", () =>
    Effect.gen(function*() {
      const trace = expectEnvelope(yield* sendRaw(request(`TRACE ${BASE}/guests`)), 405, "method_not_allowed")
      expect(trace.data.allow).toEqual(["GET", "HEAD", "POST"])
      const propfind = yield* sendRaw(request(`PROPFIND ${BASE}/companies/1`))
      expect(expectEnvelope(propfind, 405, "method_not_allowed").data.allow).toEqual(["GET", "HEAD", "PUT"])
      expect(propfind.headers["allow"]).toBe("GET, HEAD, PUT")
      const unknown = yield* sendRaw(request(`FROB ${BASE}/guests/1`))
      expect(expectEnvelope(unknown, 405, "method_not_allowed").data.allow).toEqual(["GET", "HEAD", "PUT"])
      expect(unknown.headers["allow"]).toBe("GET, HEAD, PUT")
      expectEnvelope(yield* sendRaw(request(`FROB ${BASE}/nowhere`)), 404, "not_found")
      const connect = yield* sendRaw(request("CONNECT example.com:443"))
      expect(expectEnvelope(connect, 405, "method_not_allowed").data.allow).toEqual([])
    }))

  it.effect("a `;` in the path never routes to what comes before it: 400 invalid_parameter naming the path", () =>
    Effect.gen(function*() {
      const { client, credentials } = yield* signedClient()
      const { baseUrl } = yield* TestServer
      const { id } = yield* client.workWechats.create({
        payload: { wechat_number: "edge_semicolon", phone: "13800001234", remark: "before" }
      })
      const put = yield* rawRequest(baseUrl, {
        method: "PUT",
        path: `${BASE}/work-wechats/${id};x=1/status`,
        query: "status=disabled",
        body: JSON.stringify({ remark: "changed" }),
        credentials
      })
      expect([put.status, put.json.data.error, put.json.data.issues]).toEqual([400, "invalid_parameter", [{
        path: "path",
        message: "must not contain ';' or '#'"
      }]])
      const logs = yield* rawRequest(baseUrl, { path: `${BASE}/work-wechats/${id};/logs`, credentials })
      expect([logs.status, logs.json.data.error]).toEqual([400, "invalid_parameter"])
      const after = yield* client.workWechats.get({ params: { id } })
      expect(after.remark).toBe("before")
    }))

  it.effect("an endpoint whose body fields are all optional takes an empty body without Content-Type as {}", () =>
    Effect.gen(function*() {
      const { client, credentials } = yield* signedClient()
      const { baseUrl } = yield* TestServer
      const company = yield* client.companies.create({ payload: { name: "空体公司", city: "长沙市" } })
      const put = yield* rawRequest(baseUrl, { method: "PUT", path: `${BASE}/companies/${company.id}`, credentials })
      expect([put.status, put.json.code]).toEqual([200, 200])
      // It reaches the endpoint (an unknown task), not the media-type check.
      const skip = yield* rawRequest(baseUrl, { method: "POST", path: `${BASE}/follow-up/tasks/999999/skip`, credentials })
      expect([skip.status, skip.json.data.error, skip.json.data.resource]).toEqual([404, "not_found", "follow_up_task"])
      // A required field: still 415 without a JSON body.
      const create = yield* rawRequest(baseUrl, { method: "POST", path: `${BASE}/companies`, credentials })
      expect([create.status, create.json.data.error]).toEqual([415, "unsupported_media_type"])
    }))
})

it("the endpoints that take an empty body are those whose JSON body has only optional fields", () => {
  const taking = [...ROUTES].filter(([, info]) => info.emptyBodyAsObject).map(([key]) => key)
  for (const action of ["complete", "fail", "skip"]) expect(taking).toContain(`POST ${BASE}/follow-up/tasks/:task_id/${action}`)
  expect(taking).toContain(`PUT ${BASE}/companies/:id`)
  expect(taking).not.toContain(`POST ${BASE}/companies`)
  expect(taking).not.toContain(`POST ${BASE}/guests`)
  for (const key of taking) expect(ROUTES.get(key)?.body, key).toBe("json")
})

/**
 * A probe on a keep-alive connection: the answer's Keep-Alive header, and how long after the
 * answer the server closed the idle connection (ms; the connection is left open until then).
 */
const idleClose = Effect.gen(function*() {
  const { baseUrl } = yield* TestServer
  const { port } = new URL(baseUrl)
  return yield* Effect.promise(() =>
    new Promise<{ readonly keepAlive: string | undefined; readonly closedAfterMs: number }>((resolve) => {
      const socket = net.connect(Number(port), "127.0.0.1")
      let text = ""
      let answeredAt = 0
      socket.on("data", (d: Buffer) => {
        text += d.toString("utf8")
        if (answeredAt === 0 && text.includes("\r\n\r\n")) answeredAt = performance.now()
      })
      socket.on("close", () => {
        const keepAlive = /^keep-alive: *(.*)$/im.exec(text)?.[1]?.trim()
        resolve({ keepAlive, closedAfterMs: performance.now() - answeredAt })
      })
      socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    })
  )
})

layer(testServerLayer({ keepAliveSeconds: 1 }))("idle keep-alive connections", (it) => {
  it.effect("an idle keep-alive connection is kept for HTTP_KEEP_ALIVE_SECONDS, advertised as Keep-Alive: timeout=N, then closed by the server", () =>
    Effect.gen(function*() {
      const { keepAlive, closedAfterMs } = yield* idleClose
      expect(keepAlive).toBe("timeout=1")
      // Node closes it at the timeout plus its own buffer (1 s); its default would be 5 s and more.
      expect(closedAfterMs).toBeGreaterThanOrEqual(900)
      expect(closedAfterMs).toBeLessThan(4_500)
    }))
})
