// `npm run build`, and the pre-script of every command that runs the compiled service (`npm start`,
// `npm run api|jobs|migrate|admin|db:stop`): compiles the TypeScript into dist/ only when an input
// changed since the last build (tsc --build's own check against dist/.tsbuildinfo), and only then
// says `compiling…` on stderr (stdout stays the admin command's answer). An up-to-date tree costs a
// few hundredths of a second. Plain JavaScript, run by the project's Node: it runs before anything
// is compiled.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { enableCompileCache } from "node:module"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import process from "node:process"
import { fileURLToPath, URL } from "node:url"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const PROJECT = join(ROOT, "tsconfig.build.json")
const BUILD_INFO = join(ROOT, "dist", ".tsbuildinfo")
// Left by a build that failed (tsc emits despite errors): the next run asks TypeScript again.
const FAILED = join(ROOT, "dist", ".build-failed")
// tsc --build trusts dist/.tsbuildinfo alone; an entry point's output deleted beside it forces a build.
const ENTRY_POINTS = ["src/main.js", "jobs/main.js", "src/admin/main.js", "scripts/start.js", "scripts/migrate.js", "scripts/db-stop.js"]

/** The latest change under `path`: a file's, or a folder's (a file added, renamed or deleted in it). */
const newestChange = (path) => {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return readdirSync(path).reduce((newest, entry) => Math.max(newest, newestChange(join(path, entry))), stat.mtimeMs)
}

/**
 * Whether nothing can have changed since the last build, without loading TypeScript (9 MB of
 * JavaScript): it succeeded, its entry points are there, and no input (the folders the build
 * includes, the tsconfig files, package.json) changed after it. Otherwise TypeScript decides.
 */
const surelyUpToDate = () => {
  if (!existsSync(BUILD_INFO) || existsSync(FAILED)) return false
  if (ENTRY_POINTS.some((file) => !existsSync(join(ROOT, "dist", file)))) return false
  const { include } = JSON.parse(readFileSync(PROJECT, "utf8"))
  const inputs = [...include, "tsconfig.json", "tsconfig.build.json", "package.json"].map((path) => join(ROOT, path))
  const built = statSync(BUILD_INFO).mtimeMs
  return inputs.every((path) => !existsSync(path) || newestChange(path) <= built)
}

const checkedAt = new Date()
if (!surelyUpToDate()) {
  // V8's compile cache halves the time TypeScript takes to load.
  enableCompileCache()
  const { default: ts } = await import("typescript")

  // tsc writes its diagnostics on stdout; here they go to stderr with everything else the build says.
  const system = { ...ts.sys, write: (text) => process.stderr.write(text) }
  const pretty = process.stderr.isTTY === true
  const host = ts.createSolutionBuilderHost(
    system,
    undefined,
    ts.createDiagnosticReporter(system, pretty),
    ts.createBuilderStatusReporter(system, pretty)
  )
  const firstBuild = !existsSync(BUILD_INFO)
  const force = ENTRY_POINTS.some((file) => !existsSync(join(ROOT, "dist", file)))
  const builder = ts.createSolutionBuilder(host, [PROJECT], { force })

  let failed = false
  let compiled
  for (let project = builder.getNextInvalidatedProject(); project !== undefined; project = builder.getNextInvalidatedProject()) {
    // A source touched but unchanged only has its outputs' times updated: that is no compiling.
    if (project.kind === ts.InvalidatedProjectKind.Build && compiled === undefined) {
      compiled = performance.now()
      const why = firstBuild
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
  if (failed) {
    if (existsSync(join(ROOT, "dist"))) writeFileSync(FAILED, "the last build failed\n")
    process.exitCode = 1
  } else {
    rmSync(FAILED, { force: true })
    // TypeScript found every input built as of when this check began (an input touched but not
    // changed, a file that is not TypeScript's): so says the build info's time from now on, and
    // the next run need not ask again. An input changed since then is still newer.
    if (existsSync(BUILD_INFO)) utimesSync(BUILD_INFO, checkedAt, checkedAt)
  }
}
