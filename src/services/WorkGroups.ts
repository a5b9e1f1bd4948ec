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
  type WorkGroupListParams,
  type WorkGroupUpdate
} from "../../schema/WorkGroups.js"
import type { AccountStatus } from "../../schema/WorkWechats.js"
import { AlreadyMember, GroupHasMembers, NotFound } from "../domain/errors.js"
import { type LogEntry, statusChangeOf, updateOf } from "../domain/operationLog.js"
import { Transaction } from "../repos/sqlHelpers.js"
import { type MemberKind, WorkGroupsRepo } from "../repos/WorkGroupsRepo.js"
import { ChangeEvents } from "./ChangeEvents.js"
import { searchableFields, someOrNotFound, syncWindow } from "./common.js"

const resourceOf = (kind: MemberKind) => (kind === "matchmaker" ? "matchmaker" as const : "work_wechat" as const)

export class WorkGroups extends Context.Service<WorkGroups>()("WorkGroups/Service", {
  make: Effect.gen(function*() {
    const repo = yield* WorkGroupsRepo
    const tx = yield* Transaction
    const events = yield* ChangeEvents
    const locked = (id: number) => repo.lockLive(id).pipe(someOrNotFound("work_group", id))

    const create = (input: WorkGroupCreate) =>
      tx.run(Effect.gen(function*() {
        const id = yield* repo.insert({ ...input, group_no: input.group_no ?? "" })
        yield* repo.log(id, [{ action: "create" }])
        yield* events.records("work_group.created", [id])
        return { id }
      }))

    const get = (id: number) => repo.findLive(id).pipe(someOrNotFound("work_group", id))
    /** `masking`: the caller's; its keyword matches only what it sees unmasked (DECISIONS §1). */
    const list = (params: WorkGroupListParams, masking: boolean) =>
      Effect.gen(function*() {
        const searchable = yield* searchableFields("work_group", masking, params)
        return yield* repo.list(params, searchable, yield* syncWindow("work-groups", params, GROUP_PAGE))
      })

    const update = (id: number, change: WorkGroupUpdate) =>
      tx.run(Effect.gen(function*() {
        const normalized = "group_no" in change ? { ...change, group_no: change.group_no ?? "" } : change
        const update = updateOf(yield* locked(id), normalized)
        if (update === undefined) return null
        yield* repo.update(id, update.set)
        yield* repo.log(id, [update.entry])
        yield* events.updated("work_group.updated", [id], Object.keys(update.set))
        return null
      }))

    const setStatus = (id: number, status: AccountStatus) =>
      tx.run(Effect.gen(function*() {
        const entry = statusChangeOf((yield* locked(id)).status, status)
        if (entry === undefined) return null
        yield* repo.update(id, { status })
        yield* repo.log(id, [entry])
        yield* events.updated("work_group.updated", [id], ["status"])
        return null
      }))

    const remove = (id: number) =>
      tx.run(Effect.gen(function*() {
        yield* locked(id)
        const { matchmakers, accounts } = yield* repo.memberCounts(id)
        if (matchmakers > 0 || accounts > 0) {
          return yield* new GroupHasMembers({
            message: `the group still has ${matchmakers} matchmaker(s) and ${accounts} work account(s); remove them first`
          })
        }
        const deleted = yield* repo.softDelete(id)
        yield* repo.log(id, [{ action: "delete" }])
        yield* events.payloads("work_group.deleted", [deleted])
        return null
      }))

    const addMember = (id: number, kind: MemberKind, memberId: number, remark: string | null) =>
      tx.run(Effect.gen(function*() {
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
      }))

    const addMembers = (id: number, kind: MemberKind, memberIds: ReadonlyArray<number>, remark: string | null) =>
      tx.run(Effect.gen(function*() {
        yield* locked(id)
        const ids = [...new Set(memberIds)]
        const found = yield* repo.existingMembers(kind, ids)
        const missing = ids.filter((m) => !found.has(m))
        if (missing.length > 0) return yield* NotFound.ids(resourceOf(kind), missing)
        const added = yield* repo.addMembers(id, kind, ids, remark)
        yield* repo.log(id, added.map((m): LogEntry => ({ action: "associate", target_type: kind, target_id: m, remark })))
        if (added.length > 0) yield* events.records("work_group.members_changed", [id])
        return { success_count: added.length, skip_count: ids.length - added.length }
      }))

    const removeMember = (id: number, kind: MemberKind, memberId: number) =>
      tx.run(Effect.gen(function*() {
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
      }))

    const matchmakerMembers = (id: number, p: PageParams) =>
      Effect.gen(function*() {
        yield* get(id)
        return yield* repo.matchmakerMembers(id, p, yield* syncWindow("work-groups/matchmakers", p, GROUP_MATCHMAKER_PAGE, { id }))
      })
    const accountMembers = (id: number, p: PageParams) =>
      Effect.gen(function*() {
        yield* get(id)
        return yield* repo.accountMembers(id, p, yield* syncWindow("work-groups/work-wechats", p, GROUP_ACCOUNT_PAGE, { id }))
      })
    // The logs of a soft-deleted group stay readable (DECISIONS §5): its delete entry is there.
    const logs = (id: number, p: PageParams) =>
      Effect.gen(function*() {
        if (!(yield* repo.logOwnerEverExisted(id))) return yield* NotFound.of("work_group", id)
        return yield* repo.listLogs(id, p, yield* syncWindow("work-groups/logs", p, GROUP_LOG_PAGE, { id }))
      })

    return {
      create,
      get,
      list,
      update,
      setStatus,
      remove,
      addMember,
      addMembers,
      removeMember,
      matchmakerMembers,
      accountMembers,
      logs
    } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(WorkGroups, WorkGroups.make)
  static readonly layer = WorkGroups.layerWithoutDependencies.pipe(
    Layer.provide([WorkGroupsRepo.layer, ChangeEvents.layer, Transaction.layer])
  )
}
