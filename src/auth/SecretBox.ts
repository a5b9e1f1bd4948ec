// Secrets at rest (DECISIONS §2, §13): AES-256-GCM under the configured master keys, each value
// bound to its place (table, column and row) as associated data, so that a sealed value copied to
// another row or column does not open. Stored form: `v2:<kid>:` + base64(iv | tag | ciphertext).
// Values of the first scheme (`v1:` + base64(iv | tag | ciphertext), one key, no binding) still
// open, under whichever configured key sealed them, until `keys rotate` re-seals them.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

import { AppConfig } from "../Config.js"
import type { SecretKey } from "./secretKeys.js"

/** Every column that holds sealed values (`keys rotate` and `keys list` go through them all). */
export const SEALED_COLUMNS = [
  "clients.secret_enc",
  "clients.prev_secret_enc",
  "clients.webhook_secret_enc",
  "clients.webhook_prev_secret_enc",
  "idempotency_keys.response_sealed"
] as const
export type SealedColumn = typeof SEALED_COLUMNS[number]

/**
 * Where a sealed value lives: its column and the key of its row, known before the row is written
 * (a client's app_key; a kept answer's app_key and Idempotency-Key). Never the serial id, which
 * an INSERT only learns afterwards.
 */
export interface Place {
  readonly column: SealedColumn
  readonly row: ReadonlyArray<string>
}

export const placeOf = (column: SealedColumn, ...row: ReadonlyArray<string>): Place => ({ column, row })

/** The associated data: column and row key, JSON-quoted so that no two places write the same text. */
const associatedData = (at: Place): Buffer => Buffer.from(`${at.column}:${JSON.stringify(at.row)}`, "utf8")

/** A sealed value that does not open: unknown key id, another key, tampered, or moved from elsewhere. */
export class UnopenableSecret extends Error {
  override readonly name = "UnopenableSecret"
}

const describe = (at: Place) => `${at.column} of ${JSON.stringify(at.row)}`

/** The key id a sealed value names: its kid, or `v1` for the first scheme (no id), undefined when unknown. */
export const keyIdOf = (sealed: string): string | undefined => {
  if (sealed.startsWith("v1:")) return "v1"
  if (!sealed.startsWith("v2:")) return undefined
  const end = sealed.indexOf(":", 3)
  return end < 0 ? undefined : sealed.slice(3, end)
}

export interface SecretBoxShape {
  /** The id of the key that seals (the first configured). */
  readonly sealingKeyId: string
  /** Every configured key id, the sealing one first. */
  readonly keyIds: ReadonlyArray<string>
  readonly seal: (plain: string, at: Place) => string
  /** Throws UnopenableSecret. */
  readonly open: (sealed: string, at: Place) => string
  readonly sealBytes: (plain: Uint8Array, at: Place) => string
  /** Throws UnopenableSecret. */
  readonly openBytes: (sealed: string, at: Place) => Uint8Array
  /**
   * The value sealed again for another place (a current secret becoming the previous one): bound
   * to its column, it would not open there as it is.
   */
  readonly move: (sealed: string, from: Place, to: Place) => string
  /** Sealed again under the sealing key, or undefined when it is already (nothing to do). */
  readonly reseal: (sealed: string, at: Place) => string | undefined
}

export class SecretBox extends Context.Service<SecretBox, SecretBoxShape>()("Auth/SecretBox") {}

const IV = 12
const TAG = 16

const decrypt = (key: Buffer, raw: Buffer, aad: Buffer | undefined): Buffer | undefined => {
  if (raw.length < IV + TAG) return undefined
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV))
    if (aad !== undefined) decipher.setAAD(aad)
    decipher.setAuthTag(raw.subarray(IV, IV + TAG))
    return Buffer.concat([decipher.update(raw.subarray(IV + TAG)), decipher.final()])
  } catch {
    return undefined
  }
}

/** A box over `keys` (at least one; the first seals). */
export const makeSecretBox = (keys: ReadonlyArray<SecretKey>): SecretBoxShape => {
  const [first] = keys
  if (first === undefined) throw new Error("no master key configured")
  const byId = new Map(keys.map((k) => [k.kid, Buffer.from(k.keyHex, "hex")] as const))
  for (const [kid, key] of byId) if (key.length !== 32) throw new Error(`master key ${kid} must be 64 hexadecimal characters`)
  const sealingKey = byId.get(first.kid)!
  const sealingPrefix = `v2:${first.kid}:`

  const sealBytes = (plain: Uint8Array, at: Place): string => {
    const iv = randomBytes(IV)
    const cipher = createCipheriv("aes-256-gcm", sealingKey, iv)
    cipher.setAAD(associatedData(at))
    const ct = Buffer.concat([cipher.update(plain), cipher.final()])
    return sealingPrefix + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString("base64")
  }

  const openBytes = (sealed: string, at: Place): Uint8Array => {
    const kid = keyIdOf(sealed)
    if (kid === "v1") {
      // The first scheme named no key and bound nothing: whichever configured key authenticates it.
      const raw = Buffer.from(sealed.slice(3), "base64")
      for (const key of byId.values()) {
        const plain = decrypt(key, raw, undefined)
        if (plain !== undefined) return plain
      }
      throw new UnopenableSecret(`cannot open ${describe(at)}: a v1 value that no configured key opens (SECRET_KEYS, SECRET_KEY)`)
    }
    if (kid === undefined) throw new UnopenableSecret(`cannot open ${describe(at)}: not a sealed value`)
    const key = byId.get(kid)
    if (key === undefined) {
      throw new UnopenableSecret(
        `cannot open ${describe(at)}: sealed under key id ${kid}, which is not configured (SECRET_KEYS, SECRET_KEY)`
      )
    }
    const plain = decrypt(key, Buffer.from(sealed.slice(4 + kid.length), "base64"), associatedData(at))
    if (plain === undefined) {
      throw new UnopenableSecret(
        `cannot open ${describe(at)} under key ${kid}: altered, sealed for another row or column, or another key under that id`
      )
    }
    return plain
  }

  const seal = (plain: string, at: Place) => sealBytes(Buffer.from(plain, "utf8"), at)
  const open = (sealed: string, at: Place) => Buffer.from(openBytes(sealed, at)).toString("utf8")

  return {
    sealingKeyId: first.kid,
    keyIds: keys.map((k) => k.kid),
    seal,
    open,
    sealBytes,
    openBytes,
    move: (sealed, from, to) => sealBytes(openBytes(sealed, from), to),
    reseal: (sealed, at) => (sealed.startsWith(sealingPrefix) ? undefined : sealBytes(openBytes(sealed, at), at))
  }
}

export const SecretBoxLive = Layer.effect(
  SecretBox,
  Effect.map(AppConfig, (c) => makeSecretBox(Redacted.value(c.secretKeys)))
)
