// Raw signed HTTP requests for tests that need to bend the protocol (tampered bodies, replayed
// nonces, stale timestamps) where the typed client would not.
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"

import { liveSigner } from "../../src/auth/Signer.js"
import { newNonce } from "../../src/client/Client.js"

export interface RawResponse {
  readonly status: number
  readonly headers: Headers
  /** The body as received (every byte, for tests that search it). */
  readonly text: string
  // Test assertions read arbitrary envelope fields; the envelope itself is checked by value.
  readonly json: { code: number; message: string; data: any } // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface RawOptions {
  readonly method?: string
  readonly path: string
  readonly query?: string
  readonly body?: string | Uint8Array
  readonly contentType?: string
  readonly credentials?: { readonly appKey: string; readonly appSecret: string }
  readonly timestamp?: number
  readonly nonce?: string
  /** What is signed, when it should differ from what is sent. */
  readonly signed?: { readonly path?: string; readonly query?: string; readonly body?: string | Uint8Array; readonly secret?: string }
  readonly headers?: Record<string, string>
}

const bytesOf = (b: string | Uint8Array | undefined): Uint8Array =>
  b === undefined ? new Uint8Array(0) : typeof b === "string" ? new TextEncoder().encode(b) : b

export const rawRequest = (baseUrl: string, o: RawOptions) =>
  Effect.gen(function*() {
    const method = o.method ?? "GET"
    const nowMs = yield* Clock.currentTimeMillis
    const timestamp = String(o.timestamp ?? Math.floor(nowMs / 1000))
    const nonce = o.nonce ?? newNonce()
    const headers: Record<string, string> = { ...o.headers }
    const body = bytesOf(o.body)
    if (o.body !== undefined) headers["content-type"] = o.contentType ?? "application/json"
    if (o.credentials) {
      headers["x-app-key"] = o.credentials.appKey
      headers["x-timestamp"] = timestamp
      headers["x-nonce"] = nonce
      headers["x-signature"] = liveSigner.sign(o.signed?.secret ?? o.credentials.appSecret, {
        method,
        path: o.signed?.path ?? o.path,
        rawQuery: o.signed?.query ?? o.query ?? "",
        appKey: o.credentials.appKey,
        timestamp,
        nonce,
        body: o.signed?.body !== undefined ? bytesOf(o.signed.body) : body
      })
    }
    const url = `${baseUrl}${o.path}${o.query ? `?${o.query}` : ""}`
    // The fetch of the test's context: the global one, or the in-memory app's (test/support/memory.ts).
    const fetch = yield* FetchHttpClient.Fetch
    return yield* Effect.promise(async (): Promise<RawResponse> => {
      const res = await fetch(url, { method, headers, ...(o.body !== undefined ? { body } : {}) })
      const text = await res.text()
      return { status: res.status, headers: res.headers, text, json: JSON.parse(text) }
    })
  })
