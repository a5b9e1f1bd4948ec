// Service configuration from the environment; every window, lease and limit has its documented
// default here (docs/operator.md "Configuration" and .env.example list the same names).
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as IpNetwork from "effect/net/IpNetwork"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

import { isKeyHex, parseSecretKeys, type SecretKey, secretKeyring } from "./auth/secretKeys.js"
import { parseAllowedNetworks } from "./domain/destinations.js"
import { canonicalTimeZone } from "./domain/time.js"
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from "./domain/webhooks.js"

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly timeZone: string
  /** The master keys of secrets at rest, the one that seals first (SECRET_KEYS, SECRET_KEY). */
  readonly secretKeys: Redacted.Redacted<ReadonlyArray<SecretKey>>
  /** Allowed |now - X-Timestamp|, seconds. */
  readonly signatureWindowSeconds: number
  /** How long a nonce is remembered per app_key, seconds. */
  readonly nonceRetentionSeconds: number
  /** How long a reset secret keeps working, seconds (7 days). */
  readonly secretOverlapSeconds: number
  readonly rateLimitRps: number
  readonly rateLimitBurst: number
  readonly jsonBodyLimitBytes: number
  readonly cardFileLimitBytes: number
  /** How often the daemon folds the list counters' delta rows (migration 0012). */
  readonly rowCountCompactSeconds: number
  /** How long a daemon holds a claimed card task before another may take it, seconds. */
  readonly cardTaskLeaseSeconds: number
  /** Card tasks processed at once by one daemon. */
  readonly cardTaskConcurrency: number
  /** Polling backstop for new card tasks (LISTEN/NOTIFY wakes the runner first), seconds. */
  readonly cardTaskPollSeconds: number
  /** Claims of one task before it is failed (a daemon died on it each time). */
  readonly cardTaskMaxAttempts: number
  /** How long a follow-up task's dispatch lock holds before another client may take it, seconds (2 hours). */
  readonly followUpLeaseSeconds: number
  /** How often the daemon creates the follow-up tasks that are due, seconds. */
  readonly followUpGenerateIntervalSeconds: number
  /** Webhook attempts in flight per daemon, and per receiver across every daemon (DECISIONS §9). */
  readonly webhookConcurrency: number
  readonly webhookClientConcurrency: number
  /** How long one webhook attempt may take (connection, answer, capped body), milliseconds. */
  readonly webhookTimeoutMs: number
  /** The waits before each retry of a failed delivery, milliseconds (about 3 days by default). */
  readonly webhookRetrySchedule: ReadonlyArray<number>
  /** How long a daemon holds a claimed delivery (above the timeout), seconds. */
  readonly webhookLeaseSeconds: number
  /** Polling backstop for due deliveries (LISTEN/NOTIFY wakes the runner first), seconds. */
  readonly webhookPollSeconds: number
  /** At most this much of a receiver's answer is read, bytes. */
  readonly webhookResponseLimitBytes: number
  /**
   * Networks outside the public internet that webhooks may still reach (DECISIONS §13): none by
   * default; loopback in the embedded quick start (src/bootstrap.ts).
   */
  readonly webhookAllowedNetworks: ReadonlyArray<IpNetwork.IpNetwork>
  /** Events are kept, and served by the events feed, this many days. */
  readonly eventsRetentionDays: number
  /** The span of one partition of the events outbox (and its deliveries and attempts), days (7: a week). */
  readonly eventsPartitionDays: number
  /** How far ahead of now the daemon keeps partitions of every table kept by partition, days. */
  readonly partitionsAheadDays: number
  /** How often the daemon creates partitions ahead and drops expired ones, seconds. */
  readonly partitionsIntervalSeconds: number
  /** How often the daemon moves activities and memberships whose time has passed, seconds. */
  readonly timeMovesIntervalSeconds: number
  /** How long a POST's Idempotency-Key and its response are kept, seconds (24 hours). */
  readonly idempotencyTtlSeconds: number
  /**
   * How long a repeat waits for a first attempt that still runs under its key before it answers
   * 409 idempotency_key_in_progress, seconds.
   */
  readonly idempotencyWaitSeconds: number
  /** On SIGTERM the API finishes the requests in flight for at most this long, seconds. */
  readonly shutdownGraceSeconds: number
  /**
   * How long the API keeps an idle keep-alive connection open, seconds (advertised as
   * `Keep-Alive: timeout=`): above a proxy's or load balancer's idle timeout, so that the server is
   * never the one to close a connection that the other end is about to reuse.
   */
  readonly keepAliveSeconds: number
  /** The daemon's own port for /healthz, /readyz and /metrics; none: not served. */
  readonly jobsPort: Option.Option<number>
  /** How often a daemon writes its heartbeat row, seconds. */
  readonly heartbeatIntervalSeconds: number
  /** /readyz answers 503 when the database does not answer within this long, milliseconds. */
  readonly readinessTimeoutMs: number
}

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("App/Config") {}

