// Services, rules and jobs refuse values by their names (`InvalidInput` at `rps`) and fail with
// errors named by meaning; only the command line (src/admin) words a refusal with its flags
// (`--rps: must be > 0`). Read from the source: no text below src/admin or its entry point may
// quote a flag.
import { readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

import { describe, expect, it } from "@effect/vitest"

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/** Where a command-line flag has no business: everything the API, the daemon and the CLI share. */
const SHARED = ["src/services", "src/domain", "src/repos", "src/auth", "src/webhooks", "src/card", "src/observability", "schema", "jobs"]

const sourcesUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => path.join(dir, file))

/** A string or template literal holding `--word` (a flag), on a line of code (comments may name commands). */
const FLAG_IN_TEXT = /(["'`])(?:(?!\1).)*--[a-z][a-z-]*/

const flagTexts = (file: string): ReadonlyArray<string> =>
  readFileSync(path.join(ROOT, file), "utf8")
    .split("\n")
    .map((line, i) => ({ line: line.trim(), at: `${file}:${i + 1}` }))
    .filter(({ line }) => !line.startsWith("//") && !line.startsWith("*") && !line.startsWith("/*") && FLAG_IN_TEXT.test(line))
    .map(({ at, line }) => `${at}: ${line}`)

describe("command-line words stay in the command line", () => {
  it("no service, rule, repository, job or contract text quotes a command-line flag", () => {
    const files = SHARED.flatMap(sourcesUnder)
    expect(files.length).toBeGreaterThan(100)
    expect(files.flatMap(flagTexts)).toEqual([])
  })

  it("the check finds a flag quoted in a message", () => {
    expect(FLAG_IN_TEXT.test(`return yield* new Refused({ message: "--name must not be empty" })`)).toBe(true)
    expect(FLAG_IN_TEXT.test("message: `got ${x}; use --since`")).toBe(true)
    expect(FLAG_IN_TEXT.test(`return yield* InvalidInput.at("name", "must not be empty")`)).toBe(false)
  })
})
