// What the edge provides to everything that runs inside a request: its id and its body, read once
// within its limit. Values handed inward, never written back: the middlewares provide what they
// find (the caller, the mask) the same way, and the edge learns an answer's error from the answer
// itself (observability/answers.ts keeps it with the response).
import { randomUUID } from "node:crypto"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

import { decodeUtf8 } from "../domain/text.js"

/** The exact body bytes of a request, as the client sent (and signed) them. */
export interface RequestBodyShape {
  readonly bytes: Uint8Array
  /** The request's Content-Type, as sent (empty when none). */
  readonly contentType: string
  /** The bytes as text when they are valid UTF-8, else undefined; decoded once, on first use. */
  readonly utf8: () => string | undefined
  /**
   * The UTF-8 text parsed as JSON, once, on first use, for the body rules (the endpoint's decoder
   * parses the text it reads from the request). Only for a body that is valid UTF-8.
   */
  readonly json: () => ParsedJson
}

export type ParsedJson = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown }

const utf8Of = (bytes: Uint8Array): () => string | undefined => {
  let decoded = false
  let text: string | undefined
  return () => {
    if (!decoded) {
      text = bytes.length === 0 ? "" : decodeUtf8(bytes)
      decoded = true
    }
    return text
  }
}

const jsonOf = (utf8: () => string | undefined): () => ParsedJson => {
  let parsed: ParsedJson | undefined
  return () => {
    if (parsed === undefined) {
      try {
        parsed = { ok: true, value: JSON.parse(utf8() ?? "") as unknown }
      } catch (error) {
        parsed = { ok: false, error }
      }
    }
    return parsed
  }
}

export const makeRequestBody = (bytes: Uint8Array, contentType: string): RequestBodyShape => {
  const utf8 = utf8Of(bytes)
  return { bytes, contentType, utf8, json: jsonOf(utf8) }
}

const EMPTY = new Uint8Array(0)

/** What the edge hands inward for the request being served. */
export interface RequestScopeShape {
  /** The request id (X-Request-Id, the client's when it is usable). */
  readonly id: string
  /** The body as sent (empty for GET and HEAD). */
  readonly body: RequestBodyShape
}

/**
 * The request being served: one value, so that the edge adds one entry to the fiber's context per
 * request (each entry is an overlay; past eight of them the next one copies the whole context).
 * Outside a request: no id and an empty body.
 */
export const RequestScope = Context.Reference<RequestScopeShape>("Http/RequestScope", {
  defaultValue: () => ({ id: "", body: makeRequestBody(EMPTY, "") })
})

/** The body of the request being served; empty outside a request (and for GET and HEAD). */
export const RequestBody = Effect.map(RequestScope, (scope) => scope.body)

/** The request id (X-Request-Id, the client's when it is usable); empty outside a request. */
export const RequestId = Effect.map(RequestScope, (scope) => scope.id)

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** A request's id: the client's X-Request-Id when it is usable, else a new one. */
export const requestIdFor = (given: string | undefined): string => given !== undefined && REQUEST_ID.test(given) ? given : randomUUID()
