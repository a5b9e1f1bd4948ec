// Safe retries of POSTs (DECISIONS §11): the first attempt under a client's Idempotency-Key runs
// and its answer is kept; a repeat gets that answer, a 409 when the first still runs after the
// repeat waited for it, or a 422 when the key came with another request. Shared by every API
// instance through the database.
//
// Exactly once, crash included: the key is claimed, the endpoint runs and its answer is kept in
// ONE transaction, so the writes and the kept answer commit together or not at all. A first
// attempt whose instance dies is rolled back by PostgreSQL (the key is free again, nothing was
// written); one that committed has its answer kept. A concurrent repeat's claim waits on the
// uncommitted key row (at most `idempotencyWaitSeconds`) and then replays the committed answer.
//
// Every kept answer is sealed (DECISIONS §13), bound to its client and key: not only those that
// carry a secret (a rotation's, a first webhook URL's), so that no new endpoint can forget to mark
// its answer and no list of such endpoints has to be kept. It costs little: a 300-byte answer is
// sealed in about 9 µs and opened in 6 (docs/benchmarks.md, "Sealed answers", bench/sealing.ts).
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"

import { placeOf, SecretBox } from "../auth/SecretBox.js"
import { AppConfig } from "../Config.js"
import type { DatabaseUnavailable } from "../domain/errors.js"
import { decideRepeat, inProgressRetryAfter, isKept, type Repeat } from "../domain/idempotency.js"
import { IdempotencyRepo, KeyStillHeld, type StoredAnswer } from "../repos/IdempotencyRepo.js"
import { Transaction } from "../repos/sqlHelpers.js"

/** An answer as it is kept and replayed, byte for byte. */
export interface Answer {
  readonly status: number
  readonly body: Uint8Array
  readonly contentType: string
}

/** What became of an attempt: it ran (value is its result), or it was answered as the repeat it is. */
export type Attempt<A> = { readonly _tag: "Ran"; readonly value: A } | Repeat

export interface KeyedRequest {
  readonly appKey: string
  readonly key: string
  readonly fingerprint: string
}

/** How an attempt's failure becomes its answer, and which answer of a result is kept. */
export interface Handlers<A, E, R2> {
  readonly recover: (cause: Cause.Cause<E | DatabaseUnavailable>) => Effect.Effect<A, never, R2>
  readonly answerOf: (value: A) => Answer | undefined
}

/** A result whose answer is not kept (a 5xx): the transaction rolls back with it. */
class NotKept extends Data.TaggedError("NotKept")<{ readonly value: unknown }> {}

/** The claim failed, yet no answer is kept under the key: it expired (or was freed) in between. */
class KeyVanished extends Data.TaggedError("KeyVanished") {}

/** A key that vanishes between a failed claim and the read is claimed again at once, three claims in all. */
const CLAIMS = 3

