// Logs on stderr at LOG_LEVEL (default Info); stdout stays free for admin output. LOG_FORMAT picks
// the shape: JSON lines (for a log shipper) or one readable line per entry (for a person at a
// terminal; `auto`, the default, takes that when stderr is a terminal). Either way each line names
// the process that wrote it (`api`, `jobs`, `start`, …) and its time in the platform time zone.
// Code outside Effect (bootstrap, embedded PostgreSQL, scripts) writes its lines the same way.
import fs from "node:fs"
import { isatty } from "node:tty"

import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Formatter from "effect/Formatter"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

import { setting } from "./Config.js"
import { errorMessage } from "./domain/text.js"
import { formatTimestamp } from "./domain/time.js"

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

// ---------------------------------------------------------------------------------------------
// The format of a line

export type LogFormat = "json" | "pretty"

/** What LOG_FORMAT accepts, for messages and the docs. */
export const LOG_FORMAT_VALUES = "auto, json, pretty"

/** The LOG_FORMAT setting named by a value, case-insensitively ("" is auto); undefined when it names none. */
export const parseLogFormat = (raw: string): LogFormat | "auto" | undefined => {
  const name = raw.trim().toLowerCase()
  return name === "" || name === "auto" ? "auto" : name === "json" || name === "pretty" ? name : undefined
}

/** LOG_FORMAT; unset or empty means auto. */
export const logFormatConfig: Config.Config<LogFormat | "auto"> = setting("LOG_FORMAT", (raw) => {
  const format = parseLogFormat(raw)
  return format === undefined
    ? Result.fail(`expected one of ${LOG_FORMAT_VALUES}; got ${JSON.stringify(raw)}`)
    : Result.succeed(format)
}).pipe(Config.withDefault<LogFormat | "auto">("auto"))

const stderrIsTerminal = isatty(2)

/**
 * The format of the lines written now: LOG_FORMAT as the environment says it (.env is loaded after
 * this module, so it is read per line), `auto` (or an invalid value, which the start-up check
 * reports) being `pretty` when stderr is a terminal and `json` otherwise.
 */
export const currentLogFormat = (): LogFormat => {
  const format = parseLogFormat(process.env["LOG_FORMAT"] ?? "") ?? "auto"
  return format === "auto" ? (stderrIsTerminal ? "pretty" : "json") : format
}

let processName: string | undefined

/** Names the process in every line it writes from now on (`api`, `jobs`, `start`, `admin`, …). */
export const setLogProcess = (name: string): void => {
  processName = name
}

/** The platform time zone (TZ, as the API reads it), for the time of each line. */
const platformZone = (): string => {
  const zone = process.env["TZ"]
  return zone === undefined || zone === "" ? "Asia/Shanghai" : zone
}

const two = (n: number): string => String(n).padStart(2, "0")

/**
 * An instant as ISO 8601 in the platform time zone with its offset and milliseconds
 * (`2026-11-25T19:15:24.123+08:00`); in UTC (`…Z`) when TZ names no zone Intl knows.
 */
export const logTimestamp = (date: Date): string => {
  const ms = date.getTime()
  const milli = ((ms % 1000) + 1000) % 1000
  const zone = platformZone()
  // Every line of the same second in the same zone shares its wall time and offset.
  const second = ms - milli
  if (second !== lastSecond.at || zone !== lastSecond.zone) {
    let wall: string
    try {
      wall = formatTimestamp(date, zone)
    } catch {
      return date.toISOString()
    }
    const offsetMinutes = Math.round((Date.parse(`${wall.replace(" ", "T")}Z`) - second) / 60_000)
    const sign = offsetMinutes < 0 ? "-" : "+"
    const abs = Math.abs(offsetMinutes)
    lastSecond = { at: second, zone, wall: wall.replace(" ", "T"), offset: `${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}` }
  }
  return `${lastSecond.wall}.${String(milli).padStart(3, "0")}${lastSecond.offset}`
}

let lastSecond = { at: Number.NaN, zone: "", wall: "", offset: "" }

