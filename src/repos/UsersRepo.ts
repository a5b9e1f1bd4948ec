// Platform users (memberships, work-account attribution): the only SQL over `users`.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlSchema from "effect/sql/SqlSchema"
import * as Struct from "effect/Struct"

import { sqlEdge } from "./sqlHelpers.js"

/** A `users` row as selected by COLUMNS. */
const UserRow = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  phone: Schema.NullOr(Schema.String),
  work_wechat_id: Schema.NullOr(Schema.Int)
})
export type UserRow = typeof UserRow.Type

const COLUMNS = "id::int AS id, name, phone, work_wechat_id::int AS work_wechat_id"

export class UsersRepo extends Context.Service<UsersRepo>()("Users/Repo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(COLUMNS)

    const insert = SqlSchema.findOne({
      Request: UserRow.mapFields(Struct.omit(["id"])),
      Result: UserRow,
      execute: (input) => sql`INSERT INTO users ${sql.insert(input)} RETURNING ${cols}`
    })

    const setWorkWechat = SqlSchema.findOneOption({
      Request: UserRow.mapFields(Struct.pick(["id", "work_wechat_id"])),
      Result: UserRow,
      execute: ({ id, work_wechat_id }) =>
        sql`UPDATE users SET work_wechat_id = ${work_wechat_id}, updated_at = now() WHERE id = ${id} RETURNING ${cols}`
    })

    const lockWorkWechat = SqlSchema.findOneOption({
      Request: Schema.Int,
      Result: Schema.Struct({ work_wechat_id: Schema.NullOr(Schema.Int) }),
      execute: (id) => sql`SELECT work_wechat_id::int AS work_wechat_id FROM users WHERE id = ${id} FOR UPDATE`
    })

    const findId = SqlSchema.findOneOption({
      Request: Schema.Int,
      Result: Schema.Struct({ id: Schema.Int }),
      execute: (id) => sql`SELECT id::int AS id FROM users WHERE id = ${id}`
    })

    return {
      insert: (input: { name: string; phone: string | null; work_wechat_id: number | null }) => sqlEdge(insert(input)),
      /** The updated user, or none for an unknown id. */
      setWorkWechat: (id: number, workWechatId: number | null) => sqlEdge(setWorkWechat({ id, work_wechat_id: workWechatId })),
      /** The user's work account (null for none or an unknown user), locked for the transaction. */
      workWechatOf: (id: number) => sqlEdge(Effect.map(lockWorkWechat(id), (row) => Option.isSome(row) ? row.value.work_wechat_id : null)),
      exists: (id: number) => sqlEdge(Effect.map(findId(id), Option.isSome))
    } as const
  })
}) {
  static readonly layer = Layer.effect(UsersRepo, UsersRepo.make)
}
