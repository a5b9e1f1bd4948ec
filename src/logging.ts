// Structured JSON logs on stderr at LOG_LEVEL (default Info); stdout stays free for admin output.
// Code outside Effect (bootstrap, embedded PostgreSQL, scripts) writes its lines in the same shape.
import fs from "node:fs"

import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Formatter from "effect/Formatter"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

import { setting } from "./Config.js"
import { errorMessage } from "./domain/text.js"

// Effect's level names plus the short forms people type; Config.logLevel alone only knows the
// upper-case labels (WARN, not Warning), which is not what docs/operator.md documents.
const LEVELS: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = [
  ["all", "All"],
  ["trace", "Trace"],
  ["debug", "Debug"],
  ["info", "Info"],
  ["warning", "Warn"],
  ["warn", "Warn"],
  ["error", "Error"],
  ["err", "Error"],
  ["fatal", "Fatal"],
  ["none", "None"],
  ["off", "None"]
]

/** What LOG_LEVEL accepts, for messages and docs/operator.md. */
export const LOG_LEVEL_VALUES = "All, Trace, Debug, Info, Warning (or Warn), Error (or Err), Fatal, None (or Off), in any case"

/** The log level named by a LOG_LEVEL value, case-insensitively; undefined when it names none. */
export const parseLogLevel = (raw: string): LogLevel.LogLevel | undefined => {
  const name = raw.trim().toLowerCase()
  return LEVELS.find(([candidate]) => candidate === name)?.[1]
}

/** LOG_LEVEL; unset or empty means Info. */
export const logLevelConfig: Config.Config<LogLevel.LogLevel> = setting("LOG_LEVEL", (raw): Result.Result<LogLevel.LogLevel, string> => {
  if (raw.trim() === "") return Result.succeed("Info")
  const level = parseLogLevel(raw)
  return level === undefined
    ? Result.fail(`expected one of ${LOG_LEVEL_VALUES}; got ${JSON.stringify(raw)}`)
    : Result.succeed(level)
}).pipe(Config.withDefault<LogLevel.LogLevel>("Info"))

// Lines are gathered for the rest of the event-loop turn and written with one asynchronous write,
// so logging never blocks a request on a slow reader of stderr. Whatever is still waiting when the
// process exits is written synchronously then.
const pending: Array<string> = []
let scheduled = false
let writing = false

const pump = (): void => {
  if (writing || pending.length === 0) return
  writing = true
  const chunk = Buffer.from(pending.join(""), "utf8")
  pending.length = 0
  const writeFrom = (offset: number): void => {
    fs.write(2, chunk, offset, chunk.length - offset, null, (err, written) => {
      if (err !== null) {
        // A non-blocking stderr that is full: try again shortly. Anything else: the line is lost.
        if (err.code === "EAGAIN") return void setTimeout(() => writeFrom(offset), 1)
      } else if (offset + written < chunk.length) {
        return writeFrom(offset + written)
      }
      writing = false
      pump()
    })
  }
  writeFrom(0)
}

/** Writes one line on stderr without blocking the event loop. */
export const writeStderrLine = (line: string): void => {
  pending.push(line + "\n")
  if (!scheduled) {
    scheduled = true
    setImmediate(() => {
      scheduled = false
      pump()
    })
  }
}

process.on("exit", () => {
  if (pending.length === 0) return
  try {
    fs.writeSync(2, pending.join(""))
  } catch {
    // stderr is gone; nothing left to tell
  }
  pending.length = 0
})

/**
 * One JSON line per log entry, in the shape the service has always written (Effect 3's JSON
 * logger): `message`, `logLevel`, `timestamp`, `cause`, `annotations`, `spans`, `fiberId`.
 */
const jsonLine = Logger.map(Logger.formatStructured, (entry) =>
  Formatter.formatJson({
    message: entry.message,
    logLevel: entry.level,
    timestamp: entry.timestamp,
    cause: entry.cause,
    annotations: entry.annotations,
    spans: entry.spans,
    fiberId: entry.fiberId
  }))

const stderrJson = Logger.map(jsonLine, writeStderrLine)

/** Effect logs as JSON lines on stderr (stdout stays free for the admin command line's answer). */
export const StderrJsonLive = Logger.layer([stderrJson])

export const LoggingLive = Layer.unwrap(
  Effect.map(logLevelConfig, (level) => Layer.merge(StderrJsonLive, Layer.succeed(References.MinimumLogLevel)(level)))
).pipe(Layer.orDie)

// An invalid LOG_LEVEL is reported by the start-up check (exitOnInvalidSettings); until then the
// lines written outside Effect use the default rather than failing themselves.
const levelFromEnv = (): LogLevel.LogLevel => parseLogLevel(process.env["LOG_LEVEL"] ?? "") ?? "Info"

const onlyStderrJson = new Set([stderrJson])

/**
 * Writes one JSON line on stderr, shaped like the Effect logs (`message`, `logLevel`, `timestamp`,
 * `annotations`, …), when LOG_LEVEL lets `level` through.
 */
export const writeLog = (
  level: LogLevel.Severity,
  message: string,
  annotations: Readonly<Record<string, unknown>> = {},
  opts?: { readonly always?: boolean }
): void => {
  Effect.runSync(
    Effect.logWithLevel(level)(message).pipe(
      Effect.annotateLogs(annotations),
      Effect.provideService(Logger.CurrentLoggers, onlyStderrJson),
      Effect.provideService(References.MinimumLogLevel, opts?.always === true ? "All" : levelFromEnv())
    )
  )
}