// ---------------------------------------------------------------------------------------------
// Settings: read as text, checked here, and reported by name with what is wrong and the value.

/** A setting whose value is present but wrong: named, with the reason (the value quoted in it). */
export const invalidSetting = (name: string, message: string): Config.ConfigError =>
  new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.Pointer([name], new SchemaIssue.InvalidValue({ message }))))

/** A required setting that is absent (or empty); `hint` says where a value comes from. */
export const missingSetting = (name: string, hint?: string): Config.ConfigError =>
  new Config.ConfigError(
    new Schema.SchemaError(
      new SchemaIssue.Pointer(
        [name],
        new SchemaIssue.MissingKey({ message: hint === undefined ? `${name} is not set` : `${name} is not set; ${hint}` })
      )
    )
  )

/**
 * A setting read as text and checked by `parse`. Unset (or empty) is absent, for `withDefault`; a
 * value `parse` refuses is invalid, with its message.
 */
export const setting = <A>(name: string, parse: (raw: string) => Result.Result<A, string>): Config.Config<A> =>
  Config.String(name).pipe(
    Config.mapEffect((raw) =>
      Result.match(parse(raw), {
        onSuccess: (value) => Effect.succeed(value),
        onFailure: (message) => Effect.fail(invalidSetting(name, message))
      })
    )
  )

/** A setting without a default: absent is reported as missing (not invalid), with `hint`. */
const required = <A>(name: string, config: Config.Config<A>, hint?: string): Config.Config<A> =>
  config.pipe(
    Config.map(Option.some),
    Config.withDefault(Option.none<A>()),
    Config.mapEffect(Option.match({
      onNone: () => Effect.fail(missingSetting(name, hint)),
      onSome: (value) => Effect.succeed(value)
    }))
  )

const quoted = (raw: string): string => JSON.stringify(raw)

const integerIn = (min: number, max: number, expected: string) => (raw: string): Result.Result<number, string> => {
  const text = raw.trim()
  const n = /^[+-]?\d+$/.test(text) ? Number(text) : Number.NaN
  return Number.isSafeInteger(n) && n >= min && n <= max ? Result.succeed(n) : Result.fail(`${expected}; got ${quoted(raw)}`)
}

const numberIn = (check: (n: number) => boolean, expected: string) => (raw: string): Result.Result<number, string> => {
  const text = raw.trim()
  const n = text === "" ? Number.NaN : Number(text)
  return Number.isFinite(n) && check(n) ? Result.succeed(n) : Result.fail(`${expected}; got ${quoted(raw)}`)
}

/** A whole number of at least 1 (a count of workers, a number of bytes). */
export const atLeastOne = (name: string) => setting(name, integerIn(1, Number.MAX_SAFE_INTEGER, "expected a whole number of at least 1"))
/** A whole number of at least 0. */
const atLeastZero = (name: string) => setting(name, integerIn(0, Number.MAX_SAFE_INTEGER, "expected a whole number of at least 0"))
const positiveNumber = (name: string) => setting(name, numberIn((n) => n > 0, "expected a number above 0"))
const positiveSeconds = (name: string) => setting(name, numberIn((n) => n > 0, "expected a number of seconds above 0"))