export class Idempotency extends Context.Service<Idempotency>()("Idempotency/Service", {
  make: Effect.gen(function*() {
    const repo = yield* IdempotencyRepo
    const tx = yield* Transaction
    const config = yield* AppConfig
    const box = yield* SecretBox

    const placeOfAnswer = (request: KeyedRequest) => placeOf("idempotency_keys.response_sealed", request.appKey, request.key)

    /** The kept answer with its body opened (the bytes first sent); plain only when kept before sealing. */
    const opened = (request: KeyedRequest, stored: StoredAnswer) => ({
      fingerprint: stored.fingerprint,
      status: stored.status,
      contentType: stored.contentType,
      body: stored.body._tag === "Sealed" ? box.openBytes(stored.body.sealed, placeOfAnswer(request)) : stored.body.bytes
    })

    /** The answer kept for a key a committed attempt holds (None: it expired or was freed meanwhile). */
    const repeatOf = (request: KeyedRequest) =>
      Effect.map(
        repo.find(request.appKey, request.key),
        (kept) => kept._tag === "Some" ? decideRepeat(opened(request, kept.value), request.fingerprint) : undefined
      )

    const claim = (request: KeyedRequest) =>
      repo.claim(
        { app_key: request.appKey, key: request.key, fingerprint: request.fingerprint, ttl_seconds: config.idempotencyTtlSeconds },
        config.idempotencyWaitSeconds
      )

    const keep = (request: KeyedRequest, answer: Answer) =>
      repo.complete({
        app_key: request.appKey,
        key: request.key,
        status: answer.status,
        sealed: box.sealBytes(answer.body, placeOfAnswer(request)),
        content_type: answer.contentType
      })

    /** The attempt's result, or the answer `recover` makes of its failure; an interruption stays one. */
    const settle = <A, E, R, R2>(attempt: Effect.Effect<A, E, R>, recover: (cause: Cause.Cause<E>) => Effect.Effect<A, never, R2>) =>
      Effect.flatMap(Effect.exit(attempt), (exit) =>
        Exit.isSuccess(exit)
          ? Effect.succeed(exit.value)
          : Cause.hasInterruptsOnly(exit.cause)
          ? Effect.failCause(exit.cause)
          : recover(exit.cause))

    const inProgress = <A, E, R>(self: Effect.Effect<Attempt<A>, E | KeyStillHeld, R>) =>
      Effect.catchIf(
        self,
        (e): e is KeyStillHeld => e instanceof KeyStillHeld,
        (e) => Effect.succeed<Attempt<A>>({ _tag: "InProgress", retryAfterSeconds: inProgressRetryAfter(e.waitedSeconds) })
      )

    /**
     * Claims the key (undefined), or gives the repeat its kept answer makes. The key can vanish
     * between a failed claim and the read (it expired): then it is claimed again; still vanishing
     * after CLAIMS claims, the request is told to come back in a second.
     */
    const claimOrRepeat = Effect.fnUntraced(function*(request: KeyedRequest) {
      if (yield* claim(request)) return undefined
      const repeat = yield* repeatOf(request)
      return repeat ?? (yield* new KeyVanished())
    }, (effect) =>
      effect.pipe(
        Effect.retry({ schedule: Schedule.recurs(CLAIMS - 1), while: (e) => e instanceof KeyVanished }),
        Effect.catchIf(
          (e): e is KeyVanished => e instanceof KeyVanished,
          (): Effect.Effect<Repeat> => Effect.succeed({ _tag: "InProgress", retryAfterSeconds: 1 }),
          Effect.fail
        )
      ))

    /** `once`'s transaction: the claim (or the repeat), the attempt in its savepoint, and its answer kept. */
    const claimedRun = Effect.fnUntraced(function*<A, E, R, R2>(
      request: KeyedRequest,
      attempt: Effect.Effect<A, E, R>,
      handlers: Handlers<A, E, R2>
    ) {
      const repeat = yield* claimOrRepeat(request)
      if (repeat !== undefined) return repeat
      const value = yield* settle(tx.run(attempt), handlers.recover)
      const answer = handlers.answerOf(value)
      if (answer === undefined) yield* repo.release(request.appKey, request.key)
      else if (!isKept(answer.status)) return yield* new NotKept({ value })
      else yield* keep(request, answer)
      return { _tag: "Ran", value } satisfies Attempt<A>
    })

    /**
     * Runs `attempt` at most once per client and key: in one transaction with the claim of the key
     * and the keeping of its answer. The attempt runs in its own savepoint, so a failure (which
     * `recover` turns into its answer) leaves no writes of its own and the key's row intact;
     * services it calls join the transaction as savepoints. `answerOf` gives the answer to keep
     * (undefined when a result has none that can be kept: its writes commit and the key is freed);
     * an answer that is not kept (a 5xx) rolls the whole transaction back.
     */
    const once = <A, E, R, R2>(request: KeyedRequest, attempt: Effect.Effect<A, E, R>, handlers: Handlers<A, E, R2>) =>
      tx.run(claimedRun(request, attempt, handlers)).pipe(
        Effect.catchIf((e): e is NotKept => e instanceof NotKept, (e) => Effect.succeed<Attempt<A>>({ _tag: "Ran", value: e.value as A })),
        inProgress
      )

    /** The computed answer kept under the key, unless a concurrent attempt kept its own first: then that one. */
    const keptOrRepeat = Effect.fnUntraced(function*<A>(request: KeyedRequest, answer: Answer, ran: Attempt<A>) {
      if (yield* claim(request)) {
        yield* keep(request, answer)
        return ran
      }
      return (yield* repeatOf(request)) ?? ran
    })

    /** `onceComputed`'s run: the kept answer, or the attempt computed and its answer kept. */
    const computed = Effect.fnUntraced(function*<A, E, R, R2>(
      request: KeyedRequest,
      attempt: Effect.Effect<A, E, R>,
      handlers: Handlers<A, E, R2>
    ) {
      const kept = yield* repeatOf(request)
      if (kept !== undefined) return kept
      const value = yield* settle(attempt, handlers.recover)
      const answer = handlers.answerOf(value)
      const ran: Attempt<A> = { _tag: "Ran", value }
      if (answer === undefined || !isKept(answer.status)) return ran
      return yield* tx.run(keptOrRepeat(request, answer, ran))
    })

    /**
     * For an attempt that creates nothing (a card parse): a kept answer is replayed; otherwise the
     * attempt runs outside of any transaction (a long computation holds no connection) and its
     * answer is kept in a short one, unless a concurrent attempt kept its own first: then that one
     * is the answer, so every answer under the key is the same. Concurrent first attempts may
     * each compute; none creates anything.
     */
    const onceComputed = <A, E, R, R2>(request: KeyedRequest, attempt: Effect.Effect<A, E, R>, handlers: Handlers<A, E, R2>) =>
      inProgress(computed(request, attempt, handlers))

    return { once, onceComputed } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Idempotency, Idempotency.make)
  static readonly layer = Idempotency.layerWithoutDependencies.pipe(Layer.provide([IdempotencyRepo.layer, Transaction.layer]))
}
