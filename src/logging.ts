// Structured JSON logs on stderr at LOG_LEVEL (default Info); stdout stays free for admin output.
import { Config, Effect, Layer, Logger, LogLevel } from "effect"

const stderrJson = Logger.map(Logger.jsonLogger, (line) => {
  process.stderr.write(line + "\n")
})

export const LoggingLive = Layer.unwrapEffect(
  Effect.map(
    Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info)),
    (level) => Layer.merge(Logger.replace(Logger.defaultLogger, stderrJson), Logger.minimumLogLevel(level))
  )
).pipe(Layer.orDie)
