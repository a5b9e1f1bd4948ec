// How a process says why it cannot start or why it stopped: every setting checked before anything
// runs (a bad or missing one is one FATAL line naming it), a port that cannot be had in one line
// naming the setting to change, any other stop with its cause. The exit code follows (runMain's
// teardown, src/runProcess.ts).
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

import { errorMessage } from "./domain/text.js"
import { always } from "./logging.js"

/**
 * Why a process gives up, as the one FATAL line it logs (shown whatever LOG_LEVEL says) with its
 * annotations (the settings concerned); the process then exits with code 1.
 */
export class ProcessFailure extends Data.TaggedError("ProcessFailure")<{
  readonly message: string
  readonly annotations: Readonly<Record<string, unknown>>
}> {
  /** `<source> cannot start: <why>`. */
  static startup(source: string, why: unknown, annotations: Readonly<Record<string, unknown>> = {}): ProcessFailure {
    return new ProcessFailure({ message: `${source} cannot start: ${errorMessage(why)}`, annotations })
  }
  /** `<what> failed: <why>`. */
  static of(what: string, why: unknown): ProcessFailure {
    return new ProcessFailure({ message: `${what} failed: ${errorMessage(why)}`, annotations: {} })
  }
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
        // A value none of a union's members takes (a `Config.Literals` setting given another
        // word) is an AnyOf with no issues of its own: the union's message names the choices.
        if (issue.issues.length > 0) return issue.issues.forEach((i) => walk(i, path))
        return add(path.map(String).join("."), issueMessage(issue), false)
      default:
        add(path.map(String).join("."), issueMessage(issue), issue._tag === "MissingKey")
    }
  }
  if (Schema.isSchemaError(error.cause)) walk(error.cause.issue, [])
  else add("configuration", error.cause.message, false)
  // A failure always names something: a setting, else the configuration as a whole.
  if (found.size === 0) add("configuration", error.message, false)
  return [...found].map(([setting, { problem, missing }]) => ({ setting, problem, missing }))
}

/**
 * A ConfigError in the words of the start-up check, without reading the values again: `invalid
 * setting TZ: expected …; got "Mars/Olympus"`, a missing setting by its own message. For a command
 * line that meets the error while building its services (the admin's).
 */
export const describeConfigError = (error: Config.ConfigError): string => {
  const problems = configProblems(error)
  const invalid = problems.filter(({ missing }) => !missing).map(({ problem, setting }) => `${setting}: ${problem}`)
  return [
    ...(invalid.length === 0 ? [] : [`invalid setting${invalid.length > 1 ? "s" : ""} ${invalid.join("; ")}`]),
    ...problems.filter(({ missing }) => missing).map(({ problem }) => problem)
  ].join("; ")
}

/** Settings whose value is key material or may hold a password: never written to a log, even when it is wrong. */
const SECRET_SETTINGS: ReadonlySet<string> = new Set(["SECRET_KEY", "SECRET_KEYS", "DATABASE_URL", "DATABASE_DIRECT_URL"])

/** A setting's problem with its value quoted (as the configuration gives it), unless it shows already. */
const withValue = (setting: string, problem: string): Effect.Effect<string> =>
  SECRET_SETTINGS.has(setting) ? Effect.succeed(problem) : Config.option(Config.String(setting)).pipe(
    Effect.map((raw) =>
      Option.isNone(raw) || problem.includes(JSON.stringify(raw.value)) ? problem : `${problem}; got ${JSON.stringify(raw.value)}`
    ),
    Effect.orElseSucceed(() => problem)
  )

/**
 * Checks `settings` before anything runs: a bad value fails with the ProcessFailure (`<source>
 * cannot start: …`) naming every
 * invalid setting. Missing values are reported too with `reportMissing` (the API and the daemon,
 * which only read the environment), else left to the caller (`npm start` prepares DATABASE_URL and
 * SECRET_KEY). Each group of settings is read on its own (a group stops at its first problem).
 */
