// LOG_LEVEL and the start-up check of settings: which values are accepted, and how a bad one is named.
import { describe, expect, it } from "@effect/vitest"
import type * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as LogLevel from "effect/LogLevel"

import { appConfig } from "../../src/Config.js"
import { configProblems, logLevelConfig, parseLogLevel } from "../../src/logging.js"

const read = <A>(config: Config.Config<A>, env: ReadonlyArray<readonly [string, string]>) =>
  Effect.runSync(Effect.either(config.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(env))))))

describe("LOG_LEVEL", () => {
  const accepted: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = [
    ["Warning", LogLevel.Warning],
    ["warning", LogLevel.Warning],
    ["WARNING", LogLevel.Warning],
    ["warn", LogLevel.Warning],
    ["WARN", LogLevel.Warning],
    ["Info", LogLevel.Info],
    ["info", LogLevel.Info],
    ["INFO", LogLevel.Info],
    ["debug", LogLevel.Debug],
    ["Debug", LogLevel.Debug],
    ["error", LogLevel.Error],
    ["Error", LogLevel.Error],
    ["err", LogLevel.Error],
    ["fatal", LogLevel.Fatal],
    ["trace", LogLevel.Trace],
    ["all", LogLevel.All],
    ["None", LogLevel.None],
    ["off", LogLevel.None],
    ["OFF", LogLevel.None],
    [" info ", LogLevel.Info]
  ]

  it.each(accepted)("Effect's level names and the usual aliases are accepted in any case: %j", (raw, level) => {
    expect(parseLogLevel(raw)).toBe(level)
  })

  it.each(["", "verbose", "warnings", "information", "5", "inf o"])("a value naming no level is rejected: %j", (raw) => {
    expect(parseLogLevel(raw)).toBeUndefined()
  })

  it("unset or empty means Info", () => {
    expect(read(logLevelConfig, [])).toEqual(Either.right(LogLevel.Info))
    expect(read(logLevelConfig, [["LOG_LEVEL", ""]])).toEqual(Either.right(LogLevel.Info))
  })

  it("an invalid value is reported as LOG_LEVEL's, with the accepted values", () => {
    const result = read(logLevelConfig, [["LOG_LEVEL", "verbose"]])
    if (Either.isRight(result)) throw new Error("expected a failure")
    const [problem, ...rest] = configProblems(result.left)
    expect(rest).toEqual([])
    expect(problem?.setting).toBe("LOG_LEVEL")
    expect(problem?.missing).toBe(false)
    expect(problem?.problem).toContain("\"verbose\"")
    expect(problem?.problem).toContain("Warning (or Warn)")
  })
})

describe("start-up check of settings", () => {
  const secret = ["SECRET_KEY", "ab".repeat(32)] as const

  it("every invalid setting is named, once each", () => {
    const result = read(appConfig, [["PORT", "abc"], ["SECRET_KEY", "short"], ["RATE_LIMIT_BURST", "x"]])
    if (Either.isRight(result)) throw new Error("expected a failure")
    expect(configProblems(result.left).map(({ setting, missing }) => [setting, missing])).toEqual([
      ["PORT", false],
      ["SECRET_KEY", false],
      ["RATE_LIMIT_BURST", false]
    ])
  })

  it("PORT must be a port number", () => {
    expect(Either.isLeft(read(appConfig, [secret, ["PORT", "70000"]]))).toBe(true)
    expect(read(appConfig, [secret, ["PORT", "8081"]]).pipe(Either.map((c) => c.port))).toEqual(Either.right(8081))
  })

  it("an unset or empty SECRET_KEY is missing (the bootstrap supplies one), not invalid", () => {
    for (const env of [[], [["SECRET_KEY", ""] as const]]) {
      const result = read(appConfig, env)
      if (Either.isRight(result)) throw new Error("expected a failure")
      expect(configProblems(result.left)).toEqual([{ setting: "SECRET_KEY", problem: expect.any(String), missing: true }])
    }
  })
})
