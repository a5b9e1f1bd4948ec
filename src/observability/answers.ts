// An error's answer (its envelope, status and headers, DECISIONS §1) and the error each answer was
// made of, so that the request log and the metrics read the error, never the answer's JSON. Shared
// by the API's edge and middlewares, the probes (on the API and the daemon's own port) and the
// replay of a kept answer.
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Schema from "effect/Schema"

import { AnyErrorEnvelope, type ApiError, errorHeaders, ErrorStatus } from "../../schema/Errors.js"

const encodeError = Schema.encodeSync(AnyErrorEnvelope)
const decodeError = Schema.decodeUnknownOption(AnyErrorEnvelope)

/**
 * The error each error answer was made of. Kept with the answer, not with the request: HttpApi
 * hands a handler's answer on as a response value, and an answer replaced on its way out (by a
 * replay, an outer refusal) takes its own error along, never a stale one. Weak: gone with the answer.
 */
const answers = new WeakMap<HttpServerResponse.HttpServerResponse, ApiError>()

/** `response` as the answer of `error` (its body is `error`'s envelope). */
export const answerOf = (error: ApiError, response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  answers.set(response, error)
  return response
}

/** The error an answer was made of: undefined for a success (and for an answer made elsewhere). */
export const answeredError = (response: HttpServerResponse.HttpServerResponse): ApiError | undefined => answers.get(response)

/** An ApiError as its response: the envelope, its status and headers. */
export const errorResponse = (error: ApiError): HttpServerResponse.HttpServerResponse =>
  answerOf(error, HttpServerResponse.jsonUnsafe(encodeError(error), { status: ErrorStatus[error._tag], headers: errorHeaders(error) }))

/**
 * The error a kept answer's bytes encode, for an error status, if they still decode as one: a kept
 * answer is bytes (sealed at rest), not the error it was made of.
 */
export const keptError = (kept: { readonly status: number; readonly body: Uint8Array }): ApiError | undefined => {
  if (kept.status < 400) return undefined
  try {
    const decoded = decodeError(JSON.parse(Buffer.from(kept.body).toString("utf8")))
    return decoded._tag === "Some" ? decoded.value : undefined
  } catch {
    return undefined
  }
}
