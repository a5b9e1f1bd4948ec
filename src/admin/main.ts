// `npm run admin -- <command>`: prints one JSON value on stdout; logs and errors go to stderr,
// and a bad command exits non-zero.
import { bootstrapEnv } from "../bootstrap.js"

const argv = process.argv.slice(2)
const { USAGE, runAdmin, describeFailure } = await import("./commands.js")
if (argv.length === 0 || argv[0] === "--help" || argv[0] === "help") {
  process.stderr.write(USAGE + "\n")
  process.exit(argv.length === 0 ? 2 : 0)
}

await bootstrapEnv()
const { Effect, Exit, Cause, Option, Logger, LogLevel } = await import("effect")
const { AppLive } = await import("../Layers.js")

const exit = await Effect.runPromiseExit(
  runAdmin(argv).pipe(Effect.provide(AppLive), Logger.withMinimumLogLevel(LogLevel.Warning))
)
if (Exit.isSuccess(exit)) {
  process.stdout.write(JSON.stringify(exit.value, null, 2) + "\n")
  process.exit(0)
} else {
  const failure = Cause.failureOption(exit.cause)
  process.stderr.write(
    (Option.isSome(failure) ? describeFailure(failure.value) : `internal error: ${Cause.pretty(exit.cause)}`) + "\n"
  )
  process.exit(Option.isSome(failure) ? 2 : 1)
}
