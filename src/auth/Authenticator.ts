// Verification of signed requests, in the order of DECISIONS §2: headers, app_key, timestamp
// window, signature (current or previous secret in its overlap), then the shared nonce record and
// the rate limit (§10). The caller comes from this instance's client cache; the nonce and, when
// this instance's leased tokens are spent, a new lease take one statement together.
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { type CallerInfo, SIGNING_HEADERS } from "../../schema/Auth.js"
import { Unauthorized } from "../../schema/EdgeErrors.js"
import { AppConfig } from "../Config.js"
import type { DatabaseUnavailable } from "../domain/errors.js"
import { leaseSize, LocalTokens } from "../domain/rateLease.js"
import { NONCE_PATTERN, splitUrl } from "../domain/signing.js"
import { type AdmitRequest, ReplayRepo } from "../repos/ReplayRepo.js"
import { ClientCache } from "./ClientCache.js"
import { Signer } from "./Signer.js"

export interface SignedRequest {
  readonly method: string
  /** Path and raw query exactly as sent. */
  readonly url: string
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: Uint8Array
}

export interface Authenticated {
  readonly caller: CallerInfo
  /** Signed with the previous secret during its overlap. */
  readonly deprecatedSecret: boolean
  readonly rate: { readonly rps: number; readonly burst: number }
  /** Whether the rate limit lets this request through, and the tokens left as far as this instance knows. */
  readonly bucket: { readonly allowed: boolean; readonly tokens: number }
}

const fail = (
  error: Unauthorized["error"],
  message: string,
  extra: Partial<Pick<Unauthorized, "server_time" | "string_to_sign" | "hint" | "header">> = {}
) => Effect.fail(new Unauthorized({ error, message, ...extra }))

export class Authenticator extends Context.Service<Authenticator>()("Auth/Authenticator", {
  make: Effect.gen(function*() {
    const clients = yield* ClientCache
    const replay = yield* ReplayRepo
    const signer = yield* Signer
    const config = yield* AppConfig
    const held = new LocalTokens()
    // A changed client may have a new rate: the tokens leased under the old one go.
    yield* clients.onDrop((appKey) => held.forget(appKey))

    /** The admit statement; once more after a crash emptied the nonce record (its epoch is then set anew). */
    const admit = (request: AdmitRequest) =>
      Effect.flatMap(replay.admit(request), (first) =>
        first.epoch_s !== null
          ? Effect.succeed(first)
          : Effect.andThen(replay.restartEpoch, replay.admit(request)))

    /**
     * The caller of a signed request; 503 when the database behind the check is unreachable. One
     * generator function for every request (docs/contributor.md, "Generators are made once"):
     * `(req) => Effect.gen(function*() {…})` would make a new one per call.
     */
    const authenticate: (req: SignedRequest) => Effect.Effect<Authenticated, Unauthorized | DatabaseUnavailable> = Effect
      .fnUntraced(function*(req: SignedRequest) {
        const appKey = req.headers[SIGNING_HEADERS.appKey] ?? ""
        const timestamp = req.headers[SIGNING_HEADERS.timestamp] ?? ""
        const nonce = req.headers[SIGNING_HEADERS.nonce] ?? ""
        const signature = req.headers[SIGNING_HEADERS.signature] ?? ""
        if (appKey === "" || timestamp === "" || nonce === "" || signature === "") {
          const missing = Object.entries({ "X-App-Key": appKey, "X-Timestamp": timestamp, "X-Nonce": nonce, "X-Signature": signature })
            .filter(([, v]) => v === "")
            .map(([k]) => k)
          return yield* fail("missing_credentials", `missing signing header(s): ${missing.join(", ")}`)
        }
        // A present but malformed header counts as missing and names itself (DECISIONS §2).
        if (!/^\d{1,16}$/.test(timestamp)) {
          return yield* fail("missing_credentials", "X-Timestamp must be Unix time in whole seconds", { header: "X-Timestamp" })
        }
        if (!NONCE_PATTERN.test(nonce)) {
          return yield* fail("missing_credentials", "X-Nonce must be 16 to 64 characters of [A-Za-z0-9_-]", { header: "X-Nonce" })
        }

        const client = Option.getOrUndefined(yield* clients.get(appKey))
        if (client === undefined) return yield* fail("unknown_app_key", "unknown app_key")
        const row = client.row
        if (row.status !== "active") return yield* fail("app_key_disabled", "this app_key is disabled")

        const nowMs = yield* Clock.currentTimeMillis
        const nowSec = Math.floor(nowMs / 1000)
        const ts = Number(timestamp)
        const outOfWindow = () =>
          fail(
            "timestamp_out_of_window",
            `X-Timestamp is more than ${config.signatureWindowSeconds} seconds from server time`,
            {
              server_time: nowSec,
              ...(ts > 1e11 ? { hint: "X-Timestamp looks like milliseconds; send whole seconds" } : {})
            }
          )
        if (Math.abs(nowSec - ts) > config.signatureWindowSeconds) return yield* outOfWindow()

        const { path, rawQuery } = splitUrl(req.url)
        const canonical = signer.canonical({ method: req.method, path, rawQuery, appKey, timestamp, nonce, body: req.body })
        let deprecatedSecret = false
        if (!signer.verify(client.secret, canonical, signature)) {
          const previousValid = client.previousSecret !== undefined && row.prev_secret_expires_at !== null &&
            row.prev_secret_expires_at.getTime() > nowMs
          if (previousValid && signer.verify(client.previousSecret!, canonical, signature)) {
            deprecatedSecret = true
          } else {
            return yield* fail("invalid_signature", "signature does not match; compare string_to_sign with yours", {
              string_to_sign: canonical
            })
          }
        }

        const rate = { rps: row.rate_rps ?? config.rateLimitRps, burst: row.rate_burst ?? config.rateLimitBurst }
        // A token this instance already holds spares the lease; the nonce is recorded either way.
        const local = held.take(appKey)
        const answer = yield* admit({
          appKey,
          nonce,
          nowMs,
          notBeforeMs: nowMs - config.nonceRetentionSeconds * 1000,
          signedS: ts,
          want: local ? 0 : leaseSize(rate.rps, rate.burst),
          rps: rate.rps,
          burst: rate.burst
        })
        if (!answer.fresh) {
          if (local) held.refund(appKey)
          // Signed before a crash emptied the nonce record: it cannot be told apart from a replay,
          // and its timestamp may well be within the window, so it is told what happened.
          if (answer.epoch_s !== null && ts < answer.epoch_s) {
            return yield* fail(
              "signed_before_restart",
              "this request was signed before the service's database restarted; it cannot be told apart from a replay",
              { hint: "sign the request again with a fresh X-Timestamp and X-Nonce" }
            )
          }
          return yield* fail("nonce_replayed", "this nonce was already used; send a fresh nonce on every request")
        }
        const granted = answer.granted ?? 0
        if (!local && granted >= 1) held.keep(appKey, granted - 1, answer.tokens ?? 0)
        const allowed = local || granted >= 1

        return {
          caller: deprecatedSecret ? client.deprecatedCaller : client.caller,
          deprecatedSecret,
          rate,
          bucket: { allowed, tokens: allowed ? held.remaining(appKey) : answer.tokens ?? 0 }
        }
      })

    return { authenticate } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(Authenticator, Authenticator.make)
  static readonly layer = Authenticator.layerWithoutDependencies.pipe(
    Layer.provide([ClientCache.layer, ReplayRepo.layer, Signer.layer])
  )
}
