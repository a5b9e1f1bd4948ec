// Work WeChat account use cases (SPEC §4.3, DECISIONS §5): every change and its operation log
// commit in one transaction; unique values and associations are guarded by the database.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import type {
  AccountStatus,
  Associate,
  AssociationListParams,
  BatchAssociate,
  Disassociate,
  TargetType,
  Transfer,
  TransferAdmin,
  TransferOutcome,
  WorkWechatCreate,
  WorkWechatUpdate
} from "../../schema/WorkWechats.js"
import { WORK_WECHAT_PAGE } from "../../schema/WorkWechats.js"
import { AccountDisabled, AlreadyAssociated, HasAssociations, InvalidInput, NotFound, type ResourceName } from "../domain/errors.js"
import type { LogEntry } from "../domain/operationLog.js"
import { Transaction } from "../repos/sqlHelpers.js"
import { WorkWechatsRepo } from "../repos/WorkWechatsRepo.js"
import { ChangeEvents } from "./ChangeEvents.js"
import { method, syncWindow } from "./common.js"
import { loggedRecordCases } from "./loggedRecords.js"

const resourceOf = (type: TargetType): ResourceName => (type === "matchmaker" ? "matchmaker" : "company")

const unique = (ids: ReadonlyArray<number>): Array<number> => [...new Set(ids)]

