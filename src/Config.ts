// Service configuration from the environment; every window, lease and limit has its documented
// default here (README "Configuration" and .env.example list the same names).
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from "./domain/webhooks.js"

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly timeZone: string
  readonly secretKey: Redacted.Redacted<string>
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
  readonly noncePruneIntervalSeconds: number
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
  /** Events are kept, and served by the events feed, this many days. */
  readonly eventsRetentionDays: number
  readonly eventsPruneIntervalSeconds: number
  /** How often the daemon moves activities and memberships whose time has passed, seconds. */
  readonly timeMovesIntervalSeconds: number
  /** How long a POST's Idempotency-Key and its response are kept, seconds (24 hours). */
  readonly idempotencyTtlSeconds: number
  /** How long a first attempt is presumed alive before a repeat may take over, seconds. */
  readonly idempotencyLeaseSeconds: number
  readonly idempotencyPruneIntervalSeconds: number
  /** On SIGTERM the API finishes the requests in flight for at most this long, seconds. */
  readonly shutdownGraceSeconds: number
  /** The daemon's own port for /healthz, /readyz and /metrics; none: not served. */
  readonly jobsPort: Option.Option<number>
  /** How often a daemon writes its heartbeat row, seconds. */
  readonly heartbeatIntervalSeconds: number
  /** /readyz answers 503 when the database does not answer within this long, milliseconds. */
  readonly readinessTimeoutMs: number
}

export class AppConfig extends Context.Tag("App/Config")<AppConfig, AppConfigShape>() {}

// Nested under its name so that a bad value is reported as SECRET_KEY's; empty counts as unset,
// as in the bootstrap, which generates a key in embedded mode.
const secretKey: Config.Config<Redacted.Redacted<string>> = Config.nested(
  Config.string().pipe(
    Config.mapOrFail((raw) =>
      raw === ""
        ? Either.left(ConfigError.MissingData([], "SECRET_KEY is empty"))
        : /^[0-9a-fA-F]{64}$/.test(raw)
        ? Either.right(Redacted.make(raw))
        : Either.left(ConfigError.InvalidData([], "expected 64 hexadecimal characters"))
    )
  ),
  "SECRET_KEY"
)

const atLeastOne = Config.validate<number>({ message: "Expected a whole number of at least 1", validation: (n) => n >= 1 })

