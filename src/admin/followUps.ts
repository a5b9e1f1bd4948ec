// Operator commands for follow-up plans and task generation (DECISIONS §3, §7):
// `follow-up plans create|list` and `follow-up generate [--date D]`.
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

import { TaskType } from "../../schema/FollowUps.js"
import { isDate, parseDays } from "../domain/followUp.js"
import * as Scopes from "../domain/scope.js"
import { FollowUps } from "../services/FollowUps.js"
import { answering } from "./cli.js"

const MAX_ID = 2_147_483_647

/** A guest id (a positive 32-bit integer). */
const guestFlag = Flag.Int("guest").pipe(
  Flag.filter((n) => n >= 1 && n <= MAX_ID, () => "an id (a positive integer)"),
  Flag.withDescription("the guest's id")
)

/** A calendar date YYYY-MM-DD. */
const dateFlag = (name: string) => Flag.String(name).pipe(Flag.filter(isDate, () => "a date YYYY-MM-DD"))

const days = Flag.String("days").pipe(
  Flag.filterMap((text) => {
    const parsed = parseDays(text)
    return parsed._tag === "Right" ? Option.some(parsed.days) : Option.none()
  }, (text) => {
    const parsed = parseDays(text)
    return parsed._tag === "Left" ? parsed.message : "day numbers separated by commas"
  }),
  Flag.withDescription("the plan's days, counted from its start: 1,3,7")
)

/** Prints `{id, start_date, days, tasks_created}` (the tasks already due). */
const createPlan = answering(
  "create",
  {
    guest: guestFlag,
    days,
    type: Flag.Literals("type", TaskType.literals).pipe(Flag.withDescription("the tasks' type")),
    start: dateFlag("start").pipe(Flag.withDescription("day 0 of the plan (default: today)"), Flag.optional)
  },
  ({ days, guest, start, type }) =>
    Effect.flatMap(
      FollowUps,
      (f) => f.createPlan(Scopes.all, { guestId: guest, taskType: type, days, startDate: Option.getOrUndefined(start) })
    )
)
  .pipe(Command.withDescription("Create a follow-up plan for a guest"))

const listPlans = answering(
  "list",
  { guest: guestFlag.pipe(Flag.optional) },
  ({ guest }) => Effect.flatMap(FollowUps, (f) => f.listPlans(Scopes.all, Option.getOrUndefined(guest)))
).pipe(
  Command.withDescription("Follow-up plans, of one guest or all")
)

/** Prints `{date, created}` (and `plans` visited without --date). */
const generate = answering("generate", {
  date: dateFlag("date").pipe(Flag.withDescription("that date's tasks exactly (default: what is due now)"), Flag.optional)
}, ({ date }) => Effect.flatMap(FollowUps, (f) => f.generate(Option.getOrUndefined(date)))).pipe(
  Command.withDescription("Create the follow-up tasks that are due")
)

export const followUpCommand = Command.make("follow-up").pipe(
  Command.withDescription("Follow-up plans and tasks"),
  Command.withSubcommands([
    Command.make("plans").pipe(Command.withDescription("Follow-up plans"), Command.withSubcommands([createPlan, listPlans])),
    generate
  ])
)
