// `npm run -s admin -- <command>`: prints one JSON value on stdout; logs and errors go to stderr
// as JSON lines, and a bad command exits non-zero.
import { bootstrapEnv } from "../bootstrap.js"

const argv = process.argv.slice(2)
const { USAGE, runAdmin, describeFailure } = await import("./commands.js")
if (argv.length === 0 || argv[0] === "--help" || argv[0] === "help") {
  process.stderr.write(USAGE + "\n")
  process.exit(argv.length === 0 ? 2 : 0)
}

await bootstrapEnv()
const Effect = await import("effect/Effect")
const Exit = await import("effect/Exit")
const Cause = await import("effect/Cause")
const Option = await import("effect/Option")
const Layer = await import("effect/Layer")
const Logger = await import("effect/Logger")
const LogLevel = await import("effect/LogLevel")
const { AppLive } = await import("../Layers.js")
const { StderrJsonLive, writeLog } = await import("../logging.js")

// Only warnings and worse: stdout is the command's answer, and stderr stays quiet for scripts.
const exit = await Effect.runPromiseExit(
  runAdmin(argv).pipe(Effect.provide(Layer.merge(AppLive, StderrJsonLive)), Logger.withMinimumLogLevel(LogLevel.Warning))
)
if (Exit.isSuccess(exit)) {
  process.stdout.write(JSON.stringify(exit.value, null, 2) + "\n")
  process.exit(0)
} else {
  const failure = Cause.failureOption(exit.cause)
  writeLog(
    LogLevel.Error,
    Option.isSome(failure) ? describeFailure(failure.value) : `internal error: ${Cause.pretty(exit.cause)}`,
    { source: "admin" },
    { always: true }
  )
  process.exit(Option.isSome(failure) ? 2 : 1)
}
