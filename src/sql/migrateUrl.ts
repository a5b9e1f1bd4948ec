// Promise-style entry to run the migrations against one database URL (test setup, tooling).
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

import { migrate, pgClientLayer } from "./Sql.js"

export async function migrateDatabase(url: string): Promise<ReadonlyArray<string>> {
  return await Effect.runPromise(migrate.pipe(Effect.provide(pgClientLayer(Redacted.make(url), "migrate")), Effect.orDie))
}
