// Service configuration from the environment; every window, lease and limit has its documented
// default here (README "Configuration" and .env.example list the same names).
import { Config, ConfigProvider, Context, Effect, Layer, Redacted } from "effect"

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
}

export class AppConfig extends Context.Tag("App/Config")<AppConfig, AppConfigShape>() {}

const secretKey = Config.redacted("SECRET_KEY").pipe(
  Config.validate({
    message: "SECRET_KEY must be 64 hexadecimal characters",
    validation: (r) => /^[0-9a-fA-F]{64}$/.test(Redacted.value(r))
  })
)

export const appConfig: Config.Config<AppConfigShape> = Config.all({
  port: Config.integer("PORT").pipe(Config.withDefault(8080)),
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
  noncePruneIntervalSeconds: Config.integer("NONCE_PRUNE_INTERVAL_SECONDS").pipe(Config.withDefault(60))
})

export const AppConfigLive = Layer.effect(AppConfig, appConfig)

/** Tests: the defaults (with a fixed test master key) and some values replaced. */
export const appConfigWith = (overrides: Partial<AppConfigShape>): Layer.Layer<AppConfig> =>
  Layer.effect(
    AppConfig,
    appConfig.pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["SECRET_KEY", "ab".repeat(32)]]))),
      Effect.orDie,
      Effect.map((c) => ({ ...c, ...overrides }))
    )
  )
