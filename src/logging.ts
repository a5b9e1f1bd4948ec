// Structured JSON logs on stderr at LOG_LEVEL (default Info); stdout stays free for admin output.
// Code outside Effect (bootstrap, embedded PostgreSQL, scripts) writes its lines in the same shape.
import fs from "node:fs"

import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"

import { errorMessage } from "./domain/text.js"

// Effect's level names plus the short forms people type; Config.logLevel alone only knows the
// upper-case labels (WARN, not Warning), which is not what the README documents.
const LEVELS: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = [
  ["all", LogLevel.All],
  ["trace", LogLevel.Trace],
  ["debug", LogLevel.Debug],
  ["info", LogLevel.Info],
  ["warning", LogLevel.Warning],
  ["warn", LogLevel.Warning],
  ["error", LogLevel.Error],
  ["err", LogLevel.Error],
  ["fatal", LogLevel.Fatal],
  ["none", LogLevel.None],
  ["off", LogLevel.None]
]

/** What LOG_LEVEL accepts, for messages and the README. */
export const LOG_LEVEL_VALUES = "All, Trace, Debug, Info, Warning (or Warn), Error (or Err), Fatal, None (or Off), in any case"

/** The log level named by a LOG_LEVEL value, case-insensitively; undefined when it names none. */
export const parseLogLevel = (raw: string): LogLevel.LogLevel | undefined => {
  const name = raw.trim().toLowerCase()
  return LEVELS.find(([candidate]) => candidate === name)?.[1]
}

/** LOG_LEVEL; unset or empty means Info. */
export const logLevelConfig: Config.Config<LogLevel.LogLevel> = Config.nested(
  Config.string().pipe(
    Config.mapOrFail((raw) => {
      if (raw.trim() === "") return Either.right(LogLevel.Info)
      const level = parseLogLevel(raw)
      return level === undefined
        ? Either.left(ConfigError.InvalidData([], `expected one of ${LOG_LEVEL_VALUES}; got ${JSON.stringify(raw)}`))
        : Either.right(level)
    })
  ),
  "LOG_LEVEL"
).pipe(Config.withDefault(LogLevel.Info))

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

const stderrJson = Logger.map(Logger.jsonLogger, writeStderrLine)
/** Effect logs as JSON lines on stderr (stdout stays free for the admin command line's answer). */
export const StderrJsonLive = Logger.replace(Logger.defaultLogger, stderrJson)

export const LoggingLive = Layer.unwrapEffect(
  Effect.map(logLevelConfig, (level) => Layer.merge(StderrJsonLive, Logger.minimumLogLevel(level)))
).pipe(Layer.orDie)

// An invalid LOG_LEVEL is reported by the start-up check (exitOnInvalidSettings); until then the
// lines written outside Effect use the default rather than failing themselves.
const levelFromEnv = (): LogLevel.LogLevel => parseLogLevel(process.env["LOG_LEVEL"] ?? "") ?? LogLevel.Info

/**
 * Writes one JSON line on stderr, shaped like Effect's `Logger.jsonLogger` output
 * (`message`, `logLevel`, `timestamp`, `annotations`, …), when LOG_LEVEL lets `level` through.
 */
export const writeLog = (
  level: LogLevel.LogLevel,
  message: string,
  annotations: Readonly<Record<string, unknown>> = {},
  opts?: { readonly always?: boolean }
): void => {
  Effect.runSync(
    Effect.logWithLevel(level, message).pipe(
      Effect.annotateLogs(annotations),
      Effect.provide(StderrJsonLive),
      Logger.withMinimumLogLevel(opts?.always === true ? LogLevel.All : levelFromEnv())
    )
  )
}

/** A log function for one source (`{"annotations":{"source":…}}`), at Info unless told otherwise. */
export const logFor = (source: string) => (message: string, level: LogLevel.LogLevel = LogLevel.Info): void =>
  writeLog(level, message, { source })

/**
 * Reports why a process gives up as one JSON line on stderr (shown whatever LOG_LEVEL says: it is
 * the reason the process exits) and exits with code 1.
 */
export const exitWithError = (
  source: string,
  message: string,
  annotations: Readonly<Record<string, unknown>> = {}
): never => {
  writeLog(LogLevel.Fatal, message, { source, ...annotations }, { always: true })
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
  Cause.isInterruptedOnly(cause)
    ? Effect.void
    : Effect.logFatal(`${source} stopped: ${errorMessage(Cause.squash(cause))}`, cause).pipe(
      Effect.annotateLogs({ source })
    )

/**
 * The settings named in a ConfigError with what is wrong with each, one entry per setting in order;
 * `missing` marks a setting that is absent rather than invalid.
 */
export const configProblems = (
  error: ConfigError.ConfigError
): ReadonlyArray<{ readonly setting: string; readonly problem: string; readonly missing: boolean }> => {
  const found = new Map<string, { problem: string; missing: boolean }>()
  const walk = (e: ConfigError.ConfigError): void => {
    switch (e._op) {
      case "And":
      case "Or":
        walk(e.left)
        walk(e.right)
        return
      default: {
        const setting = e.path.join(".")
        const missing = e._op === "MissingData"
        const seen = found.get(setting)
        // An invalid value outweighs a "missing" from another branch of the same setting.
        if (seen === undefined || (seen.missing && !missing)) found.set(setting, { problem: e.message, missing })
      }
    }
  }
  walk(error)
  return [...found].map(([setting, { problem, missing }]) => ({ setting, problem, missing }))
}

/**
 * Checks `settings` against the environment before anything runs: a bad value is reported as one
 * JSON line naming every invalid variable, and the process exits with code 1. Missing values are
 * left to the bootstrap (SECRET_KEY is generated in embedded mode).
 */
export const exitOnInvalidSettings = (source: string, settings: Config.Config<unknown>): void => {
  const result = Effect.runSync(Effect.either(settings))
  if (Either.isRight(result)) return
  const invalid = configProblems(result.left).filter(({ missing }) => !missing)
  if (invalid.length === 0) return
  exitWithStartupError(
    source,
    `invalid setting${invalid.length > 1 ? "s" : ""} ${invalid.map(({ setting, problem }) => `${setting}: ${problem}`).join("; ")}`,
    { settings: invalid.map(({ setting }) => setting) }
  )
}
