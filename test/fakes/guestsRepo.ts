// An in-memory GuestsRepo over the fake database: the guest rows with the real repository's rules
// that services rely on (ids ascending; photo_time defaulting to the creation instant and kept by
// an update that sends none; completeness stored to two decimals; one guest per matchmaker and
// image; the matchmakers' guest counters). The list (and its counting) is not faked: a test that
// reaches it dies naming it. Checked against the real one by test/contracts/guestsRepo.contract.ts.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import type { Guest } from "../../schema/Guests.js"
import { PlatformTimeZone } from "../../src/Config.js"
import { EVENT_READ_PERMISSION } from "../../src/domain/eventTypes.js"
import type { GuestState } from "../../src/domain/guest.js"
import * as Scopes from "../../src/domain/scope.js"
import { formatTimestamp, parseTimestamp } from "../../src/domain/time.js"
import { GuestsRepo } from "../../src/repos/GuestsRepo.js"
import { FakeDb, type FakeGuest, nextId, now } from "./db.js"
import { addFakeEvent } from "./outboxRepo.js"

/** What the table stores of a state: completeness as numeric(3, 2), arrays and JSON copied. */
const stored = (state: GuestState): GuestState => ({
  ...structuredClone(state),
  completeness: Math.round(state.completeness * 100) / 100
})