/**
 * The longest wait a timer takes (Node's setTimeout, PostgreSQL's timeouts in milliseconds: a
 * signed 32-bit number of milliseconds, about 24.8 days). Node runs a longer timer after 1 ms, and
 * PostgreSQL refuses a longer timeout at every session's start: a deadline past it would answer 503
 * to every request.
 */
const MAX_TIMER_MS = 2 ** 31 - 1
const MAX_TIMER_SECONDS = Math.floor(MAX_TIMER_MS / 1000)
/** Milliseconds a timer waits: 1 to MAX_TIMER_MS. */
export const timerMillis = (name: string) =>
  setting(name, integerIn(1, MAX_TIMER_MS, `expected a whole number of milliseconds from 1 to ${MAX_TIMER_MS} (24 days)`))
/** Seconds a timer waits: above 0 (or, with `zero`, at least 0) and at most MAX_TIMER_SECONDS. */
const timerSeconds = (name: string, zero?: string) =>
  setting(
    name,
    numberIn(
      (n) => (zero === undefined ? n > 0 : n >= 0) && n <= MAX_TIMER_SECONDS,
      `expected a number of seconds ${
        zero === undefined ? "above 0" : `of at least 0 (${zero})`
      } and at most ${MAX_TIMER_SECONDS} (24 days)`
    )
  )
const port = (name: string) => setting(name, integerIn(1, 65535, "expected a port number (1-65535)"))

/**
 * TZ, the platform time zone (DECISIONS §10): an IANA zone Intl knows, kept as Intl spells it. Checked
 * at start-up: a zone nothing can render in would otherwise fail every answer that carries a time.
 */
const timeZoneSetting = setting("TZ", (raw) => {
  const zone = canonicalTimeZone(raw)
  return zone === undefined
    ? Result.fail(`expected an IANA time zone such as Asia/Shanghai or UTC; got ${quoted(raw)}`)
    : Result.succeed(zone)
})

/** The scheme of a URL (`https:`), or undefined when the text is no URL. */
const protocolOf = (text: string): string | undefined => {
  try {
    return new URL(text).protocol
  } catch {
    return undefined
  }
}

/** An http(s) URL, as given; none when unset or empty. */
export const optionalHttpUrl = (name: string): Config.Config<Option.Option<string>> =>
  setting(name, (raw): Result.Result<Option.Option<string>, string> => {
    const text = raw.trim()
    if (text === "") return Result.succeed(Option.none())
    const protocol = protocolOf(text)
    return protocol === "http:" || protocol === "https:"
      ? Result.succeed(Option.some(text))
      : Result.fail(`expected an http(s) URL; got ${quoted(raw)}`)
  }).pipe(Config.withDefault(Option.none<string>()))

/** A port number, or none when unset or empty. */
export const optionalPort = (name: string): Config.Config<Option.Option<number>> =>
  setting(name, (raw) => {
    if (raw.trim() === "") return Result.succeed(Option.none<number>())
    return Result.map(integerIn(1, 65535, "expected a port number (1-65535)")(raw), Option.some)
  }).pipe(Config.withDefault(Option.none<number>()))

/** The problem of a setting's value, or none: absent and empty are left to the caller. */
const problemOf = <A>(config: Config.Config<A>): Config.Config<Config.ConfigError | undefined> =>
  config.pipe(
    Config.map((): Config.ConfigError | undefined => undefined),
    Config.withDefault(undefined),
    Config.orElse((error) => Config.succeed(error))
  )

/**
 * Config.all of these settings, reporting every invalid or missing one at once (Config.all stops at
 * the first): one ConfigError naming each of them.
 */
