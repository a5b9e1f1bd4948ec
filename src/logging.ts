// Logs on stderr at LOG_LEVEL (default Info); stdout stays free for the admin command's answer.
// LOG_FORMAT picks the shape: JSON lines (for a log shipper) or one readable line per entry (for a
// person at a terminal; `auto`, the default, takes that when stderr is a terminal). Either way each
// line names the process that wrote it (`api`, `jobs`, `start`, …) and its time in the platform
// time zone. One layer (LoggingLive) configured from Config: Effect's logger, the minimum level, and
// LogOutput for the few lines written outside a fiber (callbacks of child processes).
import fs from "node:fs"
import { isatty } from "node:tty"

import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Formatter from "effect/Formatter"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"

import { setting } from "./Config.js"
import { formatTimestamp } from "./domain/time.js"

// ---------------------------------------------------------------------------------------------
// Settings

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

/** What the logger reads of the environment. */
export interface LogSettings {
  readonly level: LogLevel.LogLevel
  readonly format: LogFormat | "auto"
  /** TZ: the platform time zone, as the API reads it. */
  readonly timeZone: string
  /** NO_COLOR set (to anything but empty) or TERM=dumb: no colours even on a terminal. */
  readonly noColor: boolean
}

/**
 * LOG_LEVEL, LOG_FORMAT, TZ, NO_COLOR and TERM. A bad LOG_LEVEL or LOG_FORMAT is read as its default
 * here: the start-up check (src/startup.ts) names it, in a line this very logger writes.
 */
export const logSettingsConfig: Config.Config<LogSettings> = Config.all({
  level: logLevelConfig.pipe(Config.orElse(() => Config.succeed<LogLevel.LogLevel>("Info"))),
  format: logFormatConfig.pipe(Config.orElse(() => Config.succeed<LogFormat | "auto">("auto"))),
  timeZone: Config.String("TZ").pipe(Config.withDefault("Asia/Shanghai")),
  noColor: Config.all([Config.String("NO_COLOR").pipe(Config.withDefault("")), Config.String("TERM").pipe(Config.withDefault(""))]).pipe(
    Config.map(([noColor, term]) => noColor !== "" || term === "dumb")
  )
})

/** How lines look: their format, whether they are coloured, and the zone of their times. */
export interface LogStyle {
  readonly format: LogFormat
  readonly colors: boolean
  readonly timeZone: string
}

/** The style of `settings` on a stderr that is (or is not) a terminal: `auto` and colours follow it. */
export const logStyle = (settings: LogSettings, terminal: boolean): LogStyle => ({
  format: settings.format === "auto" ? (terminal ? "pretty" : "json") : settings.format,
  colors: terminal && !settings.noColor,
  timeZone: settings.timeZone
})

// ---------------------------------------------------------------------------------------------
// The shape of a line

const two = (n: number): string => String(n).padStart(2, "0")

/**
 * A formatter of instants as ISO 8601 in `zone` with its offset and milliseconds
 * (`2026-11-25T19:15:24.123+08:00`); in UTC (`…Z`) when `zone` names no zone Intl knows. Lines of
 * the same second share their wall time and offset, kept by the formatter.
 */
export const timestampsIn = (zone: string): (date: Date) => string => {
  let last = { at: Number.NaN, wall: "", offset: "" }
  return (date) => {
    const ms = date.getTime()
    const milli = ((ms % 1000) + 1000) % 1000
    const second = ms - milli
    if (second !== last.at) {
      let wall: string
      try {
        wall = formatTimestamp(date, zone)
      } catch {
        return date.toISOString()
      }
      const offsetMinutes = Math.round((Date.parse(`${wall.replace(" ", "T")}Z`) - second) / 60_000)
      const sign = offsetMinutes < 0 ? "-" : "+"
      const abs = Math.abs(offsetMinutes)
      last = { at: second, wall: wall.replace(" ", "T"), offset: `${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}` }
    }
    return `${last.wall}.${String(milli).padStart(3, "0")}${last.offset}`
  }
}

/** One instant as a log line's time in `zone` (see timestampsIn). */
export const logTimestamp = (date: Date, zone: string): string => timestampsIn(zone)(date)

/** One log entry, whoever wrote it (an Effect logger, a callback outside Effect, a child process's JSON line). */
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
const jsonLine = (r: LogRecord): string => {
  const line = {
    message: r.message,
    logLevel: r.level,
    timestamp: r.timestamp,
    process: r.process,
    cause: r.cause,
    annotations: r.annotations,
    spans: r.spans,
    fiberId: r.fiberId
  }
  // Most lines (every request's) hold only text and numbers, which JSON.stringify writes exactly as
  // Formatter.formatJson does; formatJson's replacer (redaction, getters, cycles) looks up every
  // property's descriptor, 2.7 KB and a few microseconds a line (docs/benchmarks.md, "Generators
  // made per request"). Anything else (a Redacted value, an object, a bigint) still goes through it.
  return typeof r.message === "string" && scalarsOnly(r.annotations) && (r.spans === undefined || scalarsOnly(r.spans))
    ? JSON.stringify(line)
    : Formatter.formatJson(line)
}

