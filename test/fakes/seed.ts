// Rows for service tests over the fake store: the tables no service under test writes (companies,
// matchmakers, users) straight into the fake database, guests through the guests fake as the
// services would store them.
import * as Effect from "effect/Effect"

import { deriveGuest, type GuestSent } from "../../src/domain/guest.js"
import { GuestsRepo } from "../../src/repos/GuestsRepo.js"
import { FakeDb, nextId } from "./db.js"

export const seedCompany = Effect.map(FakeDb, (db) => {
  const id = nextId(db, "companies")
  db.tables.companies.set(id, { id, name: `婚介${id}` })
  return id
})

export const seedMatchmaker = (companyId: number) =>
  Effect.map(FakeDb, (db) => {
    const id = nextId(db, "matchmakers")
    db.tables.matchmakers.set(id, { id, company_id: companyId, guest_count: 0 })
    return id
  })

export const seedUser = Effect.map(FakeDb, (db) => {
  const id = nextId(db, "users")
  db.tables.users.add(id)
  return id
})

/** A guest of a new company (or the given one), stored as the guest service stores one. */
export const seedGuest = (sent: Partial<GuestSent> = {}) =>
  Effect.gen(function*() {
    const company = sent.company_id ?? (yield* seedCompany)
    return yield* (yield* GuestsRepo).insert(deriveGuest({ name: "测试嘉宾", gender: "female", ...sent, company_id: company }, undefined))
  })
