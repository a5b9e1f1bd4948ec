// A module hook (`node --import` this file) that prints, on stdout at exit, every module URL the
// process resolved, one per line: what a process really loads, barrels included. The hook runs
// in-thread (module.registerHooks, Node ≥ 22.15; module.register is deprecated from Node 26).
import { registerHooks } from "node:module"
import process from "node:process"

const urls = new Set()
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context)
    urls.add(resolved.url)
    return resolved
  }
})
process.on("exit", () => process.stdout.write([...urls].join("\n") + "\n"))
