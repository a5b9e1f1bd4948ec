// The signer (DECISIONS §2 and §9): the canonical string of a signed request, its HMAC, the
// constant-time check of a given signature, and the Standard Webhooks signature of an outbound
// event. One layer shared by the authenticator, the typed client and the webhook sender, so a test
// can swap it; the shared vectors are its contract (test/domain/signing.test.ts).
import { createHash, createHmac, timingSafeEqual } from "node:crypto"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { canonicalString, type SigningInput } from "../domain/signing.js"

export interface SignerShape {
  /** MD5 of the body, lower-case hex (the last line of the canonical string; the idempotency fingerprint). */
  readonly bodyMd5: (body: Uint8Array) => string
  /** The string to sign of a request. */
  readonly canonical: (input: SigningInput) => string
  /** Lower-case hex HMAC-SHA256 of a canonical string under an app secret. */
  readonly signCanonical: (secret: string, canonical: string) => string
  /** The X-Signature of a request. */
  readonly sign: (secret: string, input: SigningInput) => string
  /** Whether `signature` (hex, any case) is the HMAC of `canonical` under `secret`, compared in constant time. */
  readonly verify: (secret: string, canonical: string, signature: string) => boolean
  /**
   * `webhook-signature`: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under each secret,
   * space-separated (the current secret first, then the previous one during its overlap).
   */
  readonly webhookSignature: (secrets: ReadonlyArray<string>, id: string, timestamp: number, body: string) => string
}

const bodyMd5 = (body: Uint8Array): string => createHash("md5").update(body).digest("hex")

const signCanonical = (secret: string, canonical: string): string =>
  createHmac("sha256", Buffer.from(secret, "utf8")).update(Buffer.from(canonical, "utf8")).digest("hex")

const canonical = (input: SigningInput): string => canonicalString({ ...input, bodyMd5: bodyMd5(input.body) })

/** The HMAC key of a `whsec_…` secret: the base64 after the prefix (the Standard Webhooks form). */
const webhookKey = (secret: string): Buffer => Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64")

/** The signer itself, for code that runs outside Effect (test helpers, benchmarks). */
export const liveSigner: SignerShape = {
  bodyMd5,
  canonical,
  signCanonical,
  sign: (secret, input) => signCanonical(secret, canonical(input)),
  verify: (secret, text, signature) => {
    const expected = Buffer.from(signCanonical(secret, text), "utf8")
    const given = Buffer.from(signature.toLowerCase(), "utf8")
    return expected.length === given.length && timingSafeEqual(expected, given)
  },
  webhookSignature: (secrets, id, timestamp, body) =>
    secrets.map((s) => `v1,${createHmac("sha256", webhookKey(s)).update(`${id}.${timestamp}.${body}`).digest("base64")}`).join(" ")
}

export class Signer extends Context.Service<Signer>()("Auth/Signer", { make: Effect.succeed(liveSigner) }) {
  static readonly layer = Layer.effect(Signer, Signer.make)
}
