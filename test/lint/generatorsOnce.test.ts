// The lint rule that keeps generator functions from being made per call (eslint/generatorsOnce.mjs,
// docs/contributor.md "Generators are made once"), run by ESLint's RuleTester on code it must
// refuse and code it must let through.
import { describe, expect, it } from "@effect/vitest"
import { RuleTester } from "eslint"

import generatorsOnce from "../../eslint/generatorsOnce.mjs"

RuleTester.describe = describe
RuleTester.it = it
RuleTester.itOnly = it.only

const tester = new RuleTester({ languageOptions: { ecmaVersion: 2022, sourceType: "module" } })
const perCall = [{ messageId: "perCall" }]

describe("generators are made once", () => {
  it("a generator function written inside another function is a new function, with a prototype of its own, on every call", () => {
    const make = () =>
      function*() {
        yield 1
      }
    const [a, b] = [make(), make()]
    // (Compared as booleans: printing a generator's prototype calls its `next`.)
    expect(a === b).toBe(false)
    expect(a.prototype === b.prototype).toBe(false)
    expect(Object.getPrototypeOf(a()) === a.prototype).toBe(true)
  })

  tester.run("local/generators-once", generatorsOnce.rules["generators-once"], {
    valid: [
      // Module level: made once per module load.
      "const get = Effect.gen(function*() { return yield* Config })",
      "const find = Effect.fnUntraced(function*(id) { return yield* repo.find(id) })",
      "const traced = Effect.fn(\"X.find\")(function*(id) { return yield* repo.find(id) })",
      // Directly inside a layer's make, however deep: made once per layer built.
      "class X extends Context.Service()(\"X\", { make: Effect.gen(function*() { const ready = Effect.gen(function*() { yield* Effect.gen(function*() {}) }); return { ready } }) }) {}",
      "const layer = Layer.effect(X, Effect.gen(function*() { const find = Effect.fnUntraced(function*(id) { return id }); return { find } }))",
      // A group's handlers are built once.
      "const Handlers = HttpApiBuilder.group(Api, \"g\", (handlers) => Effect.gen(function*() { return handlers }))",
      // Not Effect's generator constructors, or no generator written here.
      "const f = (x) => Effect.map(x, (y) => y + 1)",
      "const g = (body) => Effect.gen(body)",
      "const h = (x) => Other.gen(function*() { yield x })"
    ],
    invalid: [
      // Per call of the arrow: a new generator function each time.
      { code: "const find = (id) => Effect.gen(function*() { return yield* repo.find(id) })", errors: perCall },
      { code: "const find = (id) => { return Effect.gen(function*() { return id }) }", errors: perCall },
      { code: "function find(id) { return Effect.gen(function*() { return id }) }", errors: perCall },
      // Inside a method's body (itself once) but run per call of the method.
      { code: "const create = Effect.fnUntraced(function*(x) { yield* Effect.gen(function*() { yield x }) })", errors: perCall },
      {
        code: "const make = Effect.gen(function*() { const f = (x) => Effect.gen(function*() { return x }); return { f } })",
        errors: perCall
      },
      // Defining a function per call is the same trap.
      { code: "const f = (x) => Effect.fnUntraced(function*() { return x })()", errors: perCall },
      { code: "const f = (x) => Effect.fn(\"f\")(function*() { return x })()", errors: perCall },
      // A handler of a group runs per request.
      {
        code:
          "const H = HttpApiBuilder.group(Api, \"g\", (handlers) => Effect.gen(function*() { return handlers.handle(\"x\", () => Effect.gen(function*() { return 1 })) }))",
        errors: perCall
      }
    ]
  })
})
