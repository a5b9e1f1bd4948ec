// Operator commands for platform users (DECISIONS §3): `users create|update`.
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

import { Users } from "../services/Users.js"
import { answering, idArgument, withFlags } from "./cli.js"

/** A Work WeChat account id (a positive integer). */
const workWechatId = Flag.Int("work-wechat-id").pipe(Flag.filter((n) => n >= 1, () => "a positive integer"))

export const usersCommand = Command.make("users").pipe(
  Command.withDescription("Platform users"),
  Command.withSubcommands([
    answering(
      "create",
      {
        name: Flag.String("name"),
        phone: Flag.String("phone").pipe(Flag.optional),
        workWechatId: workWechatId.pipe(Flag.withDescription("the user's Work WeChat account"), Flag.optional)
      },
      ({ name, phone, workWechatId }) =>
        Effect.flatMap(Users, (u) => u.create({ name, phone: Option.getOrNull(phone), work_wechat_id: Option.getOrNull(workWechatId) }))
          .pipe(withFlags({ name: "--name" }))
    ).pipe(
      Command.withDescription("Create a user")
    ),
    answering("update", {
      id: idArgument(),
      workWechatId: Flag.String("work-wechat-id").pipe(
        Flag.filterMap(
          (s) => (s === "none" ? Option.some(null) : /^\d+$/.test(s) && Number(s) > 0 ? Option.some(Number(s)) : Option.none()),
          () => "a positive integer, or none"
        ),
        Flag.withDescription("the user's Work WeChat account, or none")
      )
    }, ({ id, workWechatId }) => Effect.flatMap(Users, (u) => u.setWorkWechat(id, workWechatId))).pipe(
      Command.withDescription("Link a user to a Work WeChat account (or unlink: none)")
    )
  ])
)
