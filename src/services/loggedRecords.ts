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

  // Each use case's generator function is made here, once per call of loggedRecordCases (once per
  // layer built: its service's make), not once per call of the use case.

  const create = Effect.fnUntraced(function*(input: Create) {
    const id = yield* repo.insert(input)
    yield* repo.log(id, [{ action: "create" }])
    yield* events.records(`${resource}.created`, [id])
    return { id }
  }, (effect) => tx.run(effect))

  const get = (id: number) => repo.findLive(id).pipe(someOrNotFound(resource, id))

  /** `masking`: the caller's; its keyword matches only what it sees unmasked (DECISIONS §1). */
  // eslint-disable-next-line local/generators-once -- made once per layer: loggedRecordCases runs in its service's make
  const list = Effect.fnUntraced(function*(params: Params, masking: boolean) {
    const searchable = yield* searchableFields(resource, masking, params)
    return yield* repo.list(params, searchable, yield* syncWindow(o.path, params, o.limits.list))
  })

  const update = Effect.fnUntraced(function*(id: number, change: Readonly<Record<string, unknown>>) {
    const update = updateOf(yield* locked(id), change)
    if (update === undefined) return null
    yield* repo.update(id, update.set)
    yield* repo.log(id, [update.entry])
    yield* events.updated(`${resource}.updated`, [id], Object.keys(update.set))
    return null
  }, (effect) => tx.run(effect))

  const setStatus = Effect.fnUntraced(function*(id: number, status: AccountStatus) {
    const entry = statusChangeOf((yield* locked(id)).status, status)
    if (entry === undefined) return null
    yield* repo.setStatus(id, status)
    yield* repo.log(id, [entry])
    yield* events.updated(`${resource}.updated`, [id], ["status"])
    return null
  }, (effect) => tx.run(effect))

  const remove = Effect.fnUntraced(function*(id: number) {
    yield* locked(id)
    const refusal = o.removal.refusal(yield* o.removal.held(id))
    if (refusal !== undefined) return yield* Effect.fail(refusal)
    const deleted = yield* repo.softDelete(id)
    yield* repo.log(id, [{ action: "delete" }])
    yield* events.payloads(`${resource}.deleted`, [deleted])
    return null
  }, (effect) => tx.run(effect))

  // The logs of a soft-deleted record stay readable (DECISIONS §5): its delete entry is there.
  // eslint-disable-next-line local/generators-once -- made once per layer: loggedRecordCases runs in its service's make
  const logs = Effect.fnUntraced(function*(id: number, params: PageParams) {
    if (!(yield* repo.logOwnerEverExisted(id))) return yield* NotFound.of(resource, id)
    return yield* repo.listLogs(id, params, yield* syncWindow(`${o.path}/logs`, params, o.limits.logs, { id }))
  })

  return { locked, create, get, list, update, setStatus, remove, logs } as const
}
