// Rows are checked where they leave PostgreSQL: a column that changes type fails at the repository
// boundary (a SchemaError defect, answered 500 internal_error), never as a body of the wrong type.
import { expect, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"

import * as Scopes from "../src/domain/scope.js"
import { MatchmakersRepo } from "../src/repos/MatchmakersRepo.js"
import { signedClient, testServerLayer } from "./support/harness.js"
import { rawRequest } from "./support/raw.js"

// Its own database: the test changes a column's type while it runs.
layer(testServerLayer())("row schemas", (it) => {
  it.effect("a column whose type changed fails the repository read with a SchemaError and the endpoint with 500 internal_error", () =>
    Effect.gen(function*() {
      const { baseUrl, client, credentials } = yield* signedClient()
      const repo = yield* MatchmakersRepo
      const sql = yield* SqlClient.SqlClient
      const created = yield* client.matchmakers.create({ payload: { name: "类型红娘", years_exp: 7 } })
      expect(Option.map(yield* repo.findById(Scopes.all, created.id), (m) => m.years_exp)).toEqual(Option.some(7))

      // The column now holds text: without the row schema, clients would read "7" for an integer.
      yield* sql`ALTER TABLE matchmakers ALTER COLUMN years_exp TYPE text USING years_exp::text`
      const read = yield* Effect.exit(repo.findById(Scopes.all, created.id))
      expect(Exit.isFailure(read)).toBe(true)
      if (Exit.isFailure(read)) {
        const defect = Cause.findDefect(read.cause)
        expect(Result.isSuccess(defect) && Schema.isSchemaError(defect.success)).toBe(true)
        expect(Cause.findErrorOption(read.cause)).toEqual(Option.none())
      }

      const res = yield* rawRequest(baseUrl, { path: `/api/open/v1/matchmakers/${created.id}`, credentials })
      expect(res.status).toBe(500)
      expect(res.json).toEqual({
        code: 500,
        message: expect.any(String),
        data: { error: "internal_error", request_id: expect.any(String) }
      })

      yield* sql`ALTER TABLE matchmakers ALTER COLUMN years_exp TYPE integer USING years_exp::integer`
      expect((yield* client.matchmakers.get({ params: { id: created.id } })).years_exp).toBe(7)
    }))
})