/** One log entry, whoever wrote it (an Effect logger, code outside Effect, a child process's JSON line). */
export interface LogRecord {
  readonly message: unknown
  /** Upper case: INFO, WARN, … */
  readonly level: string
  readonly timestamp: string
  readonly process?: string | undefined
  readonly cause?: string | undefined
  readonly annotations: Readonly<Record<string, unknown>>
  readonly spans?: Readonly<Record<string, number>> | undefined
  readonly fiberId?: string | undefined
}

/**
 * One JSON line per log entry, in the shape the service has always written (Effect 3's JSON
 * logger: `message`, `logLevel`, `timestamp`, `cause`, `annotations`, `spans`, `fiberId`) with the
 * writing `process`; the timestamp carries the platform time zone's offset.
 */
const jsonLine = (r: LogRecord): string =>
  Formatter.formatJson({
    message: r.message,
    logLevel: r.level,
    timestamp: r.timestamp,
    process: r.process,
    cause: r.cause,
    annotations: r.annotations,
    spans: r.spans,
    fiberId: r.fiberId
  })

const colors = stderrIsTerminal && (process.env["NO_COLOR"] ?? "") === "" && process.env["TERM"] !== "dumb"
const paint = (code: string | undefined, text: string): string => (colors && code !== undefined ? `\x1b[${code}m${text}\x1b[0m` : text)
const LEVEL_COLORS: Readonly<Record<string, string>> = { WARN: "33", ERROR: "31", FATAL: "1;31", DEBUG: "2", TRACE: "2" }

const plain = (value: unknown): string => {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)
  return typeof value === "number" || typeof value === "boolean" ? String(value) : Formatter.formatJson(value)
}

/**
 * One line for a person: `2026-11-25 19:15:24.123 api   INFO  message key=value …` (the time in the
 * platform time zone), a cause's lines indented below it.
 */
const prettyLine = (r: LogRecord): string => {
  const time = r.timestamp.replace("T", " ").replace(/([+-]\d\d:\d\d|Z)$/, "")
  const message = typeof r.message === "string"
    ? r.message
    : Array.isArray(r.message)
    ? r.message.map((m) => (typeof m === "string" ? m : Formatter.formatJson(m))).join(" ")
    : Formatter.formatJson(r.message)
  const fields = Object.entries(r.annotations)
    // The source that names the process again says nothing.
    .filter(([key, value]) => !(key === "source" && value === r.process))
    .map(([key, value]) => ` ${paint("2", `${key}=`)}${plain(value)}`)
    .join("")
  const spans = Object.entries(r.spans ?? {}).map(([label, ms]) => ` ${paint("2", `${label}=`)}${ms}ms`).join("")
  const cause = r.cause === undefined || r.cause === "" ? "" : `\n${r.cause.replace(/^/gm, "    ")}`
  const level = r.level.padEnd(5)
  return `${paint("2", time)} ${(r.process ?? "-").padEnd(5)} ${paint(LEVEL_COLORS[r.level], level)} ${message}${fields}${spans}${cause}`
}

/** A log entry as a line in `format`. */
export const renderLog = (record: LogRecord, format: LogFormat = currentLogFormat()): string =>
  format === "json" ? jsonLine(record) : prettyLine(record)

/** Writes one log entry on stderr in the current format. */
export const writeRecord = (record: LogRecord): void => writeStderrLine(renderLog(record))

const stderrLogger = Logger.map(Logger.formatStructured, (entry) =>
  writeRecord({
    message: entry.message,
    level: entry.level,
    timestamp: logTimestamp(new Date(entry.timestamp)),
    process: processName,
    cause: entry.cause,
    annotations: entry.annotations,
    spans: entry.spans,
    fiberId: entry.fiberId
  }))

/** Effect logs on stderr in LOG_FORMAT (stdout stays free for the admin command line's answer). */
export const StderrLogLive = Logger.layer([stderrLogger])

export const LoggingLive = Layer.unwrap(
  Effect.map(logLevelConfig, (level) => Layer.merge(StderrLogLive, Layer.succeed(References.MinimumLogLevel)(level)))
).pipe(Layer.orDie)

// An invalid LOG_LEVEL is reported by the start-up check (exitOnInvalidSettings); until then the
// lines written outside Effect use the default rather than failing themselves.
const levelFromEnv = (): LogLevel.LogLevel => parseLogLevel(process.env["LOG_LEVEL"] ?? "") ?? "Info"

