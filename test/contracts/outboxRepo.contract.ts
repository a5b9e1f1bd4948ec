// What the services and the events feed rely on from OutboxRepo, run against the real repository
// (integration) and its in-memory fake (unit).
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"

import { OutboxRepo } from "../../src/repos/OutboxRepo.js"
import { newestEventId } from "./seed.js"

export const outboxRepoContract = (name: string, repo: Layer.Layer<OutboxRepo>) =>
  layer(repo)(`OutboxRepo contract (${name})`, (it) => {
    it.effect("a recorded event is read back after the previous id with its type, permission and JSON data", () =>
      Effect.gen(function*() {
        const outbox = yield* OutboxRepo
        const before = yield* newestEventId
        const eventId = yield* outbox.record("guest.updated", "open:guest:read", {
          guest_id: 7,
          changed_fields: ["age"],
          skipped: undefined
        })
        expect(eventId).toMatch(/^evt_[0-9a-f]{24}$/)
        const [event, ...rest] = yield* outbox.after(before, 10)
        expect(rest).toEqual([])
        expect(event).toMatchObject({
          event_id: eventId,
          type: "guest.updated",
          permission: "open:guest:read",
          data: { guest_id: 7, changed_fields: ["age"] }
        })
        expect(event!.data).toEqual({ guest_id: 7, changed_fields: ["age"] })
        expect(event!.id).toBeGreaterThan(before)
        expect(event!.created_at).toBeInstanceOf(Date)
      }))

    it.effect("events come in id order, each with its own event_id; `after` pages by id and limit", () =>
      Effect.gen(function*() {
        const outbox = yield* OutboxRepo
        const before = yield* newestEventId
        yield* outbox.recordMany("guest.created", "open:guest:read", [{ guest_id: 1 }, { guest_id: 2 }, { guest_id: 3 }])
        yield* outbox.recordMany("guest.created", "open:guest:read", [])
        const all = yield* outbox.after(before, 10)
        expect(all.map((e) => e.data)).toEqual([{ guest_id: 1 }, { guest_id: 2 }, { guest_id: 3 }])
        expect(new Set(all.map((e) => e.event_id)).size).toBe(3)
        const ids = all.map((e) => e.id)
        expect(ids).toEqual([...ids].sort((a, b) => a - b))
        expect((yield* outbox.after(before, 2)).map((e) => e.id)).toEqual(ids.slice(0, 2))
        expect((yield* outbox.after(ids[1]!, 10)).map((e) => e.id)).toEqual(ids.slice(2))
      }))
  })
