// Small pieces every service uses: 404 for a missing record, the "fields sent" answer of PUTs, and
// what a list's caller may search by.
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Result from "effect/Result"

import { type PageLimits, pageOf, type PageParams } from "../../schema/Common.js"
import { PlatformTimeZone } from "../Config.js"
import { InvalidInput, NotFound, type ResourceName } from "../domain/errors.js"
import { type KeywordField, keywordFields, maskedFilters, type SearchedResource } from "../domain/masking.js"
import type { CompanyScope } from "../domain/scope.js"
import * as Scopes from "../domain/scope.js"
import { CURSOR_MESSAGES, decodeCursor, syncScope, type SyncWindow } from "../domain/sync.js"
import { parseTimestamp } from "../domain/time.js"

/**
 * A service method: `Effect.fn(name)` (a span, and a stack frame in a defect's trace) when traces
 * are exported, `Effect.fnUntraced` when they are not (src/observability/tracing.ts turns tracing
 * off then). With tracing off, `Effect.fn` still captures a stack and makes a no-op span with two
 * context overlays on every call: about 8 µs a call in a loop against under 1, on every request.
 */
export const method = (name: string) =>
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as Effect.fn's own signature
<Eff extends Effect.Effect<any, any, any>, AEff, Args extends Array<any>>(
  body: (...args: Args) => Generator<Eff, AEff, never>
) => {
  const traced = Effect.fn(name)(body)
  const untraced = Effect.fnUntraced(body)
  return (...args: Args) => Effect.withFiber((fiber) => fiber.getRef(References.TracerEnabled) ? traced(...args) : untraced(...args))
}

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

/**
 * The fields a list's `keyword` may match for this caller (DECISIONS §1, masking and search): for a
 * masking client only the unmasked ones, and a filter over a masked field is a 400
 * `invalid_parameter` naming it.
 */
export const searchableFields = <R extends SearchedResource>(
  resource: R,
  masking: boolean,
  query: object
): Effect.Effect<ReadonlyArray<KeywordField<R>>, InvalidInput> => {
  const refused = maskedFilters(resource, masking, query)
  return refused.length > 0
    ? Effect.fail(InvalidInput.of(
      refused.map((path) => ({ path, message: "is masked for this client and cannot be filtered by" })),
      "a filter over a masked field"
    ))
    : Effect.succeed(keywordFields(resource, masking))
}

/**
 * How a list request is read (DECISIONS §12): with `updated_since` or `cursor`, in sync order from
 * that instant and after that position; else undefined (by `page`). `list` names the list and
 * `pathIds` its parent, so a cursor works only for the list and filters it was made for; a cursor
 * that does not decode, or was made for another list or other filters, is a 400 `invalid_parameter`
 * naming `cursor`.
 */
export const syncWindow: <Q extends PageParams>(
  list: string,
  query: Q,
  limits: PageLimits,
  pathIds?: object
) => Effect.Effect<SyncWindow | undefined, InvalidInput> = Effect.fnUntraced(function*<Q extends PageParams>(
  list: string,
  query: Q,
  limits: PageLimits,
  pathIds: object = {}
) {
  if (query.updated_since === undefined && query.cursor === undefined) return undefined
  const scope = syncScope(list, query, pathIds)
  const timeZone = yield* PlatformTimeZone
  const since = query.updated_since === undefined ? undefined : parseTimestamp(query.updated_since, timeZone).toISOString()
  const limit = pageOf(query, limits).pageSize
  if (query.cursor === undefined) return { since, limit, scope }
  const after = decodeCursor(query.cursor, scope)
  if (Result.isFailure(after)) return yield* Effect.fail(InvalidInput.at("cursor", CURSOR_MESSAGES[after.failure], "an unusable cursor"))
  return { since, after: after.success, limit, scope }
})

/**
 * A list's `company_id` filter (or a body's company_id) outside the caller's scope: 403
 * out_of_scope (DECISIONS §14); none given, or one of the scope, passes.
 */
export const namedCompanyInScope = (scope: CompanyScope, companyId: number | undefined) => {
  const refused = companyId === undefined ? undefined : Scopes.checkNamed(scope, companyId)
  return refused === undefined ? Effect.void : Effect.fail(refused)
}

/**
 * After someOrNotFound: a referenced record of a company outside the caller's scope is 404 for it,
 * as if unknown (DECISIONS §14: a registration's, a match's or a membership's guest).
 */
export const inScopeOrNotFound =
  (scope: CompanyScope, resource: ResourceName, id: number) =>
  <A extends { readonly company_id: number | null }, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | NotFound, R> =>
    Effect.flatMap(
      self,
      (record) => Scopes.includes(scope, record.company_id) ? Effect.succeed(record) : Effect.fail(NotFound.of(resource, id))
    )
