// Per-request state shared between the edge middleware and the signature middleware: the exact
// body bytes (read once), the request id, the authenticated caller and extra response headers.
import * as Context from "effect/Context"

import type { CallerInfo } from "../../schema/Auth.js"

export interface RequestStateShape {
  readonly requestId: string
  body: Uint8Array
  caller: CallerInfo | undefined
  /** The JSON body as the signature middleware parsed it for its text checks (the decoder reuses it). */
  json?: { readonly value: unknown } | undefined
  readonly headers: Record<string, string>
  /** The `data.error` of an error response, for the request log. */
  error?: string | undefined
  /** This POST holds its Idempotency-Key: the edge keeps (or frees) the answer. */
  idempotency?: { readonly appKey: string; readonly key: string } | undefined
  /** This POST repeats a key whose answer is kept: the edge answers it again. */
  replay?: { readonly status: number; readonly body: Uint8Array; readonly contentType: string } | undefined
}

export class RequestState extends Context.Reference<RequestState>()("Http/RequestState", {
  defaultValue: (): RequestStateShape => ({ requestId: "", body: new Uint8Array(0), caller: undefined, headers: {} })
}) {}
