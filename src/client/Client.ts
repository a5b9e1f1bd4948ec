// Typed client for integrators, derived from the contract in schema/: every request is signed
// (DECISIONS §2) over the exact bytes it sends, multipart bodies included.
import { randomBytes } from "node:crypto"

import { HttpApiClient, type HttpBody, HttpClient, HttpClientRequest } from "@effect/platform"
import { Clock, Effect } from "effect"

import { OpenApiDef } from "../../schema/Api.js"
import { sign } from "../domain/signing.js"

export interface Credentials {
  readonly appKey: string
  readonly appSecret: string
}

export interface SignOptions {
  /** Overrides for tests: a fixed nonce or timestamp. */
  readonly nonce?: () => string
  readonly timestamp?: (nowMs: number) => number
}

export const newNonce = (): string => randomBytes(18).toString("base64url")

/** The exact bytes of a request body, and the content type they go with. */
const bodyBytes = (body: HttpBody.HttpBody): Effect.Effect<{ bytes: Uint8Array; contentType?: string }> => {
  switch (body._tag) {
    case "Empty":
      return Effect.succeed({ bytes: new Uint8Array(0) })
    case "Uint8Array":
      return Effect.succeed({ bytes: body.body, contentType: body.contentType })
    case "Raw":
      if (typeof body.body === "string") {
        return Effect.succeed({
          bytes: new TextEncoder().encode(body.body),
          ...(body.contentType ? { contentType: body.contentType } : {})
        })
      }
      if (body.body instanceof Uint8Array) {
        return Effect.succeed({ bytes: body.body, ...(body.contentType ? { contentType: body.contentType } : {}) })
      }
      return Effect.dieMessage("cannot sign a raw body of this kind")
    case "FormData":
      // Serialise the form once to learn its bytes and boundary, then send exactly those bytes.
      return Effect.promise(async () => {
        const response = new Response(body.formData)
        return { bytes: new Uint8Array(await response.arrayBuffer()), contentType: response.headers.get("content-type")! }
      })
    case "Stream":
      return Effect.dieMessage("cannot sign a streamed body")
  }
}

/** Adds X-App-Key, X-Timestamp, X-Nonce and X-Signature to a request with an absolute URL. */
export const signRequest =
  (credentials: Credentials, options: SignOptions = {}) =>
  (request: HttpClientRequest.HttpClientRequest): Effect.Effect<HttpClientRequest.HttpClientRequest> =>
    Effect.gen(function*() {
      const { bytes, contentType } = yield* bodyBytes(request.body)
      const nowMs = yield* Clock.currentTimeMillis
      const timestamp = String(options.timestamp ? options.timestamp(nowMs) : Math.floor(nowMs / 1000))
      const nonce = options.nonce ? options.nonce() : newNonce()
      // The query is sent as URLSearchParams serialises it; sign that same text.
      const url = new URL(request.url)
      for (const [k, v] of request.urlParams) url.searchParams.append(k, v)
      const rawQuery = url.search.startsWith("?") ? url.search.slice(1) : ""
      const signature = sign(credentials.appSecret, {
        method: request.method,
        path: url.pathname,
        rawQuery,
        appKey: credentials.appKey,
        timestamp,
        nonce,
        body: bytes
      })
      const withBody = request.body._tag === "FormData" || request.body._tag === "Raw"
        ? HttpClientRequest.bodyUint8Array(request, bytes, contentType)
        : request
      return withBody.pipe(
        HttpClientRequest.setHeaders({
          "x-app-key": credentials.appKey,
          "x-timestamp": timestamp,
          "x-nonce": nonce,
          "x-signature": signature
        })
      )
    })

/** The Open API client: `client.matchmakers.list({urlParams: {...}})` and so on. */
export const makeOpenApiClient = (baseUrl: string, credentials: Credentials, options: SignOptions = {}) =>
  HttpApiClient.make(OpenApiDef, {
    transformClient: (client) =>
      client.pipe(
        // The base URL goes on first so that the signer sees the absolute URL it sends.
        HttpClient.mapRequest(HttpClientRequest.prependUrl(baseUrl)),
        HttpClient.mapRequestEffect(signRequest(credentials, options))
      )
  })
