// When the webhook dispatcher, idle, sleeps until the next delivery comes due (jobs/Webhooks.ts):
// a delivery that is due already and not leased counts (it came due after the turn's claim, on a
// busy machine), so that it is tried at once rather than at the next poll; one leased by a daemon
// does not (its holder's record wakes the loop).
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"

import { ALL_PERMISSIONS } from "../schema/Permissions.js"
import { OutboxRepo } from "../src/repos/OutboxRepo.js"
import { Transaction } from "../src/repos/sqlHelpers.js"
import { WebhooksRepo } from "../src/repos/WebhooksRepo.js"
import { Clients } from "../src/services/Clients.js"
import { liveAppLayer } from "./support/harness.js"

const QueueLive = liveAppLayer().pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")))

layer(QueueLive, { timeout: 60_000 })("the webhook queue's next due time", (it) => {
  it.effect("a pending delivery already due and not leased is due now; leased by a daemon, it is not the idle loop's", () =>
    Effect.gen(function*() {
      const clients = yield* Clients
      const created = yield* Effect.orDie(clients.create({ name: "queue", permissions: ALL_PERMISSIONS, masking: false }))
      yield* Effect.orDie(clients.webhook(created.app_key, { _tag: "Set", url: "http://127.0.0.1:9/hook", events: ["guest.created"] }))
      const tx = yield* Transaction
      const outbox = yield* OutboxRepo
      yield* Effect.orDie(tx.run(outbox.record("guest.created", "open:guest:read", { id: 1 })))
      const sql = yield* SqlClient.SqlClient
      const repo = yield* WebhooksRepo
      // Due a moment ago, as a retry that came due while the dispatcher was between statements.
      yield* Effect.orDie(sql`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '50 milliseconds'`)
      const due = yield* Effect.orDie(repo.nextDueInMs)
      expect(Option.isSome(due)).toBe(true)
      expect(Option.getOrThrow(due)).toBeLessThanOrEqual(0)

      // Leased by a daemon for the next minute: not this loop's to wait for.
      yield* Effect.orDie(sql`UPDATE webhook_deliveries SET locked_by = 'another', lease_until = now() + interval '1 minute'`)
      expect(Option.isNone(yield* Effect.orDie(repo.nextDueInMs))).toBe(true)

      // A retry in a second, not leased: about a second.
      yield* Effect.orDie(
        sql`UPDATE webhook_deliveries SET locked_by = NULL, lease_until = NULL, next_attempt_at = now() + interval '1 second'`
      )
      const later = Option.getOrThrow(yield* Effect.orDie(repo.nextDueInMs))
      expect(later).toBeGreaterThan(500)
      expect(later).toBeLessThanOrEqual(1000)
    }))
})