export const appConfig: Config.Config<AppConfigShape> = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  timeZone: Config.string("TZ").pipe(Config.withDefault("Asia/Shanghai")),
  secretKey,
  signatureWindowSeconds: Config.integer("SIGNATURE_WINDOW_SECONDS").pipe(Config.withDefault(300)),
  nonceRetentionSeconds: Config.integer("NONCE_RETENTION_SECONDS").pipe(Config.withDefault(900)),
  secretOverlapSeconds: Config.integer("SECRET_OVERLAP_SECONDS").pipe(Config.withDefault(7 * 24 * 3600)),
  rateLimitRps: Config.number("RATE_LIMIT_RPS").pipe(Config.withDefault(50)),
  rateLimitBurst: Config.integer("RATE_LIMIT_BURST").pipe(Config.withDefault(100)),
  jsonBodyLimitBytes: Config.integer("JSON_BODY_LIMIT_BYTES").pipe(Config.withDefault(1024 * 1024)),
  cardFileLimitBytes: Config.integer("CARD_FILE_LIMIT_BYTES").pipe(Config.withDefault(10 * 1024 * 1024)),
  noncePruneIntervalSeconds: Config.integer("NONCE_PRUNE_INTERVAL_SECONDS").pipe(Config.withDefault(60)),
  rowCountCompactSeconds: Config.number("ROW_COUNT_COMPACT_SECONDS").pipe(Config.withDefault(5)),
  cardTaskLeaseSeconds: Config.number("CARD_TASK_LEASE_SECONDS").pipe(Config.withDefault(120)),
  cardTaskConcurrency: Config.integer("CARD_TASK_CONCURRENCY").pipe(Config.withDefault(2)),
  cardTaskPollSeconds: Config.number("CARD_TASK_POLL_SECONDS").pipe(Config.withDefault(5)),
  cardTaskMaxAttempts: Config.integer("CARD_TASK_MAX_ATTEMPTS").pipe(Config.withDefault(3)),
  followUpLeaseSeconds: Config.number("FOLLOW_UP_LEASE_SECONDS").pipe(
    Config.validate({ message: "Expected a number of seconds above 0", validation: (n) => n > 0 }),
    Config.withDefault(7200)
  ),
  followUpGenerateIntervalSeconds: Config.number("FOLLOW_UP_GENERATE_INTERVAL_SECONDS").pipe(
    Config.validate({ message: "Expected a number of seconds above 0", validation: (n) => n > 0 }),
    Config.withDefault(30)
  ),
  webhookConcurrency: Config.integer("WEBHOOK_CONCURRENCY").pipe(atLeastOne, Config.withDefault(32)),
  webhookClientConcurrency: Config.integer("WEBHOOK_CLIENT_CONCURRENCY").pipe(atLeastOne, Config.withDefault(4)),
  webhookTimeoutMs: Config.integer("WEBHOOK_TIMEOUT_MS").pipe(atLeastOne, Config.withDefault(15_000)),
  webhookRetrySchedule: Config.string("WEBHOOK_RETRY_SCHEDULE").pipe(
    Config.mapOrFail((text) => {
      const schedule = parseRetrySchedule(text)
      return schedule === undefined
        ? Either.left(ConfigError.InvalidData([], "Expected waits like 5s,5m,30m,2h (units ms, s, m, h, d)"))
        : Either.right(schedule)
    }),
    Config.withDefault(parseRetrySchedule(DEFAULT_RETRY_SCHEDULE)!)
  ),
  webhookLeaseSeconds: Config.number("WEBHOOK_LEASE_SECONDS").pipe(Config.withDefault(60)),
  webhookPollSeconds: Config.number("WEBHOOK_POLL_SECONDS").pipe(Config.withDefault(1)),
  webhookResponseLimitBytes: Config.integer("WEBHOOK_RESPONSE_LIMIT_BYTES").pipe(atLeastOne, Config.withDefault(64 * 1024)),
  eventsRetentionDays: Config.number("EVENTS_RETENTION_DAYS").pipe(Config.withDefault(30)),
  eventsPruneIntervalSeconds: Config.number("EVENTS_PRUNE_INTERVAL_SECONDS").pipe(Config.withDefault(3600)),
  timeMovesIntervalSeconds: Config.number("TIME_MOVES_INTERVAL_SECONDS").pipe(
    Config.validate({ message: "Expected a number of seconds above 0", validation: (n) => n > 0 }),
    Config.withDefault(30)
  ),
  idempotencyTtlSeconds: Config.integer("IDEMPOTENCY_TTL_SECONDS").pipe(Config.withDefault(24 * 3600)),
  idempotencyLeaseSeconds: Config.integer("IDEMPOTENCY_LEASE_SECONDS").pipe(Config.withDefault(120)),
  idempotencyPruneIntervalSeconds: Config.integer("IDEMPOTENCY_PRUNE_INTERVAL_SECONDS").pipe(Config.withDefault(300)),
  shutdownGraceSeconds: Config.number("SHUTDOWN_GRACE_SECONDS").pipe(
    Config.validate({ message: "Expected a number of seconds of at least 0", validation: (n) => n >= 0 }),
    Config.withDefault(25)
  ),
  // Unset or empty: the daemon serves no port (it needs none to work).
  jobsPort: Config.nested(
    Config.string().pipe(
      Config.mapOrFail((raw) => {
        if (raw.trim() === "") return Either.right(Option.none<number>())
        const port = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN
        return port >= 1 && port <= 65535
          ? Either.right(Option.some(port))
          : Either.left(ConfigError.InvalidData([], `expected a port number (1-65535); got ${JSON.stringify(raw)}`))
      })
    ),
    "JOBS_PORT"
  ).pipe(Config.withDefault(Option.none<number>())),
  heartbeatIntervalSeconds: Config.number("DAEMON_HEARTBEAT_SECONDS").pipe(
    Config.validate({ message: "Expected a number of seconds above 0", validation: (n) => n > 0 }),
    Config.withDefault(5)
  ),
  readinessTimeoutMs: Config.integer("READINESS_TIMEOUT_MS").pipe(atLeastOne, Config.withDefault(1000))
})

/**
 * The platform time zone (DECISIONS §10) on its own, for the code that only formats instants (row
 * schemas): provided with AppConfig, a reference so that it asks nothing of that code's callers.
 */
export class PlatformTimeZone extends Context.Reference<PlatformTimeZone>()("App/PlatformTimeZone", {
  defaultValue: () => "Asia/Shanghai"
}) {}

const provideConfig = <E>(config: Effect.Effect<AppConfigShape, E>): Layer.Layer<AppConfig, E> =>
  Layer.unwrapEffect(
    Effect.map(config, (c) => Layer.merge(Layer.succeed(AppConfig, c), Layer.succeed(PlatformTimeZone, c.timeZone)))
  )

export const AppConfigLive = provideConfig(appConfig)

/** Tests: the defaults (with a fixed test master key) and some values replaced. */
export const appConfigWith = (overrides: Partial<AppConfigShape>): Layer.Layer<AppConfig> =>
  provideConfig(
    appConfig.pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["SECRET_KEY", "ab".repeat(32)]]))),
      Effect.orDie,
      Effect.map((c) => ({ ...c, ...overrides }))
    )
  )