export class WorkWechats extends Context.Service<WorkWechats>()("WorkWechats/Service", {
  make: Effect.gen(function*() {
    const repo = yield* WorkWechatsRepo
    const tx = yield* Transaction
    const events = yield* ChangeEvents

    const records = loggedRecordCases({
      resource: "work_wechat",
      repo,
      tx,
      events,
      path: "work-wechats",
      limits: { list: WORK_WECHAT_PAGE, logs: WORK_WECHAT_PAGE },
      removal: {
        held: repo.attachments,
        refusal: ({ associations, users }) =>
          associations > 0 || users > 0
            ? new HasAssociations({
              message: `the account still has ${associations} association(s) and ${users} user(s); remove them first`
            })
            : undefined
      }
    })
    const { get, locked } = records

    const checkTargets = Effect.fnUntraced(function*(type: TargetType, ids: ReadonlyArray<number>, path: string) {
      const { missing, wrongKind } = yield* repo.checkTargets(type, ids)
      if (missing.length > 0) return yield* Effect.fail(NotFound.ids(resourceOf(type), missing))
      if (wrongKind.length > 0) {
        const kind = type === "company" ? "normal" : "franchisee"
        return yield* Effect.fail(InvalidInput.of(
          [{ path, message: `target_type ${type} needs a company of type ${kind}; not: ${wrongKind.join(", ")}` }],
          "target of the wrong kind"
        ))
      }
    })

    const refuseDisabled = (account: { id: number; status: AccountStatus }) =>
      account.status === "disabled"
        ? Effect.fail(new AccountDisabled({ message: `work WeChat account ${account.id} is disabled` }))
        : Effect.void

    const create = method("WorkWechats.create")(function*(input: WorkWechatCreate) {
      return yield* records.create(input)
    })

    const update = method("WorkWechats.update")(function*(id: number, change: WorkWechatUpdate) {
      return yield* records.update(id, change)
    })

    // A body followed by `tx.run` runs each call in one transaction (fnUntraced pipes the effect it makes through it).
    /** One target's association changed: its line in the account's log, and the account's event. */
    const loggedChange = (id: number, action: "associate" | "disassociate", body: Associate | Disassociate) =>
      Effect.andThen(
        repo.log(id, [{ action, target_type: body.target_type, target_id: body.target_id, remark: body.remark ?? null }]),
        events.records("work_wechat.associations_changed", [id])
      )

    const associate = Effect.fnUntraced(function*(id: number, body: Associate) {
      const account = yield* locked(id)
      yield* refuseDisabled(account)
      yield* checkTargets(body.target_type, [body.target_id], "target_id")
      const inserted = yield* repo.associate(id, body.target_type, [body.target_id], body.remark ?? null)
      if (inserted.length === 0) {
        return yield* new AlreadyAssociated({
          message: `${body.target_type} ${body.target_id} is already associated`
        })
      }
      yield* loggedChange(id, "associate", body)
      return null
    }, (effect) => tx.run(effect))

    const batchAssociate = Effect.fnUntraced(function*(id: number, body: BatchAssociate) {
      const account = yield* locked(id)
      yield* refuseDisabled(account)
      const ids = unique(body.target_ids)
      yield* checkTargets(body.target_type, ids, "target_ids")
      const inserted = yield* repo.associate(id, body.target_type, ids, body.remark ?? null)
      yield* repo.log(
        id,
        inserted.map((t): LogEntry => ({ action: "associate", target_type: body.target_type, target_id: t, remark: body.remark ?? null }))
      )
      if (inserted.length > 0) yield* events.records("work_wechat.associations_changed", [id])
      return { success_count: inserted.length, skip_count: ids.length - inserted.length }
    }, (effect) => tx.run(effect))

    const disassociate = Effect.fnUntraced(function*(id: number, body: Disassociate) {
      yield* locked(id)
      const removed = yield* repo.disassociate(id, body.target_type, body.target_id)
      if (!removed) {
        return yield* new NotFound({
          resource: resourceOf(body.target_type),
          message: `${body.target_type} ${body.target_id} is not associated with this account`
        })
      }
      yield* loggedChange(id, "disassociate", body)
      return null
    }, (effect) => tx.run(effect))

    /** transfer's transaction: both accounts locked, the targets moved, and both logs. */
    const moveTargets = Effect.fnUntraced(function*(id: number, body: Transfer) {
      const dest = body.target_work_wechat_id
      if (dest === id) {
        return yield* InvalidInput.of([{ path: "target_work_wechat_id", message: "must differ from the source account" }])
      }
      // Lock both accounts in id order so two opposite transfers cannot deadlock.
      const [first, second] = id < dest ? [id, dest] : [dest, id]
      const a = yield* repo.lockLive(first)
      const b = yield* repo.lockLive(second)
      const source = Option.getOrUndefined(first === id ? a : b)
      const destination = Option.getOrUndefined(first === id ? b : a)
      if (source === undefined) return yield* NotFound.of("work_wechat", id)
      if (destination === undefined) return yield* NotFound.ids("work_wechat", [dest])
      yield* refuseDisabled(destination)
      const ids = body.target_ids !== undefined ? unique(body.target_ids) : yield* repo.associatedTargets(id, body.target_type)
      if (body.target_ids !== undefined) yield* checkTargets(body.target_type, ids, "target_ids")
      const moved = new Set(yield* repo.move(id, dest, body.target_type, ids))
      const details = ids.map((t) => ({ target_id: t, status: moved.has(t) ? "transferred" as const : "skipped" as const }))
      const entry = (action: "transfer_out" | "transfer_in", t: number): LogEntry => ({
        action,
        target_type: body.target_type,
        target_id: t,
        from_value: String(id),
        to_value: String(dest),
        remark: body.remark ?? null
      })
      yield* repo.log(id, [...moved].map((t) => entry("transfer_out", t)))
      yield* repo.log(dest, [...moved].map((t) => entry("transfer_in", t)))
      if (moved.size > 0) {
        yield* repo.touch(id)
        yield* repo.touch(dest)
        yield* events.records("work_wechat.associations_changed", [id, dest])
      }
      const outcome: TransferOutcome = { success_count: moved.size, skip_count: ids.length - moved.size, details }
      return outcome
    })

    const transfer = method("WorkWechats.transfer")(function*(id: number, body: Transfer) {
      return yield* tx.run(moveTargets(id, body))
    })

    const transferAdmin = Effect.fnUntraced(function*(id: number, body: TransferAdmin) {
      const current = yield* locked(id)
      if (current.admin_id === body.target_admin_id) return null
      yield* repo.update(id, { admin_id: body.target_admin_id })
      yield* events.updated("work_wechat.updated", [id], ["admin_id"])
      yield* repo.log(id, [{
        action: "transfer_admin",
        from_value: current.admin_id === null ? null : String(current.admin_id),
        to_value: String(body.target_admin_id),
        remark: body.remark ?? null
      }])
      return null
    }, (effect) => tx.run(effect))

    const associations = Effect.fnUntraced(function*(id: number, params: AssociationListParams) {
      yield* get(id)
      return yield* repo.listAssociations(id, params, yield* syncWindow("work-wechats/associations", params, WORK_WECHAT_PAGE, { id }))
    })

    return {
      create,
      get,
      list: records.list,
      update,
      setStatus: records.setStatus,
      remove: records.remove,
      associate,
      batchAssociate,
      disassociate,
      transfer,
      transferAdmin,
      associations,
      logs: records.logs
    } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(WorkWechats, WorkWechats.make)
  static readonly layer = WorkWechats.layerWithoutDependencies.pipe(
    Layer.provide([WorkWechatsRepo.layer, ChangeEvents.layer, Transaction.layer])
  )
}
