// The use cases every logged record has (SPEC §4.3, §4.4; DECISIONS §5): create, read, list,
// update, enable or disable, soft-delete and read the log, each change committed with its log
// entry and its change event in one transaction. Work WeChat accounts and WeChat groups build
// theirs on this; what is their own (what a delete refuses, associations, members) they add.
import * as Effect from "effect/Effect"

import type { PageLimits, PageParams } from "../../schema/Common.js"
import type { AccountStatus } from "../../schema/WorkWechats.js"
import { NotFound } from "../domain/errors.js"
import type { KeywordField } from "../domain/masking.js"
import { statusChangeOf, updateOf } from "../domain/operationLog.js"
import type { LoggedRecords } from "../repos/loggedRecords.js"
import type { Transaction } from "../repos/sqlHelpers.js"
import type { ChangeEvents } from "./ChangeEvents.js"
import { searchableFields, someOrNotFound, syncWindow } from "./common.js"

type Resource = "work_wechat" | "work_group"

export const loggedRecordCases = <
  R extends Resource,
  Create,
  Row,
  Locked extends { readonly status: AccountStatus },
  PageRow,
  LogRow,
  Params extends PageParams,
  EDup,
  Held,
  EHeld,
  ERemove
>(o: {
  readonly resource: R
  readonly repo: LoggedRecords<Create, Row, Locked, PageRow, LogRow, Params, KeywordField<R>, EDup>
  readonly tx: Transaction["Service"]
  readonly events: ChangeEvents["Service"]
  /** The list's path in a sync cursor (`work-wechats`); its logs' is `<path>/logs`. */
  readonly path: string
  readonly limits: { readonly list: PageLimits; readonly logs: PageLimits }
  /** A delete is refused while the record still holds what must go first. */
  readonly removal: {
    /** What the record holds (counted in the delete's transaction, the record locked). */
    readonly held: (id: number) => Effect.Effect<Held, EHeld>
    /** The refusal, or undefined when the record may go. */
    readonly refusal: (held: Held) => ERemove | undefined
  }
}) => {
  const { events, repo, resource, tx } = o

  const locked = (id: number) => repo.lockLive(id).pipe(someOrNotFound(resource, id))

  const create = (input: Create) =>
    tx.run(Effect.gen(function*() {
      const id = yield* repo.insert(input)
      yield* repo.log(id, [{ action: "create" }])
      yield* events.records(`${resource}.created`, [id])
      return { id }
    }))

  const get = (id: number) => repo.findLive(id).pipe(someOrNotFound(resource, id))

  /** `masking`: the caller's; its keyword matches only what it sees unmasked (DECISIONS §1). */
  const list = (params: Params, masking: boolean) =>
    Effect.gen(function*() {
      const searchable = yield* searchableFields(resource, masking, params)
      return yield* repo.list(params, searchable, yield* syncWindow(o.path, params, o.limits.list))
    })

  const update = (id: number, change: Readonly<Record<string, unknown>>) =>
    tx.run(Effect.gen(function*() {
      const update = updateOf(yield* locked(id), change)
      if (update === undefined) return null
      yield* repo.update(id, update.set)
      yield* repo.log(id, [update.entry])
      yield* events.updated(`${resource}.updated`, [id], Object.keys(update.set))
      return null
    }))

  const setStatus = (id: number, status: AccountStatus) =>
    tx.run(Effect.gen(function*() {
      const entry = statusChangeOf((yield* locked(id)).status, status)
      if (entry === undefined) return null
      yield* repo.setStatus(id, status)
      yield* repo.log(id, [entry])
      yield* events.updated(`${resource}.updated`, [id], ["status"])
      return null
    }))

  const remove = (id: number) =>
    tx.run(Effect.gen(function*() {
      yield* locked(id)
      const refusal = o.removal.refusal(yield* o.removal.held(id))
      if (refusal !== undefined) return yield* Effect.fail(refusal)
      const deleted = yield* repo.softDelete(id)
      yield* repo.log(id, [{ action: "delete" }])
      yield* events.payloads(`${resource}.deleted`, [deleted])
      return null
    }))

  // The logs of a soft-deleted record stay readable (DECISIONS §5): its delete entry is there.
  const logs = (id: number, params: PageParams) =>
    Effect.gen(function*() {
      if (!(yield* repo.logOwnerEverExisted(id))) return yield* NotFound.of(resource, id)
      return yield* repo.listLogs(id, params, yield* syncWindow(`${o.path}/logs`, params, o.limits.logs, { id }))
    })

  return { locked, create, get, list, update, setStatus, remove, logs } as const
}
