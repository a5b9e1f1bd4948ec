// Verification of signed requests, in the order of DECISIONS §2: headers, app_key, timestamp
// window, signature (current or previous secret in its overlap), then the shared nonce record.
import { Clock, Effect, Option } from "effect"

import { type CallerInfo, SIGNING_HEADERS } from "../../schema/Auth.js"
import { type ServiceUnavailable, Unauthorized } from "../../schema/Errors.js"
import { AppConfig } from "../Config.js"
import { hmacHex, NONCE_PATTERN, signatureMatches, splitUrl, stringToSign } from "../domain/signing.js"
import { ClientsRepo } from "../repos/ClientsRepo.js"
import { ReplayRepo } from "../repos/ReplayRepo.js"
import { SecretBox } from "./SecretBox.js"

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
}

const fail = (
  error: Unauthorized["error"],
  message: string,
  extra: Partial<Pick<Unauthorized, "server_time" | "string_to_sign" | "hint" | "header">> = {}
) => Effect.fail(new Unauthorized({ error, message, ...extra }))

export class Authenticator extends Effect.Service<Authenticator>()("Auth/Authenticator", {
  dependencies: [ClientsRepo.Default, ReplayRepo.Default],
  effect: Effect.gen(function*() {
    const clients = yield* ClientsRepo
    const replay = yield* ReplayRepo
    const box = yield* SecretBox
    const config = yield* AppConfig

    /** The caller of a signed request; 503 when the database behind the check is unreachable. */
    const authenticate = (req: SignedRequest): Effect.Effect<Authenticated, Unauthorized | ServiceUnavailable> =>
      Effect.gen(function*() {
        const appKey = req.headers[SIGNING_HEADERS.appKey] ?? ""
        const timestamp = req.headers[SIGNING_HEADERS.timestamp] ?? ""
        const nonce = req.headers[SIGNING_HEADERS.nonce] ?? ""
        const signature = req.headers[SIGNING_HEADERS.signature] ?? ""
        const missing = Object.entries({ "X-App-Key": appKey, "X-Timestamp": timestamp, "X-Nonce": nonce, "X-Signature": signature })
          .filter(([, v]) => v === "")
          .map(([k]) => k)
        if (missing.length > 0) return yield* fail("missing_credentials", `missing signing header(s): ${missing.join(", ")}`)
        // A present but malformed header counts as missing and names itself (DECISIONS §2).
        if (!/^\d{1,16}$/.test(timestamp)) {
          return yield* fail("missing_credentials", "X-Timestamp must be Unix time in whole seconds", { header: "X-Timestamp" })
        }
        if (!NONCE_PATTERN.test(nonce)) {
          return yield* fail("missing_credentials", "X-Nonce must be 16 to 64 characters of [A-Za-z0-9_-]", { header: "X-Nonce" })
        }

        const row = Option.getOrUndefined(yield* clients.findByAppKey(appKey))
        if (row === undefined) return yield* fail("unknown_app_key", "unknown app_key")
        if (row.status !== "active") return yield* fail("app_key_disabled", "this app_key is disabled")

        const nowMs = yield* Clock.currentTimeMillis
        const nowSec = Math.floor(nowMs / 1000)
        const ts = Number(timestamp)
        if (Math.abs(nowSec - ts) > config.signatureWindowSeconds) {
          return yield* fail(
            "timestamp_out_of_window",
            `X-Timestamp is more than ${config.signatureWindowSeconds} seconds from server time`,
            {
              server_time: nowSec,
              ...(ts > 1e11 ? { hint: "X-Timestamp looks like milliseconds; send whole seconds" } : {})
            }
          )
        }

        const { path, rawQuery } = splitUrl(req.url)
        const canonical = stringToSign({ method: req.method, path, rawQuery, appKey, timestamp, nonce, body: req.body })
        let deprecatedSecret = false
        if (!signatureMatches(hmacHex(box.open(row.secret_enc), canonical), signature)) {
          const previousValid = row.prev_secret_enc !== null && row.prev_secret_expires_at !== null &&
            row.prev_secret_expires_at.getTime() > nowMs
          if (previousValid && signatureMatches(hmacHex(box.open(row.prev_secret_enc!), canonical), signature)) {
            deprecatedSecret = true
          } else {
            return yield* fail("invalid_signature", "signature does not match; compare string_to_sign with yours", {
              string_to_sign: canonical
            })
          }
        }

        const fresh = yield* replay.recordNonce(appKey, nonce, nowMs, nowMs - config.nonceRetentionSeconds * 1000)
        if (!fresh) return yield* fail("nonce_replayed", "this nonce was already used; send a fresh nonce on every request")

        return {
          caller: {
            id: row.id,
            appKey: row.app_key,
            name: row.name,
            permissions: new Set(row.permissions),
            masking: row.masking
          },
          deprecatedSecret,
          rate: { rps: row.rate_rps ?? config.rateLimitRps, burst: row.rate_burst ?? config.rateLimitBurst }
        }
      }).pipe(Effect.withSpan("Authenticator.authenticate"))

    return { authenticate } as const
  })
}) {}
