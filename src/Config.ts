// Service configuration from the environment; every window, lease and limit has its documented
// default here (README "Configuration" and .env.example list the same names).
import { Config, ConfigError, ConfigProvider, Context, Effect, Either, Layer, Redacted } from "effect"

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
  /** How long a daemon holds a claimed card task before another may take it, seconds. */
  readonly cardTaskLeaseSeconds: number
  /** Card tasks processed at once by one daemon. */
  readonly cardTaskConcurrency: number
  /** Polling backstop for new card tasks (LISTEN/NOTIFY wakes the runner first), seconds. */
  readonly cardTaskPollSeconds: number
  /** Claims of one task before it is failed (a daemon died on it each time). */
  readonly cardTaskMaxAttempts: number
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
  cardTaskLeaseSeconds: Config.number("CARD_TASK_LEASE_SECONDS").pipe(Config.withDefault(120)),
  cardTaskConcurrency: Config.integer("CARD_TASK_CONCURRENCY").pipe(Config.withDefault(2)),
  cardTaskPollSeconds: Config.number("CARD_TASK_POLL_SECONDS").pipe(Config.withDefault(5)),
  cardTaskMaxAttempts: Config.integer("CARD_TASK_MAX_ATTEMPTS").pipe(Config.withDefault(3))
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
