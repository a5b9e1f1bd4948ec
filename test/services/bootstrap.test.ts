// What the command lines' preparation (src/bootstrap.ts) reads and supplies when a database is
// configured, all through ConfigProviders: the .env under the environment, settings supplied only
// where none is set, and process.env never written. The embedded database it starts otherwise is
// tested in test/embedded.test.ts and, through the real `npm start`, test/cleanStop.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { envFileLayer, prepareDatabase, preparedConfig, ProjectEnvFile } from "../../src/bootstrap.js"
import { LogOutput, type LogRecord } from "../../src/logging.js"

const folder = mkdtempSync(join(tmpdir(), "mm-bootstrap-"))
afterAll(() => rmSync(folder, { recursive: true, force: true }))

/** A configuration of exactly these settings (no process.env). */
const configured = (env: Record<string, string>) => ConfigProvider.layer(ConfigProvider.fromEnv({ env }))

/** LogOutput keeping the records it is given. */
const collecting = (records: Array<LogRecord>) =>
  Layer.succeed(
    LogOutput,
    LogOutput.of({
      style: { format: "json", colors: false, timeZone: "Asia/Shanghai" },
      level: "Info",
      process: "test",
      timestamp: (date) => date.toISOString(),
      write: (record) => void records.push(record),
      writeLine: () => {}
    })
  )

const KEY = "ab".repeat(32)

describe("the project's .env", () => {
  it.effect("fills in what the environment does not set; the environment wins, and an empty value counts as unset", () => {
    const file = join(folder, "filled.env")
    writeFileSync(file, "A=from-file\nB=from-file\nC=\"from file\" # quoted\n")
    return Effect.gen(function*() {
      const read = (name: string) => Config.String(name)
      expect(yield* read("A")).toBe("from-env")
      expect(yield* read("B")).toBe("from-file")
      expect(yield* read("C")).toBe("from file")
      expect((yield* ProjectEnvFile).settings).toEqual({ A: "from-file", B: "from-file", C: "from file" })
    }).pipe(Effect.provide(envFileLayer(file).pipe(Layer.provide(configured({ A: "from-env", C: "" })))))
  })

  it.effect("none is nothing; one that cannot be read adds nothing and names its problem for the entry point to report", () =>
    Effect.gen(function*() {
      const none = yield* Effect.provide(ProjectEnvFile, envFileLayer(join(folder, "absent.env")))
      expect(none).toEqual({ settings: {}, problem: undefined })
      // A folder where the file should be: reading it fails (EISDIR).
      const unreadable = yield* Effect.provide(ProjectEnvFile, envFileLayer(folder))
      expect(unreadable.settings).toEqual({})
      expect(unreadable.problem).toMatch(/^reading .* failed: .*EISDIR/)
    }))
})

describe("preparing a configured database", () => {
  it.effect("with DATABASE_URL and a key, nothing is supplied, nothing started, and process.env is not written", () =>
    Effect.gen(function*() {
      const before = { ...process.env }
      const prepared = yield* prepareDatabase.pipe(
        Effect.provide(Layer.merge(collecting([]), configured({ DATABASE_URL: "postgres://db.example/app", SECRET_KEY: KEY })))
      )
      expect(prepared).toEqual({ settings: {}, embedded: null, loopbackAdmitted: false })
      const keys = yield* prepareDatabase.pipe(
        Effect.provide(Layer.merge(collecting([]), configured({ DATABASE_URL: "postgres://db.example/app", SECRET_KEYS: `k1:${KEY}` })))
      )
      expect(keys.settings).toEqual({})
      expect(process.env).toEqual(before)
    }))

  it.effect("with DATABASE_URL but no key (an empty one counts as none), it fails saying what to set", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        prepareDatabase.pipe(
          Effect.provide(Layer.merge(collecting([]), configured({ DATABASE_URL: "postgres://db.example/app", SECRET_KEY: "" })))
        )
      )
      expect(error).toMatchObject({
        _tag: "PreparationFailed",
        message: "SECRET_KEY (64 hex characters) or SECRET_KEYS is required when DATABASE_URL is set"
      })
    }))

  it.effect("what the preparation supplied is read first: it only ever fills settings the configuration lacked", () =>
    Effect.gen(function*() {
      const prepared = {
        settings: { SECRET_KEY: KEY, DATABASE_URL: "postgres://127.0.0.1:54329/matchmaking" },
        embedded: null,
        loopbackAdmitted: false
      }
      const read = Effect.all([Config.String("SECRET_KEY"), Config.String("DATABASE_URL"), Config.String("PORT")])
      expect(yield* read.pipe(Effect.provide(preparedConfig(prepared).pipe(Layer.provide(configured({ SECRET_KEY: "", PORT: "9000" }))))))
        .toEqual([KEY, "postgres://127.0.0.1:54329/matchmaking", "9000"])
    }))
})