export const allReported = <const Fields extends Record<string, Config.Config<unknown>>>(fields: Fields) =>
  Config.all(Object.values(fields).map(problemOf)).pipe(
    Config.flatMap((errors) => {
      const issues = errors.flatMap((e) => (e !== undefined && Schema.isSchemaError(e.cause) ? [e.cause.issue] : []))
      const [first, ...rest] = errors.filter((e) => e !== undefined)
      if (first === undefined) return Config.all(fields)
      const [head, ...tail] = issues
      return head === undefined || rest.length === 0
        ? Config.fail(first.cause)
        : Config.fail(new Schema.SchemaError(new SchemaIssue.Composite(Schema.Unknown.ast, [head, ...tail])))
    })
  )

// Empty counts as unset, as in `npm start`'s preparation, which keeps a key for the embedded database.
// Neither message ever quotes a key.
const singleSecretKey: Config.Config<string | undefined> = setting(
  "SECRET_KEY",
  (raw) => isKeyHex(raw) ? Result.succeed(raw) : Result.fail("expected 64 hexadecimal characters")
).pipe(Config.map((key): string | undefined => key), Config.withDefault(undefined))

const listedSecretKeys: Config.Config<ReadonlyArray<SecretKey> | undefined> = setting("SECRET_KEYS", (raw) => {
  const parsed = parseSecretKeys(raw)
  return parsed._tag === "Keys" ? Result.succeed(parsed.keys) : Result.fail(parsed.message)
}).pipe(Config.map((keys): ReadonlyArray<SecretKey> | undefined => keys), Config.withDefault(undefined))

/**
 * The master keys (DECISIONS §13): SECRET_KEYS (`kid:64hex`, the first seals) and SECRET_KEY (the
 * single key of earlier installations: sealing when alone, opening beside SECRET_KEYS).
 */
const secretKeys: Config.Config<Redacted.Redacted<ReadonlyArray<SecretKey>>> = Config.all([listedSecretKeys, singleSecretKey]).pipe(
  Config.mapEffect(([list, single]) => {
    const ring = secretKeyring(list, single)
    if (ring === undefined) {
      return Effect.fail(
        missingSetting(
          "SECRET_KEY",
          "`npm start` keeps one for its embedded database, or set it (64 hex characters) or SECRET_KEYS (see .env.example)"
        )
      )
    }
    return ring._tag === "Keys" ? Effect.succeed(Redacted.make(ring.keys)) : Effect.fail(invalidSetting(ring.setting, ring.message))
  })
)

/**
 * DATABASE_URL: the processes read it from the environment; only `npm start` (and the admin command
 * line, `npm run migrate`) prepare an embedded database when it is unset.
 */
/**
 * A PostgreSQL URL (`postgres://` or `postgresql://`), kept redacted: it may hold a password, so a
 * refusal never quotes it.
 */
const postgresUrl = (raw: string): Result.Result<Redacted.Redacted<string>, string> => {
  const protocol = protocolOf(raw.trim())
  return protocol === "postgres:" || protocol === "postgresql:"
    ? Result.succeed(Redacted.make(raw.trim()))
    : Result.fail("expected a postgres:// or postgresql:// URL (the value is not shown: it may hold a password)")
}

export const databaseUrlConfig: Config.Config<Redacted.Redacted<string>> = required(
  "DATABASE_URL",
  setting("DATABASE_URL", postgresUrl),
  "`npm start` prepares an embedded database, or set it (see .env.example)"
)

/** DATABASE_TIMEOUT_SECONDS's default: far above the longest legitimate unit (docs/benchmarks.md). */
export const DEFAULT_DATABASE_TIMEOUT_SECONDS = 15

/**
 * DATABASE_TIMEOUT_SECONDS: how long one unit of database work (a statement, or a transaction from
 * BEGIN to COMMIT) may take before the request answers 503 and its connection is given up; read
 * with DATABASE_URL by the database layer (src/sql/Sql.ts).
 */
export const databaseTimeoutConfig: Config.Config<number> = timerSeconds("DATABASE_TIMEOUT_SECONDS").pipe(
  Config.withDefault(DEFAULT_DATABASE_TIMEOUT_SECONDS)
)