/** A log function for one source (`{"annotations":{"source":…}}`), at Info unless told otherwise. */
export const logFor = (source: string) => (message: string, level: LogLevel.Severity = "Info"): void => writeLog(level, message, { source })

/**
 * Reports why a process gives up as one JSON line on stderr (shown whatever LOG_LEVEL says: it is
 * the reason the process exits) and exits with code 1.
 */
export const exitWithError = (
  source: string,
  message: string,
  annotations: Readonly<Record<string, unknown>> = {}
): never => {
  writeLog("Fatal", message, { source, ...annotations }, { always: true })
  process.exit(1)
}

/** exitWithError for a process that cannot start (`<source> cannot start: <why>`). */
export const exitWithStartupError = (
  source: string,
  error: unknown,
  annotations: Readonly<Record<string, unknown>> = {}
): never => exitWithError(source, `${source} cannot start: ${errorMessage(error)}`, annotations)

/**
 * The reason a long-running process stops, as one FATAL line with the full cause (for runMain with
 * its own error reporting off, which prints no message); an interruption is a normal stop.
 */
export const logStopReason = (source: string) => <E>(cause: Cause.Cause<E>): Effect.Effect<void> =>
  Cause.hasInterruptsOnly(cause)
    ? Effect.void
    : Effect.logFatal(`${source} stopped: ${errorMessage(Cause.squash(cause))}`, cause).pipe(
      Effect.annotateLogs({ source })
    )

const formatIssue = SchemaIssue.makeFormatterDefault()

/** The message of one issue: the one a setting's check gave, else effect's own wording. */
const issueMessage = (issue: SchemaIssue.Issue): string =>
  (issue._tag === "InvalidValue" || issue._tag === "MissingKey") && typeof issue.annotations?.message === "string"
    ? issue.annotations.message
    : formatIssue(issue)

/**
 * The settings named in a ConfigError with what is wrong with each, one entry per setting in order;
 * `missing` marks a setting that is absent rather than invalid.
 */
export const configProblems = (
  error: Config.ConfigError
): ReadonlyArray<{ readonly setting: string; readonly problem: string; readonly missing: boolean }> => {
  const found = new Map<string, { problem: string; missing: boolean }>()
  const add = (setting: string, problem: string, missing: boolean) => {
    const seen = found.get(setting)
    // An invalid value outweighs a "missing" from another branch of the same setting.
    if (seen === undefined || (seen.missing && !missing)) found.set(setting, { problem, missing })
  }
  const walk = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): void => {
    switch (issue._tag) {
      case "Pointer":
        return walk(issue.issue, [...path, ...issue.path])
      case "Composite":
      case "AnyOf":
        return issue.issues.forEach((i) => walk(i, path))
      default:
        add(path.map(String).join("."), issueMessage(issue), issue._tag === "MissingKey")
    }
  }
  if (Schema.isSchemaError(error.cause)) walk(error.cause.issue, [])
  else add("configuration", error.cause.message, false)
  return [...found].map(([setting, { problem, missing }]) => ({ setting, problem, missing }))
}

/** The value a setting has in the environment, quoted, when its problem does not show it already. */
const withValue = (setting: string, problem: string): string => {
  const raw = process.env[setting]
  return raw === undefined || problem.includes(JSON.stringify(raw)) ? problem : `${problem}; got ${JSON.stringify(raw)}`
}

/**
 * Checks `settings` against the environment before anything runs: a bad value is reported as one
 * JSON line naming every invalid variable, and the process exits with code 1. Missing values are
 * reported too with `reportMissing` (the API and the daemon, which only read the environment), else
 * left to the caller (`npm start` prepares DATABASE_URL and SECRET_KEY). Each group of settings is
 * read on its own (a group stops at its first problem), from the environment as it is now.
 */
export const exitOnInvalidSettings = (
  source: string,
  settings: ReadonlyArray<Config.Config<unknown>>,
  opts?: { readonly reportMissing?: boolean }
): void => {
  const provider = ConfigProvider.fromEnv()
  const problems = settings.flatMap((config) => {
    const exit = Effect.runSyncExit(config.parse(provider))
    if (Exit.isSuccess(exit)) return []
    const error = Cause.findErrorOption(exit.cause)
    if (error._tag === "None") return [{ setting: "configuration", problem: Cause.pretty(exit.cause), missing: false }]
    return configProblems(error.value).filter(({ missing }) => !missing || opts?.reportMissing === true)
  })
  const invalid = problems.filter(({ missing }) => !missing)
  const missing = problems.filter(({ missing }) => missing)
  if (problems.length === 0) return
  const parts = [
    ...(invalid.length === 0 ? [] : [
      `invalid setting${invalid.length > 1 ? "s" : ""} ${
        invalid.map(({ setting, problem }) => `${setting}: ${withValue(setting, problem)}`).join("; ")
      }`
    ]),
    // A missing setting's problem names it ("DATABASE_URL is not set; …").
    ...missing.map(({ problem }) => problem)
  ]
  exitWithStartupError(source, parts.join("; "), { settings: [...invalid, ...missing].map(({ setting }) => setting) })
}

/**
 * How a long-running process exits (runMain's teardown): 0 when it stopped because it was told to
 * (SIGTERM, SIGINT: an interruption is a normal stop), else as effect decides (1 for a failure).
 */
export const exitCodeOnStop: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
