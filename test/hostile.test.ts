// Hostile input of DECISIONS §1 and §2 end to end: NUL characters, bytes that are not UTF-8,
// deep nesting and ids past int4 are 400s naming the field (in a batch only the item fails),
// malformed signing headers name themselves, and the request log names the key and reason. On raw
// sockets: a request without Host, and bytes past a body its Content-Length ended, get the envelope.
import * as net from "node:net"

import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { createCredentials, TestServer, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

const BASE = "/api/open/v1"

interface Answered {
  readonly status: number
  readonly headers: Record<string, string>
  readonly json: {
    code: number
    message: string
    data: { error: string; issues?: Array<{ path: string; message: string }>; allow?: Array<string> }
  }
}

/** Sends `bytes` on a new connection and reads every answer (each with a Content-Length) until the server closes it. */
const answersTo = (bytes: string) =>
  Effect.gen(function*() {
    const { baseUrl } = yield* TestServer
    const { port } = new URL(baseUrl)
    const text = yield* Effect.promise(() =>
      new Promise<string>((resolve) => {
        const socket = net.connect(Number(port), "127.0.0.1")
        const chunks: Array<Buffer> = []
        socket.on("data", (d: Buffer) => chunks.push(d))
        socket.on("error", () => {})
        socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")))
        socket.write(bytes)
      })
    )
    const answers: Array<Answered> = []
    let rest = text
    while (rest.startsWith("HTTP/1.1 ")) {
      const split = rest.indexOf("\r\n\r\n")
      const [statusLine = "", ...lines] = rest.slice(0, split).split("\r\n")
      const headers: Record<string, string> = {}
      for (const line of lines) headers[line.slice(0, line.indexOf(":")).toLowerCase()] = line.slice(line.indexOf(":") + 1).trim()
      const length = Number(headers["content-length"])
      const body = Buffer.from(rest.slice(split + 4), "utf8")
      answers.push({ status: Number(statusLine.split(" ")[1]), headers, json: JSON.parse(body.subarray(0, length).toString("utf8")) })
      rest = body.subarray(length).toString("utf8")
    }
    expect(rest, "nothing but whole answers").toBe("")
    return answers
  })
const deep = (levels: number, inner = "1") => `${"[".repeat(levels)}${inner}${"]".repeat(levels)}`
const paths = (data: { issues?: Array<{ path: string }> }) => (data.issues ?? []).map((i) => i.path)

layer(testServerLayer())("hostile input", (it) => {
  it.effect("a NUL character in any body string is 400 invalid_parameter naming the field", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const company = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/companies`,
        body: JSON.stringify({ name: "a\u0000b" }),
        credentials
      })
      expect(company.status).toBe(400)
      expect(company.json.data.error).toBe("invalid_parameter")
      expect(paths(company.json.data)).toEqual(["name"])

      const mm = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/matchmakers`,
        body: JSON.stringify({ name: "王" }),
        credentials
      })
      const put = yield* rawRequest(baseUrl, {
        method: "PUT",
        path: `${BASE}/matchmakers/${mm.json.data.id}`,
        body: JSON.stringify({ country: "\u0000" }),
        credentials
      })
      expect(put.status).toBe(400)
      expect(paths(put.json.data)).toEqual(["country"])

      const group = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/work-groups`,
        body: JSON.stringify({ name: "ab", group_no: "\u0000" }),
        credentials
      })
      expect(group.status).toBe(400)
      expect(paths(group.json.data)).toEqual(["group_no"])

      const nested = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/guests`,
        body: JSON.stringify({ name: "张", gender: "male", company_id: 1, requirement_tags: { locations: ["长\u0000沙"] } }),
        credentials
      })
      expect(nested.status).toBe(400)
      expect(paths(nested.json.data)).toEqual(["requirement_tags.locations[0]"])

      const key = yield* rawRequest(baseUrl, { method: "POST", path: `${BASE}/companies`, body: "{\"na\\u0000me\": \"ok\"}", credentials })
      expect(key.status).toBe(400)
    }))

  it.effect("a NUL or a byte that is not UTF-8 in the query is 400 naming the parameter, after a valid signature", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      for (const query of ["keyword=%00", "keyword=%FF", "keyword=%E4%B8", "page=1&keyword=a%00b"]) {
        const res = yield* rawRequest(baseUrl, { path: `${BASE}/guests`, query, credentials })
        expect(res.status, query).toBe(400)
        expect(res.json.data.error, query).toBe("invalid_parameter")
        expect(paths(res.json.data), query).toEqual(["keyword"])
      }
      // Valid escapes still work, the signature being computed over the same bytes.
      const ok = yield* rawRequest(baseUrl, { path: `${BASE}/guests`, query: "keyword=%E5%BC%A0", credentials })
      expect(ok.status).toBe(200)
    }))

  it.effect("a JSON body that is not valid UTF-8 is refused, never stored as U+FFFD", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const body = new Uint8Array([...new TextEncoder().encode("{\"name\": \""), 0xff, 0xfe, ...new TextEncoder().encode("公司\"}")])
      const res = yield* rawRequest(baseUrl, { method: "POST", path: `${BASE}/companies`, body, credentials })
      expect(res.status).toBe(400)
      expect(res.json.data.error).toBe("invalid_parameter")
      expect(paths(res.json.data)).toEqual(["body"])
    }))

  it.effect("a value nested deeper than 32 levels is 400, even thousands deep", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const cases: ReadonlyArray<readonly [string, string]> = [
        [`${BASE}/companies`, `{"name": ${deep(10000)}}`],
        [`${BASE}/guests/batch`, `{"guests": ${deep(10000)}}`],
        [`${BASE}/image-blacklist/check`, `{"md5_list": ${deep(10000)}}`],
        [`${BASE}/companies`, `{"name": ${deep(32)}}`]
      ]
      for (const [path, body] of cases) {
        const res = yield* rawRequest(baseUrl, { method: "POST", path, body, credentials })
        expect(res.status, path).toBe(400)
        expect(res.json.data.error, path).toBe("invalid_parameter")
      }
      // 31 arrays inside the body object are 32 levels: allowed by the text rule, refused by the field's type.
      const limit = yield* rawRequest(baseUrl, { method: "POST", path: `${BASE}/companies`, body: `{"name": ${deep(31)}}`, credentials })
      expect(limit.status).toBe(400)
      expect(limit.json.data.issues[0].message).not.toMatch(/deeper/)
    }))

  it.effect("in a batch, an item with a NUL fails alone and the good items are created", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const company = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/companies`,
        body: JSON.stringify({ name: "批量公司" }),
        credentials
      })
      const companyId = company.json.data.id as number
      const guests = [
        { name: "甲", gender: "male", company_id: companyId },
        { name: "乙\u0000", gender: "female", company_id: companyId },
        { name: "丙", gender: "female", company_id: companyId, occupation: "x\u0000" },
        { name: "丁", gender: "male", company_id: companyId }
      ]
      const res = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/guests/batch`,
        body: JSON.stringify({ guests }),
        credentials
      })
      expect(res.status).toBe(200)
      expect(res.json.data.success_count).toBe(2)
      expect(res.json.data.failed_count).toBe(2)
      const failures = (res.json.data.results as Array<{ index: number; status: string; error?: string; issues?: Array<{ path: string }> }>)
        .filter((r) => r.status === "failure")
      expect(failures.map((f) => [f.index, f.error, f.issues?.[0]?.path])).toEqual([[1, "invalid_parameter", "name"], [
        2,
        "invalid_parameter",
        "occupation"
      ]])

      const md5 = (c: string) => c.repeat(32)
      const add = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/image-blacklist`,
        body: JSON.stringify({ items: [{ md5: md5("a") }, { md5: md5("b"), reject_reason: "bad\u0000" }, { md5: md5("c") }] }),
        credentials
      })
      expect(add.status).toBe(200)
      expect(add.json.data.added).toBe(2)
      expect(add.json.data.errors.map((e: { index: number }) => e.index)).toEqual([1])
    }))

  it.effect("ids past int4 are 400 invalid_parameter, in a path, a query or a body", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const inPath = yield* rawRequest(baseUrl, { path: `${BASE}/guests/99999999999`, credentials })
      expect(inPath.status).toBe(400)
      expect(paths(inPath.json.data)).toEqual(["id"])
      const inQuery = yield* rawRequest(baseUrl, { path: `${BASE}/guests`, query: "company_id=2147483648", credentials })
      expect(inQuery.status).toBe(400)
      const inBody = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/guests`,
        body: JSON.stringify({ name: "张", gender: "male", company_id: 3_000_000_000 }),
        credentials
      })
      expect(inBody.status).toBe(400)
      expect(paths(inBody.json.data)).toEqual(["company_id"])
      const largest = yield* rawRequest(baseUrl, { path: `${BASE}/guests/2147483647`, credentials })
      expect(largest.status).toBe(404)
    }))

  it.effect("a present but malformed signing header is 401 missing_credentials naming it in data.header", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      const res = yield* Effect.promise(() =>
        fetch(`${baseUrl}${BASE}/guests`, {
          headers: { "x-app-key": credentials.appKey, "x-timestamp": "1.5", "x-nonce": "abcdefghijklmnop", "x-signature": "00" }
        }).then(async (r) => ({ status: r.status, json: await r.json() as { data: { error: string; header?: string } } }))
      )
      expect(res.status).toBe(401)
      expect(res.json.data).toMatchObject({ error: "missing_credentials", header: "X-Timestamp" })
      const nonce = yield* Effect.promise(() =>
        fetch(`${baseUrl}${BASE}/guests`, {
          headers: { "x-app-key": credentials.appKey, "x-timestamp": "1700000000", "x-nonce": "short", "x-signature": "00" }
        }).then(async (r) => ({ status: r.status, json: await r.json() as { data: { error: string; header?: string } } }))
      )
      expect(nonce.json.data).toMatchObject({ error: "missing_credentials", header: "X-Nonce" })
    }))

  it.effect("a company contact_phone may be a landline; a guest phone stays 11 digits", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const credentials = yield* createCredentials()
      for (const phone of ["0731-88886666", "+86 (731) 8888 6666", "13812345678"]) {
        const res = yield* rawRequest(baseUrl, {
          method: "POST",
          path: `${BASE}/companies`,
          body: JSON.stringify({ name: "座机公司", contact_phone: phone }),
          credentials
        })
        expect(res.status, phone).toBe(200)
        expect(res.json.data.contact_phone).toBe(phone)
      }
      for (const phone of ["1234", "0731-8888-6666-0000-1", "call me", "-----"]) {
        const res = yield* rawRequest(baseUrl, {
          method: "POST",
          path: `${BASE}/companies`,
          body: JSON.stringify({ name: "座机公司", contact_phone: phone }),
          credentials
        })
        expect(res.status, phone).toBe(400)
      }
      const guest = yield* rawRequest(baseUrl, {
        method: "POST",
        path: `${BASE}/guests`,
        body: JSON.stringify({ name: "张", gender: "male", company_id: 1, phone: "0731-8888666" }),
        credentials
      })
      expect(guest.status).toBe(400)
    }))

  it.effect("an HTTP/1.1 request without Host is 400 invalid_parameter naming Host, in the envelope (HTTP/1.0 needs none)", () =>
    Effect.gen(function*() {
      const [answer, ...more] = yield* answersTo(`GET ${BASE}/time HTTP/1.1\r\nConnection: close\r\n\r\n`)
      expect(more).toEqual([])
      expect([answer!.status, answer!.json.code, answer!.json.data.error]).toEqual([400, 400, "invalid_parameter"])
      expect(answer!.json.data.issues).toEqual([{ path: "Host", message: expect.stringMatching(/Host header/) }])
      expect(answer!.headers["x-request-id"]).toMatch(/^[A-Za-z0-9._:-]+$/)
      const old = yield* answersTo(`GET ${BASE}/time HTTP/1.0\r\n\r\n`)
      expect(old.map((a) => a.status)).toEqual([200])
    }))

  it.effect("bytes past a body its Content-Length ended are a malformed next request: the first gets its own answer, then 400 invalid_parameter (not 405), and the connection closes", () =>
    Effect.gen(function*() {
      const body = JSON.stringify({ url: "https://hooks.example.test/in" })
      for (const method of ["PUT", "POST"]) {
        const path = method === "PUT" ? `${BASE}/webhook` : `${BASE}/credentials/rotate`
        const answers = yield* answersTo(
          `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n${body}`
        )
        // The first request (its body `{"`, unsigned) is answered as itself.
        expect(answers.map((a) => [a.status, a.json.data.error]), method).toEqual([[401, "missing_credentials"], [
          400,
          "invalid_parameter"
        ]])
        expect(answers[1]!.json.data.issues![0]!.path).toBe("request")
        expect(answers[1]!.headers["connection"]).toBe("close")
      }
      // A pipelined request with a method Node does not know is judged on its own line: 405 for its path.
      const pipelined = yield* answersTo(
        `GET ${BASE}/time HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nFOO ${BASE}/time HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`
      )
      expect(pipelined.map((a) => [a.status, a.json.data.error ?? "ok"])).toEqual([[200, "ok"], [405, "method_not_allowed"]])
      expect(pipelined[1]!.json.message).toBe("FOO is not served on this path; it is served with GET, HEAD")
      expect(pipelined[1]!.headers["allow"]).toBe("GET, HEAD")
    }))

  it.effect("a declared oversize body sent with Connection: close gets its 413, not a broken pipe", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const { port } = new URL(baseUrl)
      const size = 3 * 1024 * 1024
      for (let round = 0; round < 3; round++) {
        const outcome = yield* Effect.promise(() =>
          new Promise<{ response: string; writeError: string | null; sent: number }>((resolve) => {
            const socket = net.connect(Number(port), "127.0.0.1")
            let response = ""
            let writeError: string | null = null
            socket.on("data", (d) => (response += d.toString("latin1")))
            socket.on("error", (e) => (writeError = e.message))
            socket.on("close", () => resolve({ response, writeError, sent }))
            socket.write(
              `POST /api/open/v1/companies HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
                `Content-Length: ${size}\r\nConnection: close\r\n\r\n`
            )
            // A slow sender, as over a real network: the body is still arriving when the answer is ready.
            const chunk = Buffer.alloc(64 * 1024, 0x20)
            let sent = 0
            const pump = () => {
              if (sent >= size || socket.destroyed) return
              sent += chunk.length
              socket.write(chunk, () => setTimeout(pump, 2))
            }
            pump()
          })
        )
        // A client that writes its whole body before reading (Python's urllib) must be able to.
        expect(outcome.sent, `round ${round}`).toBe(size)
        expect(outcome.writeError, `round ${round}`).toBeNull()
        expect(outcome.response.split("\r\n")[0], `round ${round}`).toBe("HTTP/1.1 413 Payload Too Large")
        expect(outcome.response).toContain("payload_too_large")
      }
    }))
})
