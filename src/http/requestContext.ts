// The context a request runs in. The handlers and middlewares take the services they use when they
// are built (a repository, a service, the signer); at request time only Effect's own services and
// references, the platform's, and this service's references are read from the fiber's context.
// Yet Effect copies that context whole in places on every request (HttpApiBuilder provides each
// group's captured context, `sql.withTransaction` provides the fiber's context plus its own
// entries): with every repository and service in it, some seventy entries; narrowed, about thirty,
// most of them Effect's own.
// So the server and the handler groups are built in a context narrowed to what runs at request
// time. A service left out by mistake fails loudly (a missing service is a defect, and every
// endpoint is exercised by the tests); a reference left out would silently take its default, so
// this service's references are listed below, and every key of Effect's is kept.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { ActionLimited, Authenticated, CheckedInput, CurrentSecret, Idempotent, Permitted } from "../../schema/Auth.js"
import { ResponseMask } from "../../schema/Common.js"
import { AppConfig, PlatformTimeZone } from "../Config.js"
import { ServerDrain } from "../observability/shutdown.js"
import { DatabaseTimeout } from "../repos/sqlHelpers.js"
import { RequestScope } from "./RequestState.js"

/** Effect's own services and references (the platform, HTTP, SQL, loggers, tracer, scope, memo map). */
const isEffects = (key: string): boolean => key.startsWith("effect/") || key.startsWith("~effect/") || key.startsWith("@effect/")

/** This service's keys read at request time: its references, the configuration, the drain. */
const REQUEST_TIME_KEYS: ReadonlySet<string> = new Set(
  [PlatformTimeZone, DatabaseTimeout, ResponseMask, RequestScope, AppConfig, ServerDrain].map((key) => key.key)
)

/** The signed groups' middlewares, looked up when a group's routes are built. */
const MIDDLEWARE_KEYS: ReadonlyArray<string> = [Authenticated, Permitted, CheckedInput, Idempotent, CurrentSecret, ActionLimited].map(
  (key) => key.key
)

/** `context` without what only builders use: Effect's keys, REQUEST_TIME_KEYS and `extra` stay. */
const narrow = <R>(context: Context.Context<R>, extra: ReadonlySet<string>): Context.Context<R> => {
  const kept = new Map<string, unknown>()
  for (const [key, value] of context.mapUnsafe) {
    if (isEffects(key) || REQUEST_TIME_KEYS.has(key) || extra.has(key)) kept.set(key, value)
  }
  return Context.makeUnsafe(kept)
}

const builtIn = (extra: ReadonlySet<string>) => <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  Layer.fromBuild((memoMap, scope) =>
    Effect.updateContext(Layer.buildWithMemoMap(layer, memoMap, scope), (context: Context.Context<R>) => narrow(context, extra))
  )

/**
 * `layer` built in the request-time context plus `keep` (what its builder takes): what it captures
 * for later, it captures from there.
 */
export const buildInRequestContext = (...keep: ReadonlyArray<{ readonly key: string }>) => builtIn(new Set(keep.map((key) => key.key)))

/**
 * A handler group built with the services it takes (`services`) and the middlewares, so that the
 * context it provides on every request is a handful of entries.
 */
export const handlerGroup = (...services: ReadonlyArray<{ readonly key: string }>) =>
  builtIn(new Set([...services.map((key) => key.key), ...MIDDLEWARE_KEYS]))
