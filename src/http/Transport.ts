// The Node HTTP server the API is served on. What Node's HTTP layer answers by itself (a request
// its parser refuses, an `Expect` it does not meet, `CONNECT`, headers over the limit, a request
// that does not arrive in time) is answered here with the error envelope of DECISIONS §1, with
// X-Request-Id and `Connection: close`, and logged and counted like any other answer; never an
// empty body or a silent close.
import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"

import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"

import { ExpectationFailed, HeadersTooLarge, RequestTimeout } from "../../schema/EdgeErrors.js"
import { AnyErrorEnvelope, type ApiError, errorHeaders, ErrorStatus, reasonOf } from "../../schema/Errors.js"
import { AppConfig } from "../Config.js"
import { InvalidInput } from "../domain/errors.js"
import { clip } from "../domain/text.js"
import { allowedMethods, methodNotAllowed } from "./allow.js"
import { routeNotFound } from "./errors.js"
import { observeRequest } from "./observe.js"
import { requestIdFor } from "./RequestState.js"

/** Node's default: the request line and headers together, in bytes. */
export const MAX_HEADER_BYTES = 16 * 1024

/** How long a refused connection is still read (and discarded) so that the client gets the answer. */
const LINGER_MS = 2_000

const encodeError = Schema.encodeSync(AnyErrorEnvelope)

interface ParserError extends Error {
  readonly code?: string
  readonly reason?: string
  /** What the parser was given: earlier (pipelined) requests on the connection included. */
  readonly rawPacket?: Buffer
  /** Where in rawPacket the parser failed. */
  readonly bytesParsed?: number
}

/** What a refused request was, as far as it is known (for the log line). */
interface Refused {
  readonly error: ApiError
  readonly method: string
  readonly url: string
  readonly requestId: string
}

/** A request line: `METHOD target HTTP/x`. */
const REQUEST_LINE = /^([!-~]{1,64}) ([!-~]+) HTTP\//

/** A byte of a method token (RFC 9110 tchar). */
const TOKEN_BYTE = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/

/**
 * The request line of the request the parser failed in, if it has one. The packet may begin with
 * earlier requests of the connection (pipelined, or the bytes past a body shorter than they were,
 * which read as the next request), so it is looked for where the parser failed: a method the
 * parser does not know fails inside the line's first token, anything else after its line.
 */
const failedRequestLine = (err: ParserError): RegExpExecArray | null => {
  const packet = err.rawPacket
  if (packet === undefined) return null
  const at = Math.min(Math.max(0, err.bytesParsed ?? 0), packet.length)
  let start: number
  if (err.code === "HPE_INVALID_METHOD") {
    start = at
    while (start > 0 && TOKEN_BYTE.test(String.fromCharCode(packet[start - 1]!))) start--
  } else {
    // The last line before the failure that is a request line (headers and bodies are not).
    const before = packet.subarray(0, at).toString("latin1")
    start = 0
    for (let nl = before.lastIndexOf("\n"); nl !== -1; nl = before.lastIndexOf("\n", nl - 1)) {
      if (REQUEST_LINE.test(before.slice(nl + 1, nl + 1 + 8192))) {
        start = nl + 1
        break
      }
    }
  }
  return REQUEST_LINE.exec(packet.subarray(start, start + 8192).toString("latin1"))
}

const malformed = (err: ParserError, detail?: string) =>
  InvalidInput.of(
    [{ path: "request", message: clip(detail === undefined ? err.reason ?? err.message : `${err.reason ?? err.message}: ${detail}`, 200) }],
    "the HTTP request is malformed"
  )

const answerFor = (err: ParserError): Omit<Refused, "requestId"> | undefined => {
  const line = failedRequestLine(err)
  const method = line?.[1] ?? ""
  const url = line?.[2] ?? ""
  switch (err.code) {
    case "HPE_HEADER_OVERFLOW":
      return {
        method,
        url,
        error: new HeadersTooLarge({
          message: `the request line and headers exceed ${MAX_HEADER_BYTES} bytes`,
          limit: MAX_HEADER_BYTES
        })
      }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { method, url, error: new RequestTimeout({ message: "the request did not arrive in time" }) }
    case "HPE_INVALID_METHOD": {
      // Bytes that do not start a request line at all (what followed a body shorter than its
      // Content-Length said, say) are a malformed request, not a method.
      if (line === null) {
        return {
          method,
          url,
          error: malformed(
            err,
            "these bytes do not start a request (bytes sent past a body its Content-Length ended read as the next request)"
          )
        }
      }
      // A method Node does not know: 405 on a path that exists, as for a method it knows.
      const allow = allowedMethods(url)
      return { method, url, error: allow.length === 0 ? routeNotFound : methodNotAllowed(method, allow) }
    }
  }
  if (err.code?.startsWith("HPE_") !== true) return undefined // the connection itself failed
  return { method, url, error: malformed(err) }
}

const bodyOf = (error: ApiError): string => JSON.stringify(encodeError(error))

const headersOf = (error: ApiError, requestId: string): Record<string, string> => ({
  "content-type": "application/json",
  "x-request-id": requestId,
  ...errorHeaders(error),
  connection: "close"
})

