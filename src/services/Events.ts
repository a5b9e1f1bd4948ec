// The events feed (DECISIONS §9): a client's catch-up read of the events it may read, oldest
// first in commit-safe order, 30 days back, continuing after the last event id it processed.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import type { CallerInfo } from "../../schema/Auth.js"
import { EVENTS_PAGE, type EventsPage, type EventsParams } from "../../schema/Events.js"
import { AppConfig } from "../Config.js"
import { InvalidInput } from "../domain/errors.js"
import { EventsRepo } from "../repos/EventsRepo.js"
import { method } from "./common.js"

export class Events extends Context.Service<Events>()("Events/Service", {
  make: Effect.gen(function*() {
    const repo = yield* EventsRepo
    const config = yield* AppConfig

    const list = method("Events.list")(function*(caller: CallerInfo, params: EventsParams) {
      let cursor: { readonly tx_id: string; readonly id: number } | null = null
      if (params.after !== undefined) {
        const found = yield* repo.cursorOf(caller.scope, params.after)
        if (Option.isNone(found)) {
          return yield* InvalidInput.of(
            [{ path: "after", message: `unknown event id: not an event of the last ${config.eventsRetentionDays} days` }],
            "unknown event id in after"
          )
        }
        cursor = found.value
      }
      const rows = yield* repo.page(caller.scope, {
        cursor,
        permissions: [...caller.permissions],
        types: params.types === undefined || params.types.length === 0 ? null : params.types,
        retention_days: config.eventsRetentionDays,
        limit: params.page_size ?? EVENTS_PAGE.default
      })
      const page: EventsPage = {
        list: rows.map((r) => ({ id: r.event_id, type: r.type, created_at: r.created_at, data: r.data })),
        next_after: rows.at(-1)?.event_id ?? params.after ?? null
      }
      return page
    })

    return { list } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Events, Events.make)
  static readonly layer = Events.layerWithoutDependencies.pipe(Layer.provide(EventsRepo.layer))
}
