// The masker (DECISIONS §3): what a masking client sees of a success's data. The rule (which
// fields, starred how) is src/domain/masking.ts; this layer decides per caller and is what the edge
// hands to the success schemas (ResponseMask), so handlers and services return plain values.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import type { CallerInfo } from "../../schema/Auth.js"
import { maskDeep } from "../domain/masking.js"

export interface MaskerShape {
  /** The mask for this caller's answers: the §3 policy for a masking client, else none. */
  readonly forCaller: (caller: CallerInfo | undefined) => (data: unknown) => unknown
}

const unmasked = (data: unknown): unknown => data

export class Masker extends Context.Service<Masker>()("Auth/Masker", {
  make: Effect.succeed<MaskerShape>({
    forCaller: (caller) => (caller?.masking === true ? maskDeep : unmasked)
  })
}) {
  static readonly layer = Layer.effect(Masker, Masker.make)
}