/** The answer as bytes on a socket Node's HTTP layer no longer writes to. */
const rawAnswer = (error: ApiError, requestId: string): string => {
  const status = ErrorStatus[error._tag]
  const body = bodyOf(error)
  const head = Object.entries({ ...headersOf(error, requestId), "content-length": String(Buffer.byteLength(body)) })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\n${head}\r\n${body}`
}

const sentRequestId = (request: IncomingMessage): string | undefined => {
  const given = request.headers["x-request-id"]
  return typeof given === "string" ? given : undefined
}

const answered = new WeakSet<Duplex>()

/**
 * Writes the answer and closes the connection. What the client still sends is read and dropped for
 * a moment: closing a socket with unread bytes resets it, and the client would lose the answer.
 */
const answerAndClose = (socket: Duplex, error: ApiError, requestId: string): void => {
  answered.add(socket)
  socket.end(rawAnswer(error, requestId))
  socket.on("data", () => {})
  socket.resume()
  setTimeout(() => socket.destroy(), LINGER_MS).unref()
}

type FailureAmid =
  | { readonly _tag: "AfterAnswer"; readonly answer: ServerResponse }
  | { readonly _tag: "MidAnswer" }
  | { readonly _tag: "Alone" }

/**
 * Where the failure is, given the answer under way on the socket: in a request that came after one
 * still being answered (that one was received whole: the failed bytes were pipelined after it);
 * in the request being answered (its body), once its answer has started (nothing can be written
 * before it); or in a request with nothing under way.
 */
const failureAmid = (socket: Duplex): FailureAmid => {
  const current = (socket as { _httpMessage?: ServerResponse | null })._httpMessage
  if (current === undefined || current === null || current.writableFinished) return { _tag: "Alone" }
  if (current.req.complete) return { _tag: "AfterAnswer", answer: current }
  return current.headersSent ? { _tag: "MidAnswer" } : { _tag: "Alone" }
}

/**
 * A Node HTTP server whose own answers are envelopes; each one is logged and counted with the
 * services of the calling context (the request log and metrics). An idle keep-alive connection is
 * kept for HTTP_KEEP_ALIVE_SECONDS (Node's own default, 5 s, is below every load balancer's idle
 * timeout: a proxy reusing a connection the server has just closed answers its client 502, and a
 * client's POST on it fails without knowing whether it ran).
 */
export const makeApiServer: Effect.Effect<Server, never, AppConfig | Scope.Scope> = Effect.gen(function*() {
  const { keepAliveSeconds } = yield* AppConfig
  // Runs the log line and metrics of an answer Node gives from its callbacks, with this context;
  // what is still running when the server's scope closes is interrupted.
  const run = yield* FiberSet.makeRuntime()
  const server = createServer({
    maxHeaderSize: MAX_HEADER_BYTES,
    // Node would answer an HTTP/1.1 request without Host with an empty 400; the edge answers it
    // with the envelope (Edge.ts).
    requireHostHeader: false,
    keepAliveTimeout: keepAliveSeconds * 1000
  })
  const report = (refused: Refused, startedAt: number) => {
    const status = ErrorStatus[refused.error._tag]
    const url = clip(refused.url, 512)
    run(
      Effect.andThen(
        observeRequest({ method: refused.method, url, status, startedAt, error: reasonOf(refused.error) }),
        Effect.logInfo("request").pipe(Effect.annotateLogs({
          request_id: refused.requestId,
          method: clip(refused.method, 32),
          path: url.split("?")[0],
          status,
          ms: 0,
          app_key: null,
          error: reasonOf(refused.error)
        }))
      )
    )
  }

  server.on("clientError", (err: ParserError, socket: Duplex) => {
    if (answered.has(socket)) return
    const answer = answerFor(err)
    const amid = failureAmid(socket)
    if (answer === undefined || !socket.writable || amid._tag === "MidAnswer") {
      socket.destroy()
      return
    }
    const refused = { ...answer, requestId: requestIdFor(undefined) }
    report(refused, performance.now())
    if (amid._tag === "Alone") return answerAndClose(socket, refused.error, refused.requestId)
    // The failed bytes came after a request still being answered (pipelined, or past a body its
    // Content-Length ended): that answer goes first, in order, then this one, and the connection closes.
    answered.add(socket)
    const earlier = amid.answer
    earlier.once("finish", () => (socket.writable ? answerAndClose(socket, refused.error, refused.requestId) : socket.destroy()))
    earlier.once("close", () => {
      if (!earlier.writableFinished) socket.destroy()
    })
  })

  // Any Expect but 100-continue (which the server meets: Edge.ts).
  server.on("checkExpectation", (request: IncomingMessage, response: ServerResponse) => {
    const startedAt = performance.now()
    const error = new ExpectationFailed({
      message: `the expectation ${clip(String(request.headers.expect), 64)} cannot be met; only 100-continue is`
    })
    const requestId = requestIdFor(sentRequestId(request))
    const body = bodyOf(error)
    response
      .writeHead(ErrorStatus[error._tag], { ...headersOf(error, requestId), "content-length": String(Buffer.byteLength(body)) })
      .end(body)
    report({ error, method: request.method ?? "", url: request.url ?? "", requestId }, startedAt)
  })

  // CONNECT asks for a tunnel, which this server never opens.
  server.on("connect", (request: IncomingMessage, socket: Duplex) => {
    const startedAt = performance.now()
    const error = methodNotAllowed("CONNECT", [])
    const requestId = requestIdFor(sentRequestId(request))
    answerAndClose(socket, error, requestId)
    report({ error, method: "CONNECT", url: request.url ?? "", requestId }, startedAt)
  })
  return server
})
