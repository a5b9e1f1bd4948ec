// Platform users, managed by the operator (DECISIONS §3): they count toward a work account's
// user_count through users.work_wechat_id.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { InvalidInput, NotFound } from "../domain/errors.js"
import { Transaction } from "../repos/sqlHelpers.js"
import { UsersRepo } from "../repos/UsersRepo.js"
import { WorkWechatsRepo } from "../repos/WorkWechatsRepo.js"
import { ChangeEvents } from "./ChangeEvents.js"

export class Users extends Context.Service<Users>()("Users/Service", {
  make: Effect.gen(function*() {
    const repo = yield* UsersRepo
    const accounts = yield* WorkWechatsRepo
    const events = yield* ChangeEvents
    const tx = yield* Transaction

    /** The accounts of these ids (none for null), distinct, in id order. */
    const accountsOf = (ids: ReadonlyArray<number | null>) => [...new Set(ids.filter((id) => id !== null))].sort((a, b) => a - b)

    /** A work account's user_count moved: its work_wechat.updated event (none for no account). */
    const countMoved = (ids: ReadonlyArray<number | null>) => events.updated("work_wechat.updated", accountsOf(ids), ["user_count"])

    const checkAccount = (id: number | null) =>
      id === null
        ? Effect.void
        : Effect.flatMap(accounts.liveIds([id]), (live) => live.has(id) ? Effect.void : Effect.fail(NotFound.of("work_wechat", id)))

    type NewUser = { name: string; phone: string | null; work_wechat_id: number | null }

    // Defined once per layer, not per call (docs/contributor.md, "Generators are made once").
    const inserted = Effect.fnUntraced(function*(input: NewUser) {
      yield* accounts.lockCounted(accountsOf([input.work_wechat_id]))
      const user = yield* repo.insert(input)
      yield* countMoved([input.work_wechat_id])
      return user
    })

    const create = Effect.fnUntraced(function*(input: NewUser) {
      if (input.name.trim() === "") return yield* InvalidInput.at("name", "must not be empty")
      yield* checkAccount(input.work_wechat_id)
      const user = yield* tx.run(inserted(input))
      return { id: user.id }
    })

    const workWechatSet = Effect.fnUntraced(function*(id: number, workWechatId: number | null) {
      const before = yield* repo.workWechatOf(id)
      if (before !== workWechatId) yield* accounts.lockCounted(accountsOf([before, workWechatId]))
      const updated = yield* repo.setWorkWechat(id, workWechatId)
      if (updated._tag === "None") return yield* NotFound.of("user", id)
      if (before !== workWechatId) yield* countMoved([before, workWechatId])
      return updated.value
    })

    const setWorkWechat = Effect.fnUntraced(function*(id: number, workWechatId: number | null) {
      yield* checkAccount(workWechatId)
      return yield* tx.run(workWechatSet(id, workWechatId))
    })

    return { create, setWorkWechat } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Users, Users.make)
  static readonly layer = Users.layerWithoutDependencies.pipe(
    Layer.provide([UsersRepo.layer, WorkWechatsRepo.layer, ChangeEvents.layer, Transaction.layer])
  )
}
