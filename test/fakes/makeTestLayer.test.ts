// makeTestLayer: a layer of only the members a test gives; any other member dies loudly, naming
// the service and the member, whether it is called (a method) or yielded (an effect).
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Result from "effect/Result"

import { ActivitiesRepo } from "../../src/repos/ActivitiesRepo.js"
import { UsersRepo } from "../../src/repos/UsersRepo.js"
import { makeTestLayer } from "./makeTestLayer.js"

const defectMessage = <A, E>(exit: Exit.Exit<A, E>): string =>
  Exit.isFailure(exit)
    ? Result.match(Cause.findDefect(exit.cause), { onFailure: () => "no defect", onSuccess: (d) => String(d) })
    : "succeeded"

describe("makeTestLayer", () => {
  it.effect("a member the test gives is the one used", () =>
    Effect.gen(function*() {
      const users = yield* UsersRepo
      expect(yield* users.exists(7)).toBe(true)
      expect(yield* users.exists(8)).toBe(false)
    }).pipe(Effect.provide(makeTestLayer(UsersRepo)({ exists: (id) => Effect.succeed(id === 7) }))))

  it.effect("a method the test did not give dies when called, naming the service and the method", () =>
    Effect.gen(function*() {
      const users = yield* UsersRepo
      const exit = yield* Effect.exit(users.insert({ name: "x", phone: null, work_wechat_id: null }))
      expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
      expect(defectMessage(exit)).toContain(`Users/Repo: "insert" is not implemented in this test layer`)
    }).pipe(Effect.provide(makeTestLayer(UsersRepo)({}))))

  it.effect("an effect member the test did not give dies when yielded, naming it", () =>
    Effect.gen(function*() {
      const repo = yield* ActivitiesRepo
      const exit = yield* Effect.exit(repo.startDue)
      expect(defectMessage(exit)).toContain(`Activities/Repo: "startDue" is not implemented`)
      // Asking again gives the same loud answer.
      expect(defectMessage(yield* Effect.exit(repo.startDue))).toContain(`"startDue"`)
    }).pipe(Effect.provide(makeTestLayer(ActivitiesRepo)({ findById: () => Effect.succeed(Option.none()) }))))
})
