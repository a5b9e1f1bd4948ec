// Small pieces every service uses: 404 for a missing record, and the "fields sent" answer of PUTs.
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

import { NotFound, type ResourceName } from "../domain/errors.js"

/** Unwraps a found record or fails with 404 `not_found` naming the resource. */
export const someOrNotFound =
  (resource: ResourceName, id: number) => <A, E, R>(self: Effect.Effect<Option.Option<A>, E, R>): Effect.Effect<A, E | NotFound, R> =>
    Effect.flatMap(self, (o) => Option.isSome(o) ? Effect.succeed(o.value) : Effect.fail(NotFound.of(resource, id)))

/** A PUT answers with the fields that were sent, with their stored values (DECISIONS §1). */
export const pickSent = <T extends object>(stored: T, sent: object): Partial<T> => {
  const out: Partial<T> = {}
  for (const key of Object.keys(sent)) {
    if (key in stored) (out as Record<string, unknown>)[key] = (stored as Record<string, unknown>)[key]
  }
  return out
}
