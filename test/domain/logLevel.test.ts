// LOG_LEVEL and the start-up check of settings: which values are accepted, and how a bad one is named.
import { describe, expect, it } from "@effect/vitest"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import type * as LogLevel from "effect/LogLevel"
import * as Result from "effect/Result"

import { cardParserConfig } from "../../src/card/CardParser.js"
import { appConfig, databaseIdleInTransactionConfig, databaseTimeoutConfig } from "../../src/Config.js"
import { logLevelConfig, parseLogLevel } from "../../src/logging.js"
import { configProblems } from "../../src/startup.js"

const read = <A>(config: Config.Config<A>, env: ReadonlyArray<readonly [string, string]>) =>
  Effect.runSync(Effect.result(config.parse(ConfigProvider.fromEnv({ env: Object.fromEntries(env) }))))

describe("LOG_LEVEL", () => {
  const accepted: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = [
    ["Warning", "Warn"],
    ["warning", "Warn"],
    ["WARNING", "Warn"],
    ["warn", "Warn"],
    ["WARN", "Warn"],
    ["Info", "Info"],
    ["info", "Info"],
    ["INFO", "Info"],
    ["debug", "Debug"],
    ["Debug", "Debug"],
    ["error", "Error"],
    ["Error", "Error"],
    ["err", "Error"],
    ["fatal", "Fatal"],
    ["trace", "Trace"],
    ["all", "All"],
    ["None", "None"],
    ["off", "None"],
    ["OFF", "None"],
    [" info ", "Info"]
  ]

  it.each(accepted)("Effect's level names and the usual aliases are accepted in any case: %j", (raw, level) => {
    expect(parseLogLevel(raw)).toBe(level)
  })

  it.each(["", "verbose", "warnings", "information", "5", "inf o"])("a value naming no level is rejected: %j", (raw) => {
    expect(parseLogLevel(raw)).toBeUndefined()
  })

  it("unset or empty means Info", () => {
    expect(read(logLevelConfig, [])).toEqual(Result.succeed("Info"))
    expect(read(logLevelConfig, [["LOG_LEVEL", ""]])).toEqual(Result.succeed("Info"))
  })

  it("an invalid value is reported as LOG_LEVEL's, with the accepted values", () => {
    const result = read(logLevelConfig, [["LOG_LEVEL", "verbose"]])
    if (Result.isSuccess(result)) throw new Error("expected a failure")
    const [problem, ...rest] = configProblems(result.failure)
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
    if (Result.isSuccess(result)) throw new Error("expected a failure")
    expect(configProblems(result.failure).map(({ setting, missing }) => [setting, missing])).toEqual([
      ["PORT", false],
      ["SECRET_KEY", false],
      ["RATE_LIMIT_BURST", false]
    ])
  })

  it("TZ must be a time zone Intl knows (kept as Intl spells it); unset or empty is Asia/Shanghai", () => {
    const zone = (env: ReadonlyArray<readonly [string, string]>) => read(appConfig, [secret, ...env]).pipe(Result.map((c) => c.timeZone))
    expect(zone([])).toEqual(Result.succeed("Asia/Shanghai"))
    expect(zone([["TZ", ""]])).toEqual(Result.succeed("Asia/Shanghai"))
    expect(zone([["TZ", "europe/berlin"]])).toEqual(Result.succeed("Europe/Berlin"))
    const result = read(appConfig, [secret, ["TZ", "Mars/Olympus"]])
    if (Result.isSuccess(result)) throw new Error("expected a failure")
    expect(configProblems(result.failure)).toEqual([{
      setting: "TZ",
      problem: "expected an IANA time zone such as Asia/Shanghai or UTC; got \"Mars/Olympus\"",
      missing: false
    }])
  })

  it("every count, size, rate and wait is bounded below (a zero or negative one would refuse every request or hand a claimed task to a second daemon at once)", () => {
    for (
      const [name, value] of [
        ["SIGNATURE_WINDOW_SECONDS", "0"],
        ["NONCE_RETENTION_SECONDS", "-900"],
        ["SECRET_OVERLAP_SECONDS", "-1"],
        ["RATE_LIMIT_RPS", "0"],
        ["RATE_LIMIT_BURST", "0"],
        ["JSON_BODY_LIMIT_BYTES", "0"],
        ["CARD_FILE_LIMIT_BYTES", "-5"],
        ["ROW_COUNT_COMPACT_SECONDS", "0"],
        ["CARD_TASK_LEASE_SECONDS", "0"],
        ["CARD_TASK_CONCURRENCY", "0"],
        ["CARD_TASK_POLL_SECONDS", "-1"],
        ["CARD_TASK_MAX_ATTEMPTS", "0"],
        ["WEBHOOK_LEASE_SECONDS", "0"],
        ["WEBHOOK_POLL_SECONDS", "0"],
        ["EVENTS_RETENTION_DAYS", "0"],
        ["IDEMPOTENCY_TTL_SECONDS", "0"]
      ] as const
    ) {
      const result = read(appConfig, [secret, [name, value]])
      if (Result.isSuccess(result)) throw new Error(`expected ${name}=${value} to be refused`)
      expect(configProblems(result.failure).map(({ setting }) => setting)).toEqual([name])
    }
    expect(Result.isSuccess(read(appConfig, [secret, ["SECRET_OVERLAP_SECONDS", "0"]]))).toBe(true)
  })

  it("a wait is at most what a timer holds (2^31-1 ms, 24 days): past it Node fires at once and PostgreSQL refuses the session", () => {
    const timer = [
      [databaseTimeoutConfig, "DATABASE_TIMEOUT_SECONDS", "2147483", "2147484"],
      [databaseIdleInTransactionConfig, "DATABASE_IDLE_IN_TRANSACTION_SECONDS", "2147483", "3000000"],
      [appConfig, "HTTP_KEEP_ALIVE_SECONDS", "2147483", "2147484"],
      [appConfig, "WEBHOOK_TIMEOUT_MS", "2147483647", "2147483648"],
      [appConfig, "READINESS_TIMEOUT_MS", "2147483647", "9999999999"],
      [cardParserConfig, "CARD_AI_TIMEOUT_MS", "2147483647", "2147483648"]
    ] as const
    for (const [config, name, longest, past] of timer) {
      // (WEBHOOK_TIMEOUT_MS at its longest needs a lease above it.)
      const extra = name === "WEBHOOK_TIMEOUT_MS" ? [["WEBHOOK_LEASE_SECONDS", "2147484"] as const] : []
      expect({ name, ok: Result.isSuccess(read(config as Config.Config<unknown>, [secret, ...extra, [name, longest]])) }).toEqual({
        name,
        ok: true
      })
      const result = read(config as Config.Config<unknown>, [secret, ...extra, [name, past]])
      if (Result.isSuccess(result)) throw new Error(`expected ${name}=${past} to be refused`)
      expect(configProblems(result.failure)).toEqual([{ setting: name, problem: expect.stringContaining("(24 days)"), missing: false }])
    }
  })

  it("settings valid alone but not together: nonces kept less than twice the signature window, a webhook lease not above the attempt's timeout", () => {
    const problems = (env: ReadonlyArray<readonly [string, string]>) => {
      const result = read(appConfig, [secret, ...env])
      return Result.isSuccess(result) ? [] : configProblems(result.failure)
    }
    expect(problems([["SIGNATURE_WINDOW_SECONDS", "300"], ["NONCE_RETENTION_SECONDS", "600"]])).toEqual([])
    expect(problems([["SIGNATURE_WINDOW_SECONDS", "300"], ["NONCE_RETENTION_SECONDS", "599"]])).toEqual([{
      setting: "NONCE_RETENTION_SECONDS",
      problem: "expected at least twice SIGNATURE_WINDOW_SECONDS (600): a nonce forgotten inside the window could be replayed",
      missing: false
    }])
    expect(problems([["SIGNATURE_WINDOW_SECONDS", "600"]]).map(({ setting }) => setting)).toEqual(["NONCE_RETENTION_SECONDS"])
    expect(problems([["WEBHOOK_TIMEOUT_MS", "59999"]])).toEqual([])
    expect(problems([["WEBHOOK_TIMEOUT_MS", "60000"]])).toEqual([{
      setting: "WEBHOOK_LEASE_SECONDS",
      problem: "expected more than WEBHOOK_TIMEOUT_MS (60000 ms): a delivery could be sent again while its attempt waits",
      missing: false
    }])
  })

  it("PORT must be a port number", () => {
    expect(Result.isFailure(read(appConfig, [secret, ["PORT", "70000"]]))).toBe(true)
    expect(read(appConfig, [secret, ["PORT", "8081"]]).pipe(Result.map((c) => c.port))).toEqual(Result.succeed(8081))
  })

  it("HTTP_KEEP_ALIVE_SECONDS defaults to 65 (above the 60 s idle timeout of common load balancers) and must be above 0", () => {
    const keepAlive = (env: ReadonlyArray<readonly [string, string]>) =>
      read(appConfig, [secret, ...env]).pipe(Result.map((c) => c.keepAliveSeconds))
    expect(keepAlive([])).toEqual(Result.succeed(65))
    expect(keepAlive([["HTTP_KEEP_ALIVE_SECONDS", "75"]])).toEqual(Result.succeed(75))
    expect(Result.isFailure(keepAlive([["HTTP_KEEP_ALIVE_SECONDS", "0"]]))).toBe(true)
  })

  it("a value none of a union's choices takes is invalid and named, not passed over (an AnyOf without issues of its own)", () => {
    const result = read(Config.Literals(["a", "b"], "SOME_CHOICE"), [["SOME_CHOICE", "c"]])
    if (Result.isSuccess(result)) throw new Error("expected a failure")
    expect(configProblems(result.failure)).toEqual([{
      setting: "SOME_CHOICE",
      problem: expect.stringContaining("\"a\" | \"b\""),
      missing: false
    }])
  })

  it("the card parser's settings: CARD_OCR_MODEL one of the two models, the pool and the AI timeout at least 1, ANTHROPIC_BASE_URL an http(s) URL, empty means the default", () => {
    const card = (env: ReadonlyArray<readonly [string, string]>) =>
      read(cardParserConfig, env).pipe(Result.map(({ ocrModel, ocrPoolSize }) => [ocrModel, ocrPoolSize]))
    expect(card([])).toEqual(Result.succeed(["4.0.0_best_int", 2]))
    expect(card([["CARD_OCR_MODEL", "4.0.0"], ["CARD_OCR_POOL_SIZE", "3"]])).toEqual(Result.succeed(["4.0.0", 3]))
    expect(card([["CARD_OCR_MODEL", ""]])).toEqual(Result.succeed(["4.0.0_best_int", 2]))
    for (
      const [name, value, problem] of [
        ["CARD_OCR_MODEL", "bogus", "expected 4.0.0_best_int or 4.0.0; got \"bogus\""],
        ["CARD_OCR_POOL_SIZE", "0", "expected a whole number of at least 1; got \"0\""],
        ["CARD_AI_TIMEOUT_MS", "-5", "expected a whole number of milliseconds from 1 to 2147483647 (24 days); got \"-5\""],
        ["ANTHROPIC_BASE_URL", "api.example.com", "expected an http(s) URL; got \"api.example.com\""]
      ] as const
    ) {
      const result = read(cardParserConfig, [[name, value]])
      if (Result.isSuccess(result)) throw new Error(`expected ${name}=${value} to fail`)
      expect(configProblems(result.failure)).toEqual([{ setting: name, problem, missing: false }])
    }
  })

  it("an unset or empty SECRET_KEY is missing (the bootstrap supplies one), not invalid", () => {
    for (const env of [[], [["SECRET_KEY", ""] as const]]) {
      const result = read(appConfig, env)
      if (Result.isSuccess(result)) throw new Error("expected a failure")
      expect(configProblems(result.failure)).toEqual([{ setting: "SECRET_KEY", problem: expect.any(String), missing: true }])
    }
  })
})