/**
 * DATABASE_POOLER: what stands between the service and PostgreSQL at DATABASE_URL
 * (docs/operator.md "Behind PgBouncer"). One setting names the pooler, rather than one switch per
 * consequence, because everything it decides must agree: `none` (the default) sends session
 * settings in each connection's startup packet and keeps statements prepared; `pgbouncer`
 * (transaction pooling, any version: Debian's 1.18 keeps no prepared statement across
 * transactions) turns prepared statements off and sends no startup setting PgBouncer would refuse;
 * `pgbouncer-prepared` (1.21 or later with `max_prepared_statements` above 0, which prepares the
 * protocol's named statements on whichever server connection runs them) keeps them prepared.
 */
export type DatabasePooler = "none" | "pgbouncer" | "pgbouncer-prepared"

const POOLERS: ReadonlyArray<DatabasePooler> = ["none", "pgbouncer", "pgbouncer-prepared"]

export const databasePoolerConfig: Config.Config<DatabasePooler> = setting("DATABASE_POOLER", (raw) => {
  const value = raw.trim().toLowerCase()
  const found = POOLERS.find((p) => p === value)
  return found === undefined ? Result.fail(`expected one of ${POOLERS.join(", ")}; got ${quoted(raw)}`) : Result.succeed(found)
}).pipe(Config.withDefault<DatabasePooler>("none"))

/**
 * DATABASE_DIRECT_URL: where the sessions that need a server session of their own connect (LISTEN,
 * the migrations' advisory lock), straight to PostgreSQL: DATABASE_URL unless set. Required
 * behind a pooler (DATABASE_POOLER), whose transaction pooling would hand each statement of such a
 * session to another server connection.
 */
export const databaseDirectUrlSetting: Config.Config<Option.Option<Redacted.Redacted<string>>> = Config.all([
  // A wrong DATABASE_POOLER is reported by its own setting, once.
  databasePoolerConfig.pipe(Config.orElse(() => Config.succeed<DatabasePooler>("none"))),
  setting("DATABASE_DIRECT_URL", postgresUrl).pipe(Config.option)
]).pipe(
  Config.flatMap(([pooler, direct]) =>
    Option.isSome(direct) || pooler === "none"
      ? Config.succeed(direct)
      : Config.fail(
        missingSetting(
          "DATABASE_DIRECT_URL",
          `DATABASE_POOLER=${pooler} needs the direct address of PostgreSQL for LISTEN and the migrations' lock`
        ).cause
      )
  )
)

/** DATABASE_DIRECT_URL, or DATABASE_URL where it is not set (and no pooler stands between). */
export const databaseDirectUrlConfig: Config.Config<Redacted.Redacted<string>> = databaseDirectUrlSetting.pipe(
  Config.flatMap(Option.match({ onSome: (url) => Config.succeed(url), onNone: () => databaseUrlConfig }))
)

/** DATABASE_IDLE_IN_TRANSACTION_SECONDS's default: well above DATABASE_TIMEOUT_SECONDS's. */
export const DEFAULT_IDLE_IN_TRANSACTION_SECONDS = 60

/**
 * DATABASE_IDLE_IN_TRANSACTION_SECONDS: the server ends a session of the service that stays idle
 * inside a transaction this long (`idle_in_transaction_session_timeout`; 0: never). A transaction
 * left open (a frozen process, a lost client) holds back the events feed and vacuum; the client's
 * own deadline (DATABASE_TIMEOUT_SECONDS) cannot end it when the client is the one that is gone.
 */
export const databaseIdleInTransactionConfig: Config.Config<number> = timerSeconds(
  "DATABASE_IDLE_IN_TRANSACTION_SECONDS",
  "0: no limit"
).pipe(Config.withDefault(DEFAULT_IDLE_IN_TRANSACTION_SECONDS))

/**
 * Settings each valid alone whose values break a rule together, the first such one named:
 * - a nonce forgotten while its request's timestamp is still within the window could be replayed
 *   (an X-Timestamp may lie up to the window behind or ahead of the clock: twice the window);
 * - a webhook delivery whose lease ends before its attempt's timeout could be claimed and sent again
 *   by another daemon while the first still waits on the receiver.
 */