/** Whether every value of `record` is text, a number, a boolean, null or undefined. */
const scalarsOnly = (record: Readonly<Record<string, unknown>>): boolean => {
  for (const key in record) {
    const value = record[key]
    if (value !== null && value !== undefined && typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
      return false
    }
  }
  return true
}

const LEVEL_COLORS: Readonly<Record<string, string>> = { WARN: "33", ERROR: "31", FATAL: "1;31", DEBUG: "2", TRACE: "2" }

const plain = (value: unknown): string => {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)
  return typeof value === "number" || typeof value === "boolean" ? String(value) : Formatter.formatJson(value)
}

/**
 * One line for a person: `2026-11-25 19:15:24.123+08:00 api   INFO  message key=value …` (the time
 * in the platform time zone, with its offset), a cause's lines indented below it.
 */
const prettyLine = (r: LogRecord, colors: boolean): string => {
  const paint = (code: string | undefined, text: string): string => (colors && code !== undefined ? `\x1b[${code}m${text}\x1b[0m` : text)
  const time = r.timestamp.replace("T", " ")
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

/** A log entry as a line in `style` (colours only apply to pretty lines). */
export const renderLog = (record: LogRecord, style: Pick<LogStyle, "format" | "colors">): string =>
  style.format === "json" ? jsonLine(record) : prettyLine(record, style.colors)

// ---------------------------------------------------------------------------------------------
// Writing to stderr

const isWouldBlock = (error: NodeJS.ErrnoException): boolean => error.code === "EAGAIN"

/**
 * The retry of a write that found stderr full: made once (a schedule written in the call would
 * parse its duration and be built again on every write, that is on every batch of log lines).
 */
const WHILE_FULL = { schedule: Schedule.spaced(Duration.millis(1)), while: isWouldBlock }

/** One write(2) of `bytes` from `offset` on stderr, on libuv's thread pool; how many bytes it wrote. */
const writeOnce = (bytes: Buffer, offset: number) =>
  Effect.callback<number, NodeJS.ErrnoException>((resume) => {
    fs.write(2, bytes, offset, bytes.length - offset, null, (error, written) =>
      resume(error === null ? Effect.succeed(written) : Effect.fail(error)))
  })

/**
 * Writes `text` whole on stderr: a short write goes on from where it stopped, and a stderr that is
 * non-blocking and full (EAGAIN: a parent may have made the descriptor it shares non-blocking) is
 * written again every millisecond until it takes the bytes. Any other error loses the text: stderr
 * is gone, and nothing is left to tell.
 */
const writeAll: (text: string) => Effect.Effect<void> = Effect.fnUntraced(function*(text: string) {
  const bytes = Buffer.from(text, "utf8")
  let offset = 0
  while (offset < bytes.length) {
    offset += yield* writeOnce(bytes, offset).pipe(Effect.retry(WHILE_FULL))
  }
}, (effect) => Effect.ignore(effect))

/** How long a stopping process waits for stderr to take its last lines. */
const SHUTDOWN_WRITE_LIMIT = Duration.seconds(2)

/**
 * Writes `text` synchronously on stderr, for a process that exits now: a short write goes on, and a
 * full non-blocking stderr is waited for (1 ms at a time, 2 s at most: a reader that never comes
 * must not hold the exit).
 */
const writeAllNow = (text: string): void => {
  const bytes = Buffer.from(text, "utf8")
  const pause = new Int32Array(new SharedArrayBuffer(4))
  const giveUpAt = Date.now() + Duration.toMillis(SHUTDOWN_WRITE_LIMIT)
  let offset = 0
  while (offset < bytes.length) {
    try {
      offset += fs.writeSync(2, bytes, offset)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN" || Date.now() > giveUpAt) return
      Atomics.wait(pause, 0, 0, 1)
    }
  }
}

/**
 * Lines for stderr, written by one fiber in the order they came. Why not process.stderr.write: on
 * Linux it writes synchronously to a pipe or a terminal, so a slow reader of stderr (a terminal
 * scrolling, a log collector behind) would block the event loop and every request with it. Here a
 * line joins a buffer (a log call never waits), and the writer fiber wakes, lets the rest of this
 * turn's lines join, and writes them all with one asynchronous write; lines that come while it
 * writes form the next batch. When the scope closes the writer finishes what is left (for at most
 * SHUTDOWN_WRITE_LIMIT); when the process exits without closing it (process.exit, an uncaught
 * exception), what is left is written synchronously then.
 */
const stderrLines = Effect.gen(function*() {
  let pending: Array<string> = []
  let wake: (() => void) | undefined
  const take = (): string => {
    const text = pending.join("")
    pending = []
    return text
  }
  const writeRestNow = (): void => {
    if (pending.length > 0) writeAllNow(take())
  }
  const linesCome = Effect.callback<void>((resume) => {
    if (pending.length > 0) return resume(Effect.void)
    wake = () => resume(Effect.void)
    return Effect.sync(() => void (wake = undefined))
  })
  const writer = yield* Effect.forkDetach(
    Effect.forever(Effect.gen(function*() {
      yield* linesCome
      yield* Effect.yieldNow
      // A batch once begun is written whole, even at shutdown.
      yield* Effect.uninterruptible(writeAll(take()))
    }))
  )
  process.on("exit", writeRestNow)
  // A reader that takes nothing for that long must not hold the stop: the rest is lost then.
  yield* Effect.addFinalizer(() =>
    Fiber.interrupt(writer).pipe(
      Effect.andThen(Effect.whileLoop({ while: () => pending.length > 0, body: () => writeAll(take()), step: () => {} })),
      Effect.timeoutOption(SHUTDOWN_WRITE_LIMIT),
      Effect.andThen(Effect.sync(() => void process.off("exit", writeRestNow)))
    )
  )
  return (line: string): void => {
    pending.push(line + "\n")
    const woken = wake
    wake = undefined
    woken?.()
  }
})

// ---------------------------------------------------------------------------------------------
// The layer

/** Where this process's log lines go, for what writes outside a fiber; Effect's logs come here too. */
export class LogOutput extends Context.Service<LogOutput, {
  readonly style: LogStyle
  /** LOG_LEVEL as set (Info when unset or invalid). */
  readonly level: LogLevel.LogLevel
  /** The process every line of this one names. */
  readonly process: string
  /** The time of a line written now. */
  readonly timestamp: (date: Date) => string
  /** Writes one entry in this process's style, whatever its level. */
  readonly write: (record: LogRecord) => void
  /** Writes a line as it is (another process's JSON line, passed on). */
  readonly writeLine: (line: string) => void
}>()("App/LogOutput") {}

const makeLogOutput = Effect.fnUntraced(function*(processName: string) {
  const settings = yield* Effect.orDie(logSettingsConfig)
  const style = logStyle(settings, isatty(2))
  const writeLine = yield* stderrLines
  return LogOutput.of({
    style,
    level: settings.level,
    process: processName,
    timestamp: timestampsIn(settings.timeZone),
    write: (record) => writeLine(renderLog(record, style)),
    writeLine
  })
})

const LogOutputLive = (processName: string): Layer.Layer<LogOutput> => Layer.effect(LogOutput, makeLogOutput(processName))

/** Effect's log entries as LogOutput's records, naming the process. */
const stderrLogger = (output: LogOutput["Service"]) =>
  Logger.map(Logger.formatStructured, (entry) =>
    output.write({
      message: entry.message,
      level: entry.level,
      timestamp: output.timestamp(new Date(entry.timestamp)),
      process: output.process,
      cause: entry.cause,
      annotations: entry.annotations,
      spans: entry.spans,
      fiberId: entry.fiberId
    }))

/**
 * The logging of a process named `processName` (`api`, `jobs`, `admin`, …), configured from
 * LOG_LEVEL, LOG_FORMAT, TZ, NO_COLOR and TERM: Effect's logger on stderr, the minimum level, and
 * LogOutput.
 */
export const LoggingLive = (processName: string): Layer.Layer<LogOutput> =>
  Layer.mergeAll(
    Logger.layer([Effect.map(LogOutput, stderrLogger)]),
    Layer.effect(References.MinimumLogLevel, Effect.map(LogOutput, (output) => output.level))
  ).pipe(Layer.provideMerge(LogOutputLive(processName)))

/** An entry logged whatever the minimum level says (a server left running, why a process stops). */
export const always = <A, E, R>(log: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(log, References.MinimumLogLevel, "All")

/** Writes one line from code outside Effect: its level, message and annotations (`source`, …). */
export type PlainLog = (level: LogLevel.Severity, message: string, annotations?: Readonly<Record<string, unknown>>) => void

/**
 * The log function of code outside Effect (callbacks of a child process, the embedded PostgreSQL's
 * set-up): lines like Effect's, written when LOG_LEVEL lets their level through.
 */
export const plainLog: Effect.Effect<PlainLog, never, LogOutput> = Effect.map(LogOutput, (output) => (level, message, annotations = {}) => {
  if (!LogLevel.isGreaterThanOrEqualTo(level, output.level)) return
  output.write({
    message,
    level: level.toUpperCase(),
    timestamp: output.timestamp(new Date()),
    process: output.process,
    annotations,
    spans: {}
  })
})
