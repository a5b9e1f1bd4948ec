// What every admin command shares: the services it runs on, its answer (one JSON-able value,
// printed by main.ts on stdout or returned by runAdmin), its usage failure, the wording of a refused
// value in terms of the flags that gave it, and the parameters several commands take.
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"

import { InvalidInput } from "../domain/errors.js"
import type { Activities } from "../services/Activities.js"
import type { Clients } from "../services/Clients.js"
import type { Companies } from "../services/Companies.js"
import type { FollowUps } from "../services/FollowUps.js"
import type { ImageBlacklist } from "../services/ImageBlacklist.js"
import type { Matchmakers } from "../services/Matchmakers.js"
import type { Memberships } from "../services/Memberships.js"
import type { SealedSecrets } from "../services/SealedSecrets.js"
import type { Users } from "../services/Users.js"
import type { Webhooks } from "../services/Webhooks.js"

/** A command the operator typed wrongly; the message says what to type instead. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

export const usage = (message: string): Effect.Effect<never, UsageError> => Effect.fail(new UsageError({ message }))

/** A refused value's issues, each field named as the operator gave it (`flags`: `name` → `--name`). */
export const describeRefusal = (error: InvalidInput, flags: Readonly<Record<string, string>> = {}): string =>
  error.issues === undefined || error.issues.length === 0
    ? error.message
    : error.issues.map((issue) => `${flags[issue.path] ?? issue.path}: ${issue.message}`).join("; ")

/**
 * Services refuse values by their names (`InvalidInput` at `rps`); a command words the refusal in
 * terms of the flags it took them from (`--rps: must be > 0`), as a usage error.
 */
export const withFlags = (flags: Readonly<Record<string, string>>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (e): e is E & InvalidInput => e instanceof InvalidInput,
    (e) => usage(describeRefusal(e, flags))
  )

/** What the commands run on: the platform's services over its database. */
export type AdminServices =
  | Activities
  | Clients
  | Companies
  | FollowUps
  | ImageBlacklist
  | Matchmakers
  | Memberships
  | SealedSecrets
  | Users
  | Webhooks
  | SqlClient.SqlClient

/** The services could not be had: no database, an old schema, a bad setting. */
export class AdminSetupError extends Data.TaggedError("AdminSetupError")<{ readonly message: string }> {}

/**
 * How a command runs: `run` gives its effect the services (built only when a command runs, not
 * for --help or a usage error), `answer` takes its one value (main.ts prints it, runAdmin returns it).
 */
export class AdminRuntime extends Context.Service<AdminRuntime, {
  readonly run: <A, E>(effect: Effect.Effect<A, E, AdminServices>) => Effect.Effect<A, E | AdminSetupError>
  readonly answer: (value: unknown) => Effect.Effect<void>
}>()("Admin/Runtime") {}

/** A command that answers one value: `run` computes it from the parsed input. */
export const answering = <const Name extends string, const Config extends Command.Command.Config, A, E>(
  name: Name,
  config: Config,
  run: (input: Command.Command.Config.Infer<Config>) => Effect.Effect<A, E, AdminServices>
) => Command.make(name, config, (input) => AdminRuntime.use((runtime) => Effect.flatMap(runtime.run(run(input)), runtime.answer)))

/** A database id given as a positional argument (ID, by default). */
export const idArgument = (name = "ID") => Argument.Int(name).pipe(Argument.filter((n) => n >= 1, () => "a positive integer"))

/** A flag that takes a whole number above zero. */
export const positiveIntFlag = (name: string) => Flag.Int(name).pipe(Flag.filter((n) => n >= 1, () => "a positive integer"))
