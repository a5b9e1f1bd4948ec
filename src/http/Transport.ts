// The Node HTTP server the API is served on. What Node's HTTP layer answers by itself (a request
// its parser refuses, an `Expect` it does not meet, `CONNECT`, headers over the limit, a request
// that does not arrive in time) is answered here with the error envelope of DECISIONS §1, with
// X-Request-Id and `Connection: close`, and logged and counted like any other answer; never an
// empty body or a silent close.
import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import {
  AnyErrorEnvelope,
  type ApiError,
  ErrorStatus,
  ExpectationFailed,
  HeadersTooLarge,
  InvalidInput,
  reasonOfError,
  RequestTimeout
} from "../../schema/Errors.js"
import { AppConfig } from "../Config.js"
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
  readonly rawPacket?: Buffer
}

/** What a refused request was, as far as it is known (for the log line). */
interface Refused {
  readonly error: ApiError
  readonly method: string
  readonly url: string
  readonly requestId: string
}

/** The request line at the start of what the parser was given: `METHOD target HTTP/x`. */
const REQUEST_LINE = /^([!-~]{1,64}) ([!-~]+) HTTP\//

const answerFor = (err: ParserError): Omit<Refused, "requestId"> | undefined => {
  const line = err.rawPacket === undefined ? null : REQUEST_LINE.exec(err.rawPacket.subarray(0, 8192).toString("latin1"))
  const method = line?.[1] ?? ""
  const url = line?.[2] ?? ""
  switch (err.code) {
    case "HPE_HEADER_OVERFLOW":
      return {
        method,
        url,
        error: new HeadersTooLarge({
          error: "headers_too_large",
          message: `the request line and headers exceed ${MAX_HEADER_BYTES} bytes`,
          limit: MAX_HEADER_BYTES
        })
      }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { method, url, error: new RequestTimeout({ error: "request_timeout", message: "the request did not arrive in time" }) }
    case "HPE_INVALID_METHOD": {
      // A method Node does not know: 405 on a path that exists, as for a method it knows.
      const allow = url === "" ? [] : allowedMethods(url)
      return { method, url, error: allow.length === 0 ? routeNotFound : methodNotAllowed(method, allow) }
    }
  }
  if (err.code?.startsWith("HPE_") !== true) return undefined // the connection itself failed
  return {
    method,
    url,
    error: InvalidInput.of(
      [{ path: "request", message: clip(err.reason ?? err.message, 200) }],
      "the HTTP request is malformed"
    )
  }
}

const bodyOf = (error: ApiError): string => JSON.stringify(encodeError(error))

const headersOf = (error: ApiError, requestId: string): Record<string, string> => ({
  "content-type": "application/json",
  "x-request-id": requestId,
  ...(error._tag === "MethodNotAllowed" ? { allow: error.allow.join(", ") } : {}),
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

/** A response is already under way on this socket: nothing can be written before it. */
const responding = (socket: Duplex): boolean => {
  const current = (socket as { _httpMessage?: ServerResponse | null })._httpMessage
  return current !== undefined && current !== null && current.headersSent
}

/**
 * A Node HTTP server whose own answers are envelopes; each one is logged and counted with the
 * services of the calling context (the request log and metrics). An idle keep-alive connection is
 * kept for HTTP_KEEP_ALIVE_SECONDS (Node's own default, 5 s, is below every load balancer's idle
 * timeout: a proxy reusing a connection the server has just closed answers its client 502, and a
 * client's POST on it fails without knowing whether it ran).
 */
export const makeApiServer: Effect.Effect<Server, never, AppConfig> = Effect.map(Effect.context<AppConfig>(), (context) => {
  const server = createServer({
    maxHeaderSize: MAX_HEADER_BYTES,
    keepAliveTimeout: Context.get(context, AppConfig).keepAliveSeconds * 1000
  })
  const report = (refused: Refused, startedAt: number) => {
    const status = ErrorStatus[refused.error._tag]
    const url = clip(refused.url, 512)
    Effect.runForkWith(context)(
      Effect.andThen(
        observeRequest({ method: refused.method, url, status, startedAt, error: reasonOfError(refused.error) }),
        Effect.logInfo("request").pipe(Effect.annotateLogs({
          request_id: refused.requestId,
          method: clip(refused.method, 32),
          path: url.split("?")[0],
          status,
          ms: 0,
          app_key: null,
          error: reasonOfError(refused.error)
        }))
      )
    )
  }

  server.on("clientError", (err: ParserError, socket: Duplex) => {
    if (answered.has(socket)) return
    const answer = answerFor(err)
    if (answer === undefined || !socket.writable || responding(socket)) {
      socket.destroy()
      return
    }
    const refused = { ...answer, requestId: requestIdFor(undefined) }
    answerAndClose(socket, refused.error, refused.requestId)
    report(refused, performance.now())
  })

  // Any Expect but 100-continue (which the server meets: Edge.ts).
  server.on("checkExpectation", (request: IncomingMessage, response: ServerResponse) => {
    const startedAt = performance.now()
    const error = new ExpectationFailed({
      error: "expectation_failed",
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
