// Promise-style entry to run the migrations against one database URL (test setup, tooling).
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

import { migrateThrough } from "./migrate.js"
import { pgClientLayer } from "./Sql.js"

/** Applies the pending migrations (up to number `through`, when given); the ones it applied. */
export async function migrateDatabase(url: string, through = Number.POSITIVE_INFINITY): Promise<ReadonlyArray<string>> {
  return await Effect.runPromise(migrateThrough(through).pipe(Effect.provide(pgClientLayer(Redacted.make(url), "migrate")), Effect.orDie))
}
