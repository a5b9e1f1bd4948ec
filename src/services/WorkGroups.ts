// WeChat group use cases (SPEC §4.4, DECISIONS §5): groups, their matchmaker and work-account
// members, and an operation log entry for every change, in the same transaction.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import type { PageParams } from "../../schema/Common.js"
import {
  GROUP_ACCOUNT_PAGE,
  GROUP_LOG_PAGE,
  GROUP_MATCHMAKER_PAGE,
  GROUP_PAGE,
  type WorkGroupCreate,
  type WorkGroupUpdate
} from "../../schema/WorkGroups.js"
import { AlreadyMember, GroupHasMembers, NotFound } from "../domain/errors.js"
import type { LogEntry } from "../domain/operationLog.js"
import { Transaction } from "../repos/sqlHelpers.js"
import { type MemberKind, WorkGroupsRepo } from "../repos/WorkGroupsRepo.js"
import { ChangeEvents } from "./ChangeEvents.js"
import { syncWindow } from "./common.js"
import { loggedRecordCases } from "./loggedRecords.js"

const resourceOf = (kind: MemberKind) => (kind === "matchmaker" ? "matchmaker" as const : "work_wechat" as const)

export class WorkGroups extends Context.Service<WorkGroups>()("WorkGroups/Service", {
  make: Effect.gen(function*() {
    const repo = yield* WorkGroupsRepo
    const tx = yield* Transaction
    const events = yield* ChangeEvents
    const records = loggedRecordCases({
      resource: "work_group",
      repo,
      tx,
      events,
      path: "work-groups",
      limits: { list: GROUP_PAGE, logs: GROUP_LOG_PAGE },
      removal: {
        held: repo.memberCounts,
        refusal: ({ accounts, matchmakers }) =>
          matchmakers > 0 || accounts > 0
            ? new GroupHasMembers({
              message: `the group still has ${matchmakers} matchmaker(s) and ${accounts} work account(s); remove them first`
            })
            : undefined
      }
    })
    const { get, locked } = records

    const create = (input: WorkGroupCreate) => records.create({ ...input, group_no: input.group_no ?? "" })

    const update = (id: number, change: WorkGroupUpdate) =>
      records.update(id, "group_no" in change ? { ...change, group_no: change.group_no ?? "" } : change)

    // A body followed by `tx.run` runs each call in one transaction (fnUntraced pipes the effect it makes through it).
    const addMember = Effect.fnUntraced(function*(id: number, kind: MemberKind, memberId: number, remark: string | null) {
      yield* locked(id)
      const found = yield* repo.existingMembers(kind, [memberId])
      if (!found.has(memberId)) return yield* NotFound.of(resourceOf(kind), memberId)
      const added = yield* repo.addMembers(id, kind, [memberId], remark)
      if (added.length === 0) {
        return yield* new AlreadyMember({ message: `${kind} ${memberId} is already a member of this group` })
      }
      yield* repo.log(id, [{ action: "associate", target_type: kind, target_id: memberId, remark }])
      yield* events.records("work_group.members_changed", [id])
      return null
    }, (effect) => tx.run(effect))

    const addMembers = Effect.fnUntraced(function*(id: number, kind: MemberKind, memberIds: ReadonlyArray<number>, remark: string | null) {
      yield* locked(id)
      const ids = [...new Set(memberIds)]
      const found = yield* repo.existingMembers(kind, ids)
      const missing = ids.filter((m) => !found.has(m))
      if (missing.length > 0) return yield* NotFound.ids(resourceOf(kind), missing)
      const added = yield* repo.addMembers(id, kind, ids, remark)
      yield* repo.log(id, added.map((m): LogEntry => ({ action: "associate", target_type: kind, target_id: m, remark })))
      if (added.length > 0) yield* events.records("work_group.members_changed", [id])
      return { success_count: added.length, skip_count: ids.length - added.length }
    }, (effect) => tx.run(effect))

    const removeMember = Effect.fnUntraced(function*(id: number, kind: MemberKind, memberId: number) {
      yield* locked(id)
      const removed = yield* repo.removeMember(id, kind, memberId)
      if (!removed) {
        return yield* new NotFound({
          resource: resourceOf(kind),
          message: `${kind} ${memberId} is not a member of this group`
        })
      }
      yield* repo.log(id, [{ action: "disassociate", target_type: kind, target_id: memberId }])
      yield* events.records("work_group.members_changed", [id])
      return null
    }, (effect) => tx.run(effect))

    const matchmakerMembers = Effect.fnUntraced(function*(id: number, p: PageParams) {
      yield* get(id)
      return yield* repo.matchmakerMembers(id, p, yield* syncWindow("work-groups/matchmakers", p, GROUP_MATCHMAKER_PAGE, { id }))
    })
    const accountMembers = Effect.fnUntraced(function*(id: number, p: PageParams) {
      yield* get(id)
      return yield* repo.accountMembers(id, p, yield* syncWindow("work-groups/work-wechats", p, GROUP_ACCOUNT_PAGE, { id }))
    })
    return {
      create,
      get,
      list: records.list,
      update,
      setStatus: records.setStatus,
      remove: records.remove,
      addMember,
      addMembers,
      removeMember,
      matchmakerMembers,
      accountMembers,
      logs: records.logs
    } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(WorkGroups, WorkGroups.make)
  static readonly layer = WorkGroups.layerWithoutDependencies.pipe(
    Layer.provide([WorkGroupsRepo.layer, ChangeEvents.layer, Transaction.layer])
  )
}