const settingsAtOdds = (
  config: Pick<AppConfigShape, "signatureWindowSeconds" | "nonceRetentionSeconds" | "webhookLeaseSeconds" | "webhookTimeoutMs">
): { readonly setting: string; readonly message: string } | undefined => {
  if (config.nonceRetentionSeconds < 2 * config.signatureWindowSeconds) {
    return {
      setting: "NONCE_RETENTION_SECONDS",
      message: `expected at least twice SIGNATURE_WINDOW_SECONDS (${
        2 * config.signatureWindowSeconds
      }): a nonce forgotten inside the window could be replayed`
    }
  }
  if (config.webhookLeaseSeconds * 1000 <= config.webhookTimeoutMs) {
    return {
      setting: "WEBHOOK_LEASE_SECONDS",
      message:
        `expected more than WEBHOOK_TIMEOUT_MS (${config.webhookTimeoutMs} ms): a delivery could be sent again while its attempt waits`
    }
  }
  return undefined
}

export const appConfig: Config.Config<AppConfigShape> = allReported({
  port: port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("0.0.0.0")),
  timeZone: timeZoneSetting.pipe(Config.withDefault("Asia/Shanghai")),
  secretKeys,
  signatureWindowSeconds: atLeastOne("SIGNATURE_WINDOW_SECONDS").pipe(Config.withDefault(300)),
  nonceRetentionSeconds: atLeastOne("NONCE_RETENTION_SECONDS").pipe(Config.withDefault(900)),
  secretOverlapSeconds: atLeastZero("SECRET_OVERLAP_SECONDS").pipe(Config.withDefault(7 * 24 * 3600)),
  rateLimitRps: positiveNumber("RATE_LIMIT_RPS").pipe(Config.withDefault(50)),
  rateLimitBurst: atLeastOne("RATE_LIMIT_BURST").pipe(Config.withDefault(100)),
  jsonBodyLimitBytes: atLeastOne("JSON_BODY_LIMIT_BYTES").pipe(Config.withDefault(1024 * 1024)),
  cardFileLimitBytes: atLeastOne("CARD_FILE_LIMIT_BYTES").pipe(Config.withDefault(10 * 1024 * 1024)),
  rowCountCompactSeconds: positiveSeconds("ROW_COUNT_COMPACT_SECONDS").pipe(Config.withDefault(5)),
  cardTaskLeaseSeconds: positiveSeconds("CARD_TASK_LEASE_SECONDS").pipe(Config.withDefault(120)),
  cardTaskConcurrency: atLeastOne("CARD_TASK_CONCURRENCY").pipe(Config.withDefault(2)),
  cardTaskPollSeconds: positiveSeconds("CARD_TASK_POLL_SECONDS").pipe(Config.withDefault(5)),
  cardTaskMaxAttempts: atLeastOne("CARD_TASK_MAX_ATTEMPTS").pipe(Config.withDefault(3)),
  followUpLeaseSeconds: positiveSeconds("FOLLOW_UP_LEASE_SECONDS").pipe(Config.withDefault(7200)),
  followUpGenerateIntervalSeconds: positiveSeconds("FOLLOW_UP_GENERATE_INTERVAL_SECONDS").pipe(Config.withDefault(30)),
  webhookConcurrency: atLeastOne("WEBHOOK_CONCURRENCY").pipe(Config.withDefault(32)),
  webhookClientConcurrency: atLeastOne("WEBHOOK_CLIENT_CONCURRENCY").pipe(Config.withDefault(4)),
  webhookTimeoutMs: timerMillis("WEBHOOK_TIMEOUT_MS").pipe(Config.withDefault(15_000)),
  webhookRetrySchedule: setting("WEBHOOK_RETRY_SCHEDULE", (text) => {
    const schedule = parseRetrySchedule(text)
    return schedule === undefined
      ? Result.fail(`expected waits like 5s,5m,30m,2h (units ms, s, m, h, d); got ${quoted(text)}`)
      : Result.succeed(schedule)
  }).pipe(Config.withDefault(parseRetrySchedule(DEFAULT_RETRY_SCHEDULE)!)),
  webhookLeaseSeconds: positiveSeconds("WEBHOOK_LEASE_SECONDS").pipe(Config.withDefault(60)),
  webhookPollSeconds: positiveSeconds("WEBHOOK_POLL_SECONDS").pipe(Config.withDefault(1)),
  webhookResponseLimitBytes: atLeastOne("WEBHOOK_RESPONSE_LIMIT_BYTES").pipe(Config.withDefault(64 * 1024)),
  webhookAllowedNetworks: setting("WEBHOOK_ALLOWED_NETWORKS", parseAllowedNetworks).pipe(
    Config.withDefault<ReadonlyArray<IpNetwork.IpNetwork>>([])
  ),
  eventsRetentionDays: positiveNumber("EVENTS_RETENTION_DAYS").pipe(Config.withDefault(30)),
  eventsPartitionDays: atLeastOne("EVENTS_PARTITION_DAYS").pipe(Config.withDefault(7)),
  partitionsAheadDays: atLeastOne("PARTITIONS_AHEAD_DAYS").pipe(Config.withDefault(7)),
  partitionsIntervalSeconds: positiveSeconds("PARTITIONS_INTERVAL_SECONDS").pipe(Config.withDefault(3600)),
  timeMovesIntervalSeconds: positiveSeconds("TIME_MOVES_INTERVAL_SECONDS").pipe(Config.withDefault(30)),
  idempotencyTtlSeconds: atLeastOne("IDEMPOTENCY_TTL_SECONDS").pipe(Config.withDefault(24 * 3600)),
  idempotencyWaitSeconds: positiveSeconds("IDEMPOTENCY_WAIT_SECONDS").pipe(Config.withDefault(5)),
  shutdownGraceSeconds: setting("SHUTDOWN_GRACE_SECONDS", numberIn((n) => n >= 0, "expected a number of seconds of at least 0"))
    .pipe(Config.withDefault(25)),
  keepAliveSeconds: timerSeconds("HTTP_KEEP_ALIVE_SECONDS").pipe(Config.withDefault(65)),
  // Unset or empty: the daemon serves no port (it needs none to work).
  jobsPort: optionalPort("JOBS_PORT"),
  heartbeatIntervalSeconds: positiveSeconds("DAEMON_HEARTBEAT_SECONDS").pipe(Config.withDefault(5)),
  readinessTimeoutMs: timerMillis("READINESS_TIMEOUT_MS").pipe(Config.withDefault(1000))
}).pipe(Config.mapEffect((config) => {
  const problem = settingsAtOdds(config)
  return problem === undefined ? Effect.succeed(config) : Effect.fail(invalidSetting(problem.setting, problem.message))
}))

/**
 * The platform time zone (DECISIONS §10) on its own, for the code that only formats instants (row
 * schemas): provided with AppConfig, a reference so that it asks nothing of that code's callers.
 */
export const PlatformTimeZone = Context.Reference<string>("App/PlatformTimeZone", { defaultValue: () => "Asia/Shanghai" })

const provideConfig = <E>(config: Effect.Effect<AppConfigShape, E>): Layer.Layer<AppConfig, E> =>
  Layer.unwrap(
    Effect.map(config, (c) => Layer.merge(Layer.succeed(AppConfig, c), Layer.succeed(PlatformTimeZone, c.timeZone)))
  )

export const AppConfigLive = provideConfig(appConfig)

/** Tests: the defaults (with a fixed test master key) and some values replaced. */
export const appConfigWith = (overrides: Partial<AppConfigShape>): Layer.Layer<AppConfig> =>
  provideConfig(
    appConfig.parse(ConfigProvider.fromEnv({ env: { SECRET_KEY: "ab".repeat(32) } })).pipe(
      Effect.orDie,
      Effect.map((c) => ({ ...c, ...overrides }))
    )
  )
