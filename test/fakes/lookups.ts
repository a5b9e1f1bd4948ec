// Partial fakes (makeTestLayer) of repositories that services only use to look a row up: they
// answer from the fake database's tables, and every other method dies naming itself. Not
// contract-tested: each is one lookup by id, and the services only ask whether the row exists.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import * as Scopes from "../../src/domain/scope.js"
import { CompaniesRepo } from "../../src/repos/CompaniesRepo.js"
import { UsersRepo } from "../../src/repos/UsersRepo.js"
import { FakeDb } from "./db.js"
import { makeTestLayer } from "./makeTestLayer.js"

type CompanyRow = Option.Option.Value<Effect.Success<ReturnType<CompaniesRepo["Service"]["findById"]>>>

/** UsersRepo.exists over the fake users; nothing else. */
export const FakeUserLookup: Layer.Layer<UsersRepo, never, FakeDb> = Layer.unwrap(
  Effect.map(FakeDb, (db) => makeTestLayer(UsersRepo)({ exists: (id) => Effect.sync(() => db.tables.users.has(id)) }))
)

/** CompaniesRepo.findById over the fake companies (the fields a caller reads besides the id are placeholders); nothing else. */
export const FakeCompanyLookup: Layer.Layer<CompaniesRepo, never, FakeDb> = Layer.unwrap(
  Effect.map(FakeDb, (db) =>
    makeTestLayer(CompaniesRepo)({
      findById: (scope, id) =>
        Effect.sync(() =>
          Option.map(Option.fromNullishOr(Scopes.includes(scope, id) ? db.tables.companies.get(id) : undefined), (c) =>
            ({ id: c.id, name: c.name }) as unknown as CompanyRow)
        )
    }))
)
