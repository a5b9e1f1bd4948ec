// `npm run build`, and the pre-script of every command that runs the compiled service (`npm start`,
// `npm run api|jobs|migrate|admin|db:stop`): compiles the TypeScript into dist/ only when an input
// changed since the last build (tsc --build's own check against dist/.tsbuildinfo), and only then
// says `compiling…` on stderr (stdout stays the admin command's answer). An up-to-date tree costs
// about 0.2 s. Plain JavaScript, run by the project's Node: it runs before anything is compiled.
import { existsSync } from "node:fs"
import { enableCompileCache } from "node:module"
import { performance } from "node:perf_hooks"
import process from "node:process"
import { fileURLToPath, URL } from "node:url"

// TypeScript is 9 MB of JavaScript; V8's compile cache halves the time it takes to load.
enableCompileCache()
const { default: ts } = await import("typescript")

// Wherever npm was started from, the project is the one this script belongs to.
const PROJECT = fileURLToPath(new URL("../tsconfig.build.json", import.meta.url))

// tsc writes its diagnostics on stdout; here they go to stderr with everything else the build says.
const system = { ...ts.sys, write: (text) => process.stderr.write(text) }
const pretty = process.stderr.isTTY === true
const host = ts.createSolutionBuilderHost(
  system,
  undefined,
  ts.createDiagnosticReporter(system, pretty),
  ts.createBuilderStatusReporter(system, pretty)
)
// tsc --build trusts dist/.tsbuildinfo alone; an entry point's output deleted beside it forces a build.
const ENTRY_POINTS = ["src/main.js", "jobs/main.js", "src/admin/main.js", "scripts/start.js", "scripts/migrate.js", "scripts/db-stop.js"]
const force = ENTRY_POINTS.some((file) => !existsSync(fileURLToPath(new URL(`../dist/${file}`, import.meta.url))))
const builder = ts.createSolutionBuilder(host, [PROJECT], { force })

let failed = false
let compiled
for (let project = builder.getNextInvalidatedProject(); project !== undefined; project = builder.getNextInvalidatedProject()) {
  // A source touched but unchanged only has its outputs' times updated: that is no compiling.
  if (project.kind === ts.InvalidatedProjectKind.Build && compiled === undefined) {
    compiled = performance.now()
    const why = !existsSync(fileURLToPath(new URL("../dist/.tsbuildinfo", import.meta.url)))
      ? "the first build takes about 30 s"
      : force
      ? "an entry point's output is missing"
      : "a source changed since the last build"
    process.stderr.write(`compiling… (TypeScript into dist/: ${why})\n`)
  }
  if (project.done() !== ts.ExitStatus.Success) failed = true
}
if (compiled !== undefined) {
  const seconds = ((performance.now() - compiled) / 1000).toFixed(1)
  process.stderr.write(failed ? `compiling failed after ${seconds} s\n` : `compiled in ${seconds} s\n`)
}
if (failed) process.exitCode = 1
