// Run by bench/generators.ts in a process of its own (with --trace-gc-nvp): N calls of an effect
// made one of three ways, then one JSON line with the nanoseconds per call. `per-call`: the
// generator function written inside the function called (`(req) => Effect.gen(function*() {…})`),
// a new one each call; `once`: the same body defined once (`Effect.fnUntraced(function*(req) {…})`);
// `combinators`: no generator (Effect.map). Each call's request holds a few kilobytes, as a
// request's objects do. Plain JavaScript, so that it runs as it is.
import process from "node:process"

import * as Effect from "effect/Effect"

const mode = process.argv[2]
const N = Number(process.argv[3] ?? 300_000)
const request = () => ({ items: Array.from({ length: 40 }, (_, i) => ({ i, name: `item ${i}` })) })
const once = Effect.fnUntraced(function*(req) {
  const one = yield* Effect.succeed(1)
  return req.items.length + one
})
const perCall = (req) =>
  Effect.gen(function*() {
    const one = yield* Effect.succeed(1)
    return req.items.length + one
  })
const combinators = (req) => Effect.map(Effect.succeed(1), (one) => req.items.length + one)
const f = mode === "once" ? once : mode === "combinators" ? combinators : mode === "per-call" ? perCall : undefined
if (f === undefined) throw new Error(`mode ${mode}: per-call, once or combinators`)
let sum = 0
for (let i = 0; i < 20_000; i++) sum += Effect.runSync(f(request()))
const marker = "--- measured ---"
process.stdout.write(`${marker}\n`)
const t0 = process.hrtime.bigint()
for (let i = 0; i < N; i++) sum += Effect.runSync(f(request()))
const ns = Number(process.hrtime.bigint() - t0) / N
process.stdout.write(`${JSON.stringify({ mode, ns, sum })}\n`)
