// A local ESLint rule: no generator function is made per call (docs/contributor.md, "Generators
// are made once"). `Effect.gen(function*() {…})` written inside a function makes a new generator
// function on every call of that function, and V8 gives each new generator function a prototype
// and a map of its own, in the old generation, where they keep that call's objects alive through
// every young collection until the next full one (docs/benchmarks.md, "Generators made per
// request"): about a microsecond and a few kilobytes promoted per call. Written once instead:
// `Effect.fnUntraced(function*(args) {…})` (or Effect.fn, or the services' `method`) defined where
// it runs once, its call taking what the body used to capture.
//
// Allowed: an Effect.gen at module level, one directly inside the body of such an Effect.gen (a
// layer's `make`), however deep that nesting goes, and one in the function HttpApiBuilder.group
// builds its handlers with: all run once per layer built.

/** `Effect.gen(…)`, `Effect.fnUntraced(…)` or `Effect.fn(…)` / `Effect.fn("name")(…)` with a generator function. */
const generatorCall = (node) => {
  if (node.type !== "CallExpression") return undefined
  const body = node.arguments.at(-1)
  if (body === undefined || body.type !== "FunctionExpression" || !body.generator) return undefined
  const callee = node.callee.type === "CallExpression" ? node.callee.callee : node.callee
  if (callee.type !== "MemberExpression" || callee.object.type !== "Identifier" || callee.object.name !== "Effect") {
    return undefined
  }
  const name = callee.property.type === "Identifier" ? callee.property.name : undefined
  return name === "gen" || name === "fn" || name === "fnUntraced" ? { name, body } : undefined
}

const FUNCTIONS = new Set(["FunctionExpression", "ArrowFunctionExpression", "FunctionDeclaration"])

const enclosingFunction = (node) => {
  for (let p = node.parent; p; p = p.parent) if (FUNCTIONS.has(p.type)) return p
  return undefined
}

/** Calls that run the function they are given once, when what they build is built. */
const BUILDERS = new Set(["HttpApiBuilder.group"])

const calleeName = (call) =>
  call.callee.type === "MemberExpression" && call.callee.object.type === "Identifier" && call.callee.property.type === "Identifier"
    ? `${call.callee.object.name}.${call.callee.property.name}`
    : undefined

/** Whether the code at `node` runs once per module load or layer build (not once per call of something). */
const runsOnce = (node) => {
  const fn = enclosingFunction(node)
  if (fn === undefined) return true
  const owner = fn.parent
  if (owner?.type === "CallExpression" && owner.arguments.includes(fn) && BUILDERS.has(calleeName(owner))) return runsOnce(owner)
  const found = owner && generatorCall(owner)
  return found !== undefined && found.name === "gen" && found.body === fn && runsOnce(owner)
}

export default {
  rules: {
    "generators-once": {
      meta: {
        type: "problem",
        docs: { description: "No generator function made per call: define it once with Effect.fnUntraced" },
        schema: [],
        messages: {
          perCall:
            "Effect.{{name}}(function*…) here makes a new generator function on every call, which V8 pays for in the old generation (docs/contributor.md, \"Generators are made once\"): define it once with Effect.fnUntraced(function*(args) {…}) and pass what it captures."
        }
      },
      create: (context) => ({
        CallExpression: (node) => {
          const found = generatorCall(node)
          if (found !== undefined && !runsOnce(node)) context.report({ node, messageId: "perCall", data: { name: found.name } })
        }
      })
    }
  }
}
