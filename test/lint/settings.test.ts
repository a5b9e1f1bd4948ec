// Every setting the code reads from the environment is in .env.example and in docs/operator.md's
// configuration tables, and neither lists a setting nothing reads. The names are taken from the
// source: the first capitalised string given to a `Config` constructor (`Config.String("HOST")`,
// `Config.Literals([...], "CARD_OCR_MODEL")`) or to one of the project's own helpers that take a
// setting's name (`const integer = (name: string) => …`, found by their signature, so a new helper
// is read too).
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

import { describe, expect, it } from "@effect/vitest"
import type * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"

import { embeddedPortConfig } from "../../src/bootstrap.js"
import { cardParserConfig } from "../../src/card/CardParser.js"
import { appConfig, databaseIdleInTransactionConfig, databasePoolerConfig, databaseTimeoutConfig } from "../../src/Config.js"
import { logFormatConfig, logLevelConfig } from "../../src/logging.js"

const ROOT = join(import.meta.dirname, "..", "..")
const CODE_FOLDERS = ["src", "jobs", "scripts"]

const sourcesUnder = (folder: string): Array<string> =>
  readdirSync(join(ROOT, folder), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .map((file) => readFileSync(join(ROOT, folder, file), "utf8"))

/** The helpers that take a setting's name as their first parameter. */
const nameTakingHelpers = (
  sources: ReadonlyArray<string>
): Array<string> => [
  ...new Set(sources.flatMap((text) => [...text.matchAll(/\bconst (\w+) = (?:<[^>]*>)?\(name: string\b/g)].map((m) => m[1]!)))
]

/** The settings read: the name given to a `Config` constructor or to one of `helpers`. */
const settingsRead = (sources: ReadonlyArray<string>, helpers: ReadonlyArray<string>): Array<string> => {
  const callee = ["Config\\.[A-Z]\\w*", ...helpers.map((h) => `(?<![\\w.])${h}`)].join("|")
  const call = new RegExp(`(?:${callee})\\(\\s*(?:\\[[^\\]]*\\],\\s*)?"([A-Z][A-Z0-9_]*)"`, "g")
  return [...new Set(sources.flatMap((text) => [...text.matchAll(call)].map((m) => m[1]!)))].sort()
}

/** The names .env.example sets, or shows commented out (`# NAME=`). */
const exampleNames = (text: string): Array<string> => [...new Set([...text.matchAll(/^#? ?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!))].sort()

/** The settings .env.example sets (its lines not commented out), with their values. */
const exampleValues = (text: string): Record<string, string> =>
  Object.fromEntries([...text.matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]))

/** The names in the first cell of a table row of docs/operator.md (`| \`A\`, \`B\` | …`). */
const operatorTableNames = (text: string): Array<string> =>
  [
    ...new Set(
      [...text.matchAll(/^\| ((?:`[A-Z][A-Z0-9_]*`(?:, )?)+) \|/gm)].flatMap((m) =>
        [...m[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((n) => n[1]!)
      )
    )
  ].sort()

/** Read by the test set-up only (vitest.config.ts, test/), documented with the rest. */
const testOnlySettings = (): Array<string> => {
  const texts = [readFileSync(join(ROOT, "vitest.config.ts"), "utf8"), ...sourcesUnder("test")]
  return [...new Set(texts.flatMap((text) => [...text.matchAll(/process\.env(?:\["|\.)(TEST_[A-Z0-9_]*)/g)].map((m) => m[1]!)))]
}

describe("settings are documented where an operator looks", () => {
  it("the scan finds names in every form the code reads them: a Config constructor, Literals, a helper, a call over several lines", () => {
    const sources = [
      `const port = (name: string) => setting(name, parse)`,
      `const a = Config.String("HOST")`,
      `const b = Config.Literals(["x", "y"], "CARD_OCR_MODEL")`,
      `const c = port("PORT")`,
      `const d = setting(\n  "DATABASE_IDLE_IN_TRANSACTION_SECONDS",\n  parse\n)`,
      `const e = report("NOT_A_SETTING"); const f = Config.String(name); const g = x.port("ALSO_NOT")`
    ]
    const helpers = nameTakingHelpers(sources)
    expect(helpers).toEqual(["port"])
    expect(settingsRead(sources, [...helpers, "setting"])).toEqual([
      "CARD_OCR_MODEL",
      "DATABASE_IDLE_IN_TRANSACTION_SECONDS",
      "HOST",
      "PORT"
    ])
    expect(exampleNames("# a comment\nPORT=3000\n# HOST=0.0.0.0\n#  NOT=indented twice\n")).toEqual(["HOST", "PORT"])
    expect(operatorTableNames("| `A`, `B` | 1 | x |\n| `C` | 2 | y |\n| name | default |\n| `lower` |")).toEqual(["A", "B", "C"])
  })

  const sources = CODE_FOLDERS.flatMap(sourcesUnder)
  const read = settingsRead(sources, nameTakingHelpers(sources))
  const example = exampleNames(readFileSync(join(ROOT, ".env.example"), "utf8"))
  const operator = operatorTableNames(readFileSync(join(ROOT, "docs", "operator.md"), "utf8"))
  const testOnly = testOnlySettings()

  it("the service's own settings are found (the scan reads the real sources)", () => {
    for (const name of ["DATABASE_URL", "PORT", "SECRET_KEYS", "CARD_OCR_POOL_SIZE", "NO_COLOR", "RATE_LIMIT_RPS"]) {
      expect(read).toContain(name)
    }
    expect(read.length).toBeGreaterThan(50)
  })

  it("every setting the code reads is in .env.example", () => {
    // TERM is the terminal's own (the logs read TERM=dumb), not a setting an operator writes down.
    expect(read.filter((name) => !example.includes(name) && name !== "TERM")).toEqual([])
  })

  it("every setting the code reads is in docs/operator.md's configuration tables", () => {
    expect(read.filter((name) => !operator.includes(name))).toEqual([])
  })

  it(".env.example and docs/operator.md name no setting that nothing reads", () => {
    const known = new Set([...read, ...testOnly])
    expect(example.filter((name) => !known.has(name))).toEqual([])
    expect(operator.filter((name) => !known.has(name))).toEqual([])
  })

  it(".env.example shows every setting at its default, as its first line says: the configuration read from it is the one read from nothing", () => {
    const values = exampleValues(readFileSync(join(ROOT, ".env.example"), "utf8"))
    expect(Object.keys(values).length).toBeGreaterThan(40)
    // SECRET_KEY has no default (the bootstrap makes one): the same key on both sides.
    const secret = { SECRET_KEY: "ab".repeat(32) }
    const readWith = (config: Config.Config<unknown>, env: Record<string, string>) =>
      Effect.runSync(Effect.result(config.parse(ConfigProvider.fromEnv({ env }))))
    const configs = {
      appConfig,
      cardParserConfig,
      databaseTimeoutConfig,
      databasePoolerConfig,
      databaseIdleInTransactionConfig,
      logLevelConfig,
      logFormatConfig,
      embeddedPortConfig
    }
    for (const [name, config] of Object.entries(configs)) {
      const fromExample = readWith(config, { ...values, ...secret })
      const fromNothing = readWith(config, secret)
      expect({ name, ok: Result.isSuccess(fromExample) }).toEqual({ name, ok: true })
      expect({ name, value: fromExample }).toEqual({ name, value: fromNothing })
    }
  })
})
