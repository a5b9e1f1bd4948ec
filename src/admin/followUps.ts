// Operator commands for follow-up plans and task generation (DECISIONS §3, §7):
// `follow-up plans create|list` and `follow-up generate [--date D]`.
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { TaskType } from "../../schema/FollowUps.js"
import { isDate, parseDays } from "../domain/followUp.js"
import { FollowUps } from "../services/FollowUps.js"

export class FollowUpCommandError extends Data.TaggedError("FollowUpCommandError")<{ readonly message: string }> {}

export const FOLLOW_UP_USAGE = `  follow-up plans create --guest ID --days 1,3,7 --type recommend|revisit|reactivate [--start YYYY-MM-DD]
  follow-up plans list [--guest ID]
  follow-up generate [--date YYYY-MM-DD]`

type Flags = ReadonlyMap<string, string | true>

const refuse = (message: string) => Effect.fail(new FollowUpCommandError({ message: `${message}\n\nusage:\n${FOLLOW_UP_USAGE}` }))

const text = (flags: Flags, name: string) => {
  const v = flags.get(name)
  return typeof v === "string" ? Effect.succeed(v) : refuse(`--${name} VALUE is required`)
}

const optionalText = (flags: Flags, name: string) => {
  const v = flags.get(name)
  return v === undefined ? Effect.succeed(undefined) : typeof v === "string" ? Effect.succeed(v) : refuse(`--${name} needs a value`)
}

const id = (value: string, name: string) =>
  /^\d{1,10}$/.test(value) && Number(value) >= 1 && Number(value) <= 2_147_483_647
    ? Effect.succeed(Number(value))
    : refuse(`--${name} must be an id (a positive integer), got ${value}`)

const date = (value: string | undefined, name: string) =>
  value === undefined || isDate(value) ? Effect.succeed(value) : refuse(`--${name} must be a date YYYY-MM-DD, got ${value}`)

/** `follow-up plans create|list`; create prints `{id, start_date, days, tasks_created}` (the tasks already due). */
export const followUpPlansCommand = (sub: string | undefined, flags: Flags) =>
  Effect.gen(function*() {
    const followUps = yield* FollowUps
    switch (sub) {
      case "create": {
        const guestId = yield* Effect.flatMap(text(flags, "guest"), (v) => id(v, "guest"))
        const days = parseDays(yield* text(flags, "days"))
        if (days._tag === "Left") return yield* refuse(`--days: ${days.message}`)
        const type = yield* text(flags, "type")
        if (!Schema.is(TaskType)(type)) return yield* refuse(`--type must be recommend, revisit or reactivate, got ${type}`)
        const startDate = yield* Effect.flatMap(optionalText(flags, "start"), (v) => date(v, "start"))
        return yield* followUps.createPlan({ guestId, taskType: type, days: days.days, startDate })
      }
      case "list": {
        const guest = yield* optionalText(flags, "guest")
        return yield* followUps.listPlans(guest === undefined ? undefined : yield* id(guest, "guest"))
      }
      default:
        return yield* refuse(sub === undefined ? "follow-up plans needs create or list" : `unknown command: follow-up plans ${sub}`)
    }
  })

/** `follow-up generate [--date D]`: prints `{date, created}` (and `plans` visited without --date). */
export const generateFollowUpTasks = (flags: Flags) =>
  Effect.gen(function*() {
    const on = yield* Effect.flatMap(optionalText(flags, "date"), (v) => date(v, "date"))
    return yield* Effect.flatMap(FollowUps, (f) => f.generate(on))
  })
