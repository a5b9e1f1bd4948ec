// Safe retries of POSTs (DECISIONS §11): the first attempt under a client's Idempotency-Key runs
// and its answer is kept; a repeat gets that answer, a 409 while the first still runs, or a 422
// when the key came with another request. Shared by every API instance through the database.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { AppConfig } from "../Config.js"
import { decideRepeat, isKept, type Repeat } from "../domain/idempotency.js"
import { IdempotencyRepo } from "../repos/IdempotencyRepo.js"

/** What this attempt does: run (it holds the key now), or answer as the repeat it is. */
export type Attempt = { readonly _tag: "Run" } | Exclude<Repeat, { readonly _tag: "TakeOver" }>

export class Idempotency extends Context.Service<Idempotency>()("Idempotency/Service", {
  make: Effect.gen(function*() {
    const repo = yield* IdempotencyRepo
    const config = yield* AppConfig
    const run: Attempt = { _tag: "Run" }

    const begin = Effect.fn("Idempotency.begin")(function*(appKey: string, key: string, fingerprint: string) {
      // A kept row can vanish between the claim and the read (a failed first attempt releases
      // it, or it expires): then the claim is simply tried again.
      for (let round = 0; round < 3; round++) {
        const claimed = yield* repo.claim({
          app_key: appKey,
          key,
          fingerprint,
          lease_seconds: config.idempotencyLeaseSeconds,
          ttl_seconds: config.idempotencyTtlSeconds
        })
        if (claimed) return run
        const kept = yield* repo.find(appKey, key)
        if (kept._tag === "None") continue
        const decision = decideRepeat(kept.value, fingerprint)
        if (decision._tag !== "TakeOver") return decision
        if (yield* repo.takeOver(appKey, key, config.idempotencyLeaseSeconds)) return run
        return { _tag: "InProgress", retryAfterSeconds: 1 } satisfies Attempt
      }
      return { _tag: "InProgress", retryAfterSeconds: 1 } satisfies Attempt
    })

    /** Keeps the answer of the attempt that ran (a 5xx frees the key so that a retry runs). */
    const finish = Effect.fn("Idempotency.finish")(function*(
      appKey: string,
      key: string,
      response: { readonly status: number; readonly body: Uint8Array; readonly contentType: string }
    ) {
      return yield* isKept(response.status)
        ? repo.complete({ app_key: appKey, key, status: response.status, body: response.body, content_type: response.contentType })
        : repo.release(appKey, key)
    })

    /** An attempt that produced no answer (a defect before the response): free the key. */
    const abandon = (appKey: string, key: string) => repo.release(appKey, key)

    const prune = (limit: number) => repo.prune(limit)

    return { begin, finish, abandon, prune } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Idempotency, Idempotency.make)
  static readonly layer = Idempotency.layerWithoutDependencies.pipe(Layer.provide(IdempotencyRepo.layer))
}