export const makeFakeGuestsRepo = Effect.gen(function*() {
  const db = yield* FakeDb
  // Each row's version (the real one's xmin): a write through this repository makes a new one.
  const versions = new WeakMap<FakeGuest, number>()
  const versionOf = (row: FakeGuest) => String(versions.get(row) ?? 0)
  const bump = (row: FakeGuest) => versions.set(row, (versions.get(row) ?? 0) + 1)

  const toGuest = (row: FakeGuest, timeZone: string): Guest => {
    const { family_income_explicit: _, ...state } = structuredClone(row.state)
    const at = (ms: number) => formatTimestamp(new Date(ms), timeZone)
    return {
      id: row.id,
      ...state,
      photo_time: at(row.photo_time),
      created_at: at(row.created_at),
      updated_at: at(row.updated_at)
    } as Guest
  }

  const repo = GuestsRepo.of({
    // The real one's single statement: the guest and guest.created (the record, guest_id beside
    // it), the matchmaker's guest_count and matchmaker.updated (the fake's matchmaker record is the
    // three fields it keeps).
    create: (state) =>
      Effect.gen(function*() {
        const guest = yield* repo.insert(state)
        yield* addFakeEvent(db, "guest.created", EVENT_READ_PERMISSION.guest, { ...guest, guest_id: guest.id })
        const m = state.matchmaker_id === null ? undefined : db.tables.matchmakers.get(state.matchmaker_id)
        if (m !== undefined) {
          m.guest_count += 1
          yield* addFakeEvent(db, "matchmaker.updated", EVENT_READ_PERMISSION.matchmaker, { ...m, changed_fields: ["guest_count"] })
        }
        return guest
      }),
    insert: (state, extra = {}) =>
      Effect.gen(function*() {
        const timeZone = yield* PlatformTimeZone
        const nowMs = yield* now
        const image = extra.image_hash ?? null
        const taken = image !== null &&
          [...db.tables.guests.values()].some((g) => g.image_hash === image && g.state.matchmaker_id === state.matchmaker_id)
        // The unique index guests_matchmaker_image_key: a defect there too (services look first).
        if (taken) return yield* Effect.die(new Error(`duplicate (matchmaker_id, image_hash) ${state.matchmaker_id} ${image}`))
        const row: FakeGuest = {
          id: nextId(db, "guests"),
          state: stored(state),
          image_hash: image,
          created_at: nowMs,
          updated_at: nowMs,
          photo_time: state.photo_time === null ? nowMs : parseTimestamp(state.photo_time, timeZone).getTime()
        }
        db.tables.guests.set(row.id, row)
        return toGuest(row, timeZone)
      }),
    findByImage: (matchmakerId, imageHash) =>
      Effect.sync(() =>
        Option.map(
          Option.fromNullishOr(
            [...db.tables.guests.values()].find((g) => g.image_hash === imageHash && g.state.matchmaker_id === matchmakerId)
          ),
          (g) => ({ id: g.id, name: g.state.name })
        )
      ),
    update: (id, state) =>
      Effect.gen(function*() {
        const timeZone = yield* PlatformTimeZone
        const row = db.tables.guests.get(id)
        // The real statement is `single`: no row is a defect.
        if (row === undefined) return yield* Effect.die(new Error(`guest ${id} does not exist`))
        row.state = stored(state)
        bump(row)
        row.updated_at = yield* now
        if (state.photo_time !== null) row.photo_time = parseTimestamp(state.photo_time, timeZone).getTime()
        return toGuest(row, timeZone)
      }),
    findVersioned: (scope, id) =>
      Effect.map(PlatformTimeZone, (timeZone) =>
        Option.map(
          Option.filter(Option.fromNullishOr(db.tables.guests.get(id)), (g) => Scopes.includes(scope, g.state.company_id)),
          (row) => {
            const { created_at: _c, id: _i, updated_at: _u, ...state } = toGuest(row, timeZone)
            return {
              state: { ...state, family_income_explicit: row.state.family_income_explicit } as GuestState,
              version: versionOf(row)
            }
          }
        )),
    // The real one's single statement: the update made only against the version read, guest.updated
    // (the record, guest_id and changed_fields beside it), the moved matchmakers' guest_count and
    // their matchmaker.updated events in id order.
    updateRecorded: (id, version, state, changed, moves) =>
      Effect.gen(function*() {
        const row = db.tables.guests.get(id)
        if (row === undefined || versionOf(row) !== version) return Option.none()
        const guest = yield* repo.update(id, state)
        yield* addFakeEvent(db, "guest.updated", EVENT_READ_PERMISSION.guest, { ...guest, guest_id: id, changed_fields: changed })
        for (const [mid, delta] of [...moves].sort(([a], [b]) => a - b)) {
          const m = db.tables.matchmakers.get(mid)
          if (m === undefined) continue
          m.guest_count += delta
          yield* addFakeEvent(db, "matchmaker.updated", EVENT_READ_PERMISSION.matchmaker, { ...m, changed_fields: ["guest_count"] })
        }
        return Option.some(guest)
      }),
    findById: (scope, id) =>
      Effect.map(PlatformTimeZone, (timeZone) =>
        Option.map(
          Option.filter(Option.fromNullishOr(db.tables.guests.get(id)), (g) => Scopes.includes(scope, g.state.company_id)),
          (g) => toGuest(g, timeZone)
        )),
    lockStates: (ids) =>
      Effect.map(PlatformTimeZone, (timeZone) => {
        const states = new Map<number, GuestState>()
        for (const id of [...new Set(ids)].sort((a, b) => a - b)) {
          const row = db.tables.guests.get(id)
          if (row === undefined) continue
          const { created_at: _c, id: _i, updated_at: _u, ...state } = toGuest(row, timeZone)
          states.set(id, { ...state, family_income_explicit: row.state.family_income_explicit } as GuestState)
        }
        return states
      }),
    adjustGuestCounts: (deltas) =>
      Effect.sync(() => {
        for (const [id, delta] of deltas) {
          const m = db.tables.matchmakers.get(id)
          if (m !== undefined) m.guest_count += delta
        }
      }),
    existingIds: (scope, table, ids) =>
      Effect.sync(() =>
        new Set(ids.filter((id) => {
          // A company is in the scope by its id, a matchmaker by its company.
          if (table === "companies") return db.tables.companies.has(id) && Scopes.includes(scope, id)
          const m = db.tables.matchmakers.get(id)
          return m !== undefined && Scopes.includes(scope, m.company_id)
        }))
      ),
    list: () => Effect.die(new Error("GuestsRepo.list is not faked: list tests run against PostgreSQL"))
  })
  return repo
})

export const FakeGuestsRepo: Layer.Layer<GuestsRepo, never, FakeDb> = Layer.effect(GuestsRepo, makeFakeGuestsRepo)
