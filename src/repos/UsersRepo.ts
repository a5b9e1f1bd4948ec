// Platform users (memberships, work-account attribution): the only SQL over `users`.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"

export interface UserRow {
  readonly id: number
  readonly name: string
  readonly phone: string | null
  readonly work_wechat_id: number | null
}

export const makeUsersRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cols = sql.literal("id::int AS id, name, phone, work_wechat_id::int AS work_wechat_id")

  const insert = (input: { name: string; phone: string | null; work_wechat_id: number | null }) =>
    Effect.map(sql<UserRow>`INSERT INTO users ${sql.insert(input)} RETURNING ${cols}`, (r) => r[0]!)

  const setWorkWechat = (id: number, workWechatId: number | null) =>
    Effect.map(
      sql<UserRow>`UPDATE users SET work_wechat_id = ${workWechatId}, updated_at = now() WHERE id = ${id} RETURNING ${cols}`,
      (r) => Option.fromNullable(r[0])
    )

  const exists = (id: number) => Effect.map(sql<{ id: number }>`SELECT id::int AS id FROM users WHERE id = ${id}`, (r) => r.length > 0)

  return { insert, setWorkWechat, exists } as const
})

export class UsersRepo extends Context.Tag("Users/Repo")<UsersRepo, Effect.Effect.Success<typeof makeUsersRepo>>() {}
export const UsersRepoLive = Layer.effect(UsersRepo, makeUsersRepo)