/**
 * Writes one line on stderr like the Effect logs (message, level, time, process, annotations) when
 * LOG_LEVEL lets `level` through; `process` names another writer than this process (a child's
 * line relayed by `npm start`).
 */
export const writeLog = (
  level: LogLevel.Severity,
  message: string,
  annotations: Readonly<Record<string, unknown>> = {},
  opts?: { readonly always?: boolean; readonly process?: string }
): void => {
  if (opts?.always !== true && !LogLevel.isGreaterThanOrEqualTo(level, levelFromEnv())) return
  writeRecord({
    message,
    level: level.toUpperCase(),
    timestamp: logTimestamp(new Date()),
    process: opts?.process ?? processName,
    annotations,
    spans: {}
  })
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

/** Why a listener could not bind, from Node's error code; and the setting that changes it. */
const LISTEN_PROBLEMS: Readonly<Record<string, { readonly problem: string; readonly setting: "port" | "HOST" }>> = {
  EADDRINUSE: { problem: "the port is in use", setting: "port" },
  EACCES: { problem: "permission denied (a port below 1024 needs privileges)", setting: "port" },
  EADDRNOTAVAIL: { problem: "the address is not one of this machine's", setting: "HOST" }
}

/** Node's error of a listen that failed, wherever it sits in a cause (a failure's or a defect's `cause` chain). */
const listenFailure = (cause: Cause.Cause<unknown>): { code: string; address: string; port: number } | undefined => {
  const seen = new Set<unknown>()
  const find = (value: unknown): { code: string; address: string; port: number } | undefined => {
    if (typeof value !== "object" || value === null || seen.has(value)) return undefined
    seen.add(value)
    const e = value as { code?: unknown; syscall?: unknown; address?: unknown; port?: unknown; cause?: unknown }
    if (e.syscall === "listen" && typeof e.code === "string" && typeof e.address === "string" && typeof e.port === "number") {
      return { code: e.code, address: e.address, port: e.port }
    }
    return find(e.cause)
  }
  for (const reason of cause.reasons) {
    const found = Cause.isFailReason(reason) ? find(reason.error) : Cause.isDieReason(reason) ? find(reason.defect) : undefined
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * The one line for a listener that could not bind, naming the address and the setting to change
 * (`api cannot listen on 0.0.0.0:8080: the port is in use (set PORT)`); undefined for any other cause.
 */
export const listenFailureMessage = (source: string, portSetting: string, cause: Cause.Cause<unknown>): string | undefined => {
  const failure = listenFailure(cause)
  if (failure === undefined) return undefined
  const known = LISTEN_PROBLEMS[failure.code]
  const host = failure.address.includes(":") ? `[${failure.address}]` : failure.address
  const setting = known === undefined ? `${portSetting} or HOST` : known.setting === "port" ? portSetting : "HOST"
  return `${source} cannot listen on ${host}:${failure.port}: ${known?.problem ?? failure.code} (set ${setting})`
}

/**
 * The reason a long-running process stops, as one FATAL line with the full cause (for runMain with
 * its own error reporting off, which prints no message); an interruption is a normal stop. A port
 * that cannot be had is one line without a stack trace, naming `portSetting`.
 */
export const logStopReason = (source: string, portSetting = "PORT") => <E>(cause: Cause.Cause<E>): Effect.Effect<void> => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.void
  const listen = listenFailureMessage(source, portSetting, cause)
  return (listen === undefined
    ? Effect.logFatal(`${source} stopped: ${errorMessage(Cause.squash(cause))}`, cause)
    : Effect.logFatal(listen)).pipe(Effect.annotateLogs({ source }))
}

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

/** Settings whose value is key material: never written to a log, even when it is wrong. */
const SECRET_SETTINGS: ReadonlySet<string> = new Set(["SECRET_KEY", "SECRET_KEYS"])

/** The value a setting has in the environment, quoted, when its problem does not show it already. */
const withValue = (setting: string, problem: string): string => {
  if (SECRET_SETTINGS.has(setting)) return problem
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
