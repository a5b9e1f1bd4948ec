// An in-memory ClientsRepo: the rows of `clients` in a Map, with the real repository's rules that
// services rely on (app_key unique, ids ascending, defaults of a new row, partial updates). Checked
// against the real one by test/contracts/clientsRepo.contract.ts.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { type ClientChange, type ClientRow, ClientsRepo } from "../../src/repos/ClientsRepo.js"

export const makeFakeClientsRepo = (createdAt = "2026-01-01T08:00:00") =>
  Effect.sync(() => {
    const rows = new Map<string, ClientRow>()
    let nextId = 1
    return ClientsRepo.of({
      findByAppKey: (appKey) => Effect.sync(() => Option.fromNullishOr(rows.get(appKey))),
      // No lock: the fake serves tests that change one client from one fiber at a time.
      lockByAppKey: (appKey) => Effect.sync(() => Option.fromNullishOr(rows.get(appKey))),
      list: Effect.sync(() => [...rows.values()].sort((a, b) => a.id - b.id)),
      insert: (row) =>
        Effect.suspend(() => {
          // The real table's UNIQUE (app_key): a second row with the key is a defect there too.
          if (rows.has(row.appKey)) return Effect.die(new Error(`duplicate app_key ${row.appKey}`))
          const created: ClientRow = {
            id: nextId++,
            app_key: row.appKey,
            name: row.name,
            status: "active",
            permissions: [...row.permissions],
            masking: row.masking,
            secret_enc: row.secretEnc,
            prev_secret_enc: null,
            prev_secret_expires_at: null,
            rate_rps: null,
            rate_burst: null,
            webhook_url: null,
            webhook_events: [],
            webhook_enabled: false,
            webhook_secret_enc: null,
            webhook_prev_secret_enc: null,
            webhook_prev_expires_at: null,
            created_at: createdAt,
            scoped: false,
            companies: []
          }
          rows.set(created.app_key, created)
          return Effect.succeed(created)
        }),
      update: (appKey, change: ClientChange) =>
        Effect.sync(() => {
          const current = rows.get(appKey)
          if (current === undefined) return Option.none()
          const defined = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined))
          const next = { ...current, ...defined } as ClientRow
          rows.set(appKey, next)
          return Option.some(next)
        }),
      replaceScope: (appKey, companies) =>
        Effect.sync(() => {
          const current = rows.get(appKey)
          if (current === undefined) return Option.none()
          const next: ClientRow = {
            ...current,
            scoped: companies !== null,
            companies: [...new Set(companies ?? [])].sort((a, b) => a - b)
          }
          rows.set(appKey, next)
          return Option.some(next)
        })
    })
  })

export const FakeClientsRepo = Layer.effect(ClientsRepo, makeFakeClientsRepo())
