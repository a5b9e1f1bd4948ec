// The context requests run in (src/http/requestContext.ts): the server and the handler groups are
// built in a context narrowed to what runs at request time, so that Effect's per-request copies of
// it stay small. What is left out must be only what builders take; every reference stays.
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"

import { Authenticated, CheckedInput, Idempotent, Permitted } from "../schema/Auth.js"
import { PlatformTimeZone } from "../src/Config.js"
import { buildInRequestContext, handlerGroup } from "../src/http/requestContext.js"
import { DatabaseTimeout } from "../src/repos/sqlHelpers.js"

/** Two stand-ins for the application's services (a repository, a service). */
class SomeRepo extends Context.Service<SomeRepo, { readonly name: string }>()("Some/Repo") {}
class SomeService extends Context.Service<SomeService, { readonly name: string }>()("Some/Service") {}

/** The keys of the context a layer is built in. */
class Seen extends Context.Service<Seen, ReadonlyArray<string>>()("Test/Seen") {}
const seeing = Layer.effect(Seen, Effect.map(Effect.context<never>(), (context) => [...context.mapUnsafe.keys()]))

const passThrough = ((effect: unknown) => effect) as never

const application = Layer.mergeAll(
  Layer.succeed(SomeRepo, { name: "repo" }),
  Layer.succeed(SomeService, { name: "service" }),
  Layer.succeed(PlatformTimeZone, "America/New_York"),
  Layer.succeed(DatabaseTimeout, Duration.seconds(2)),
  Layer.succeed(References.MinimumLogLevel, "Warn"),
  // Never run here: only their presence is looked at.
  Layer.succeed(Authenticated, passThrough),
  Layer.succeed(Permitted, passThrough),
  Layer.succeed(CheckedInput, passThrough),
  Layer.succeed(Idempotent, passThrough)
)

const seenBy = (narrowing: <A, E, R>(layer: Layer.Layer<A, E, R>) => Layer.Layer<A, E, R>) =>
  Effect.map(Effect.scoped(Layer.build(seeing.pipe(narrowing, Layer.provide(application)))), (context) => Context.get(context, Seen))

describe("the request-time context", () => {
  it.effect("the server is built without the application's services but with every reference, its own and Effect's", () =>
    Effect.gen(function*() {
      const seen = yield* seenBy(buildInRequestContext())
      expect(seen).not.toContain(SomeRepo.key)
      expect(seen).not.toContain(SomeService.key)
      expect(seen).not.toContain(Authenticated.key)
      expect(seen).toEqual(expect.arrayContaining([PlatformTimeZone.key, DatabaseTimeout.key, References.MinimumLogLevel.key]))
    }))

  it.effect("a handler group keeps the services it names and the signed middlewares, and nothing else of the application", () =>
    Effect.gen(function*() {
      const seen = yield* seenBy(handlerGroup(SomeService))
      expect(seen).toContain(SomeService.key)
      expect(seen).not.toContain(SomeRepo.key)
      expect(seen).toEqual(
        expect.arrayContaining([Authenticated.key, Permitted.key, CheckedInput.key, Idempotent.key, DatabaseTimeout.key])
      )
    }))

  it.effect("a reference the narrowed layer reads keeps the application's value, not its default", () =>
    Effect.gen(function*() {
      const read = Layer.effect(
        Seen,
        Effect.gen(function*() {
          return [String(Duration.toMillis(yield* DatabaseTimeout))]
        })
      )
      const context = yield* Effect.scoped(Layer.build(read.pipe(buildInRequestContext(), Layer.provide(application))))
      expect(Context.get(context, Seen)).toEqual(["2000"])
    }))
})
