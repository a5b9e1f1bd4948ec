// makeTestLayer(Tag)(partial), as in Effect-TS/examples: a layer of the service with only the
// members a test gives. Any other member, called or yielded, dies naming the service and the
// member, so a test states exactly what it relies on and fails loudly when the code under test
// reaches for something else.
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** A value that is both a function returning a dying effect and that dying effect itself. */
const unimplemented = (service: string, member: string) => {
  const dead = Effect.die(new Error(`${service}: "${member}" is not implemented in this test layer`))
  // Members are either methods (`repo.find(id)`) or effects (`repo.startDue`): serve both.
  const f = Object.assign(() => dead, dead)
  Object.setPrototypeOf(f, Object.getPrototypeOf(dead))
  return f
}

export const makeTestLayer = <I, S extends object>(tag: Context.Key<I, S>) => (service: Partial<S>): Layer.Layer<I> =>
  Layer.sync(tag, () => {
    const given: Record<PropertyKey, unknown> = { ...service }
    return new Proxy(given, {
      get(target, member) {
        if (member in target) return target[member]
        // Symbols and `then` are asked by the runtime and by promise checks, not by services' callers.
        if (typeof member === "symbol" || member === "then" || member === "toJSON") return undefined
        return (target[member] = unimplemented(tag.key, member))
      }
    }) as unknown as S
  })
