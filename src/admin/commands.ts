// The operator command line of DECISIONS §3 on Effect's CLI module: one command tree, each leaf
// answering one JSON-able value. `runAdmin` runs it on an argv in-process (tests); main.ts runs it
// with the database layer, prints the answer on stdout and turns failures into exit codes.
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as CliConfig from "effect/cli/CliConfig"
import * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
import * as Command from "effect/cli/Command"
import * as GlobalFlag from "effect/cli/GlobalFlag"
import type * as HelpDoc from "effect/cli/HelpDoc"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

import { AREA_COMMANDS } from "../areas.js"
import { InvalidInput } from "../domain/errors.js"
import { describeConfigError } from "../startup.js"
import { AdminRuntime, type AdminServices, type AdminSetupError, describeRefusal, UsageError } from "./cli.js"
import { clientsCommand } from "./clients.js"
import { keysCommand } from "./keys.js"
import { daemonsCommand, statusCommand } from "./status.js"
import { webhooksCommand } from "./webhooks.js"

export { AdminSetupError, UsageError } from "./cli.js"

const VERSION = "0.1.0"

/**
 * Every command: `admin <group> <command> ...`: the platform's own (clients, their webhooks, the
 * master keys, status), and each area's from its registration (src/areas.ts).
 */
export const adminCommand = Command.make("admin").pipe(
  Command.withDescription("The operator command line: prints one JSON value on stdout"),
  Command.withSubcommands([
    clientsCommand,
    webhooksCommand,
    keysCommand,
    ...AREA_COMMANDS,
    statusCommand,
    daemonsCommand
  ])
)

/** What a run came to: a command's answer, or text the operator asked for (--help, --version). */
export type AdminOutcome =
  | { readonly _tag: "Answer"; readonly value: unknown }
  | { readonly _tag: "Shown"; readonly text: string }

const formatter = CliOutput.defaultFormatter({ colors: false })

/** --help, --version and --log-level; no wizard or shell completions for an operator's tool. */
const cliConfig = CliConfig.make({ builtIns: [GlobalFlag.Help, GlobalFlag.Version, GlobalFlag.LogLevel] })

const usageMessage = (
  errors: ReadonlyArray<{ readonly message: string }>,
  commandPath: ReadonlyArray<string>,
  help: HelpDoc.HelpDoc | undefined
) => {
  const what = errors.length > 0 ? errors.map((e) => e.message).join("\n") : `${commandPath.join(" ")}: a command is required`
  return help === undefined ? what : `${what}\n\n${formatter.formatHelpDoc(help)}`
}

/**
 * Runs the admin command line on `argv`, its commands' effects given their services by `run`.
 * Usage errors (unknown commands, missing or invalid flags and arguments) fail with UsageError,
 * whose message ends with the help of the command concerned.
 */
export const runCommand = Effect.fnUntraced(function*(
  argv: ReadonlyArray<string>,
  run: <A, E>(effect: Effect.Effect<A, E, AdminServices>) => Effect.Effect<A, E | AdminSetupError>
) {
  let answer: Option.Option<unknown> = Option.none()
  let shown = ""
  let help: HelpDoc.HelpDoc | undefined
  const presenter: CliOutput.Presenter = {
    present: (event) =>
      Effect.sync(() => {
        switch (event._tag) {
          case "Help":
            if (event.reason === "Requested") shown = formatter.formatHelpDoc(event.helpDoc)
            else help = event.helpDoc
            return
          case "InvalidInvocation":
            help = event.helpDoc
            return
          case "Version":
            shown = formatter.formatVersion(event.name, event.version)
            return
        }
      })
  }
  yield* Command.runWith(adminCommand, { version: VERSION, renderErrors: false })(argv).pipe(
    Effect.provideService(AdminRuntime, {
      run,
      answer: (value) =>
        Effect.sync(() => {
          answer = Option.some(value)
        })
    }),
    Effect.provideService(CliOutput.Presenter, presenter),
    Effect.provideService(CliOutput.Formatter, formatter),
    Effect.provideService(CliConfig.CliConfig, cliConfig),
    Effect.provide(NodeServices.layer),
    Effect.catch((e) =>
      Effect.fail(e instanceof CliError.ShowHelp ? new UsageError({ message: usageMessage(e.errors, e.commandPath, help) }) : e)
    )
  )
  return Option.match(answer, {
    onNone: (): AdminOutcome => ({ _tag: "Shown", text: shown }),
    onSome: (value): AdminOutcome => ({ _tag: "Answer", value })
  })
})

/**
 * The admin command line on `argv` in-process, over the services at hand (tests): the command's
 * answer (or the help text asked for).
 */
export const runAdmin = Effect.fnUntraced(function*(argv: ReadonlyArray<string>) {
  const services = yield* Effect.context<AdminServices>()
  const outcome = yield* runCommand(argv, (effect) => Effect.provideContext(effect, services))
  return outcome._tag === "Answer" ? outcome.value : outcome.text
})

/** The message an operator sees for a failed command (a refused value: each field at fault). */
export const describeFailure = (error: unknown): string => {
  if (error instanceof InvalidInput) return describeRefusal(error)
  if (error instanceof Config.ConfigError) return describeConfigError(error)
  if (typeof error === "object" && error !== null && "message" in error) return String(error.message)
  return String(error)
}
