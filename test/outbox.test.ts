// The events outbox commits or rolls back together with the change that records the event.
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as SqlClient from "effect/sql/SqlClient"

import { OutboxRepo } from "../src/repos/OutboxRepo.js"
import { testAppLayer } from "./support/harness.js"

layer(testAppLayer())("events outbox", (it) => {
  it.effect("an event recorded in a transaction that fails is not kept; one that commits is", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* OutboxRepo
      const failed = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
        yield* outbox.record("guest.created", "open:guest:read", { guest_id: 1 })
        return yield* Effect.fail("the change failed")
      })))
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* outbox.after(0, 10)).toEqual([])

      const eventId = yield* sql.withTransaction(outbox.record("guest.created", "open:guest:read", { guest_id: 2 }))
      const events = yield* outbox.after(0, 10)
      expect(events).toHaveLength(1)
      expect(events[0]).toMatchObject({ event_id: eventId, type: "guest.created", permission: "open:guest:read", data: { guest_id: 2 } })
      expect(eventId).toMatch(/^evt_[0-9a-f]{24}$/)
    }))
})