export const checkSettings: (
  source: string,
  settings: ReadonlyArray<Config.Config<unknown>>,
  opts?: { readonly reportMissing?: boolean }
) => Effect.Effect<void, ProcessFailure> = Effect.fnUntraced(function*(
  source: string,
  settings: ReadonlyArray<Config.Config<unknown>>,
  opts?: { readonly reportMissing?: boolean }
) {
  const problems: Array<{ readonly setting: string; readonly problem: string; readonly missing: boolean }> = []
  for (const config of settings) {
    const exit = yield* Effect.exit(config)
    if (Exit.isSuccess(exit)) continue
    const error = Cause.findErrorOption(exit.cause)
    if (Option.isNone(error)) problems.push({ setting: "configuration", problem: Cause.pretty(exit.cause), missing: false })
    else problems.push(...configProblems(error.value).filter(({ missing }) => !missing || opts?.reportMissing === true))
  }
  if (problems.length === 0) return
  const invalid = problems.filter(({ missing }) => !missing)
  const missing = problems.filter(({ missing }) => missing)
  const described = yield* Effect.forEach(
    invalid,
    ({ setting, problem }) => Effect.map(withValue(setting, problem), (text) => `${setting}: ${text}`)
  )
  const parts = [
    ...(invalid.length === 0 ? [] : [`invalid setting${invalid.length > 1 ? "s" : ""} ${described.join("; ")}`]),
    // A missing setting's problem names it ("DATABASE_URL is not set; …").
    ...missing.map(({ problem }) => problem)
  ]
  return yield* ProcessFailure.startup(source, parts.join("; "), { settings: [...invalid, ...missing].map(({ setting }) => setting) })
})

/** Why a listener could not bind, from Node's error code; and the setting that changes it. */
const LISTEN_PROBLEMS: Readonly<Record<string, { readonly problem: string; readonly setting: "port" | "HOST" }>> = {
  EADDRINUSE: { problem: "the port is in use", setting: "port" },
  EACCES: { problem: "permission denied (a port below 1024 needs privileges)", setting: "port" },
  EADDRNOTAVAIL: { problem: "the address is not one of this machine's", setting: "HOST" },
  // HOST given as a name (or as something that is not an address): looked up before listening.
  ENOTFOUND: { problem: "no such name or address", setting: "HOST" },
  EAI_AGAIN: { problem: "the name could not be looked up (DNS did not answer)", setting: "HOST" }
}

/** Node's error of a listen that failed, wherever it sits in a cause (a failure's or a defect's `cause` chain). */
const listenFailure = (cause: Cause.Cause<unknown>): { code: string; address: string; port?: number } | undefined => {
  const seen = new Set<unknown>()
  const find = (value: unknown, serving: boolean): { code: string; address: string; port?: number } | undefined => {
    if (typeof value !== "object" || value === null || seen.has(value)) return undefined
    seen.add(value)
    const e = value as {
      _tag?: unknown
      code?: unknown
      syscall?: unknown
      address?: unknown
      hostname?: unknown
      port?: unknown
      cause?: unknown
    }
    if (e.syscall === "listen" && typeof e.code === "string" && typeof e.address === "string" && typeof e.port === "number") {
      return { code: e.code, address: e.address, port: e.port }
    }
    // The listener's host, looked up before listening: only under the server's own error (a
    // database host that does not resolve is a lookup failure too, and not HOST's).
    if (serving && e.syscall === "getaddrinfo" && typeof e.code === "string" && typeof e.hostname === "string") {
      return { code: e.code, address: e.hostname }
    }
    return find(e.cause, serving || e._tag === "ServeError")
  }
  for (const reason of cause.reasons) {
    const found = Cause.isFailReason(reason)
      ? find(reason.error, false)
      : Cause.isDieReason(reason)
      ? find(reason.defect, false)
      : undefined
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
  return `${source} cannot listen on ${failure.port === undefined ? host : `${host}:${failure.port}`}: ${
    known?.problem ?? failure.code
  } (set ${setting})`
}

/** The ProcessFailure a cause is made of, if that is what it is. */
const processFailureOf = (cause: Cause.Cause<unknown>): ProcessFailure | undefined => {
  const error = Cause.findErrorOption(cause)
  return Option.isSome(error) && error.value instanceof ProcessFailure ? error.value : undefined
}

/**
 * The reason a process stops, as one FATAL line, for runMain with its own error reporting off, which
 * prints nothing: a ProcessFailure is its own line (shown whatever LOG_LEVEL says); a port that cannot be had is one line without a stack trace, naming `portSetting`; any other
 * failure is `<source> stopped: <why>` with the full cause. An interruption is a normal stop.
 */
export const logStopReason = (source: string, portSetting = "PORT") => <E>(cause: Cause.Cause<E>): Effect.Effect<void> => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.void
  const startup = processFailureOf(cause)
  if (startup !== undefined) return always(Effect.logFatal(startup.message).pipe(Effect.annotateLogs({ source, ...startup.annotations })))
  const listen = listenFailureMessage(source, portSetting, cause)
  return (listen === undefined
    ? Effect.logFatal(`${source} stopped: ${errorMessage(Cause.squash(cause))}`, cause)
    : Effect.logFatal(listen)).pipe(Effect.annotateLogs({ source }))
}

/**
 * How a long-running process exits (runMain's teardown): 0 when it stopped because it was told to
 * (SIGTERM, SIGINT: an interruption is a normal stop), else as effect decides (1 for a failure).
 */
export const exitCodeOnStop: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
