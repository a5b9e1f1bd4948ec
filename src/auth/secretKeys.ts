// The master keys of secrets at rest (DECISIONS §13), as configured: SECRET_KEYS lists `kid:64hex`
// entries (the first seals, every one opens); SECRET_KEY, the single key of earlier installations,
// is one more key under an id derived from it. Pure: Config.ts reads the settings through it.
import { createHash } from "node:crypto"

/** A master key and its id (the id is written in every value it seals; the key never is). */
export interface SecretKey {
  readonly kid: string
  /** 64 hexadecimal characters (32 bytes), lower case. */
  readonly keyHex: string
}

/** Key ids: short, and free of the `:` and `,` the settings and the sealed form use as separators. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/

const KEY_HEX = /^[0-9a-fA-F]{64}$/

export const isKeyHex = (text: string): boolean => KEY_HEX.test(text)

/**
 * The id of SECRET_KEY: `k` and 8 hex digits of a hash of the key, so that an installation keeps the
 * same id for its key from one start to the next (its values name it) without the operator choosing
 * one; 32 bits of a hash of a 256-bit random key tell nothing of the key.
 */
export const derivedKeyId = (keyHex: string): string =>
  "k" + createHash("sha256").update("secret-box key id\n").update(keyHex.toLowerCase()).digest("hex").slice(0, 8)

/** SECRET_KEY as a key of the ring. */
export const singleKey = (keyHex: string): SecretKey => ({ kid: derivedKeyId(keyHex), keyHex: keyHex.toLowerCase() })

/**
 * SECRET_KEYS: `kid:64hex` entries separated by commas (spaces around them are ignored), newest
 * first. Messages never quote key material, only positions and ids.
 */
export const parseSecretKeys = (
  text: string
): { readonly _tag: "Keys"; readonly keys: ReadonlyArray<SecretKey> } | { readonly _tag: "Refused"; readonly message: string } => {
  const entries = text.split(",").map((e) => e.trim())
  const keys: Array<SecretKey> = []
  for (const [i, entry] of entries.entries()) {
    const colon = entry.indexOf(":")
    const kid = colon < 0 ? "" : entry.slice(0, colon)
    const keyHex = colon < 0 ? "" : entry.slice(colon + 1)
    if (!KEY_ID_PATTERN.test(kid) || !isKeyHex(keyHex)) {
      return {
        _tag: "Refused",
        message: `entry ${i + 1} of ${entries.length}: expected KID:KEY, KID of 1 to 32 letters, digits, _ or -, ` +
          `KEY of 64 hexadecimal characters (entries separated by commas, the key that seals first)`
      }
    }
    const twin = keys.find((k) => k.kid === kid || k.keyHex === keyHex.toLowerCase())
    if (twin !== undefined) {
      return {
        _tag: "Refused",
        message: twin.kid === kid ? `key id ${kid} is listed twice` : `entries ${twin.kid} and ${kid} hold the same key`
      }
    }
    keys.push({ kid, keyHex: keyHex.toLowerCase() })
  }
  return { _tag: "Keys", keys }
}

/**
 * The ring from both settings: SECRET_KEYS in its order, then SECRET_KEY (when it is not listed
 * already) as a key that opens what it sealed; SECRET_KEY alone seals too. Undefined: neither is set.
 * A `Refused` names the setting at fault.
 */
export const secretKeyring = (
  list: ReadonlyArray<SecretKey> | undefined,
  single: string | undefined
):
  | { readonly _tag: "Keys"; readonly keys: ReadonlyArray<SecretKey> }
  | { readonly _tag: "Refused"; readonly setting: string; readonly message: string }
  | undefined =>
{
  if (list === undefined) return single === undefined ? undefined : { _tag: "Keys", keys: [singleKey(single)] }
  if (single === undefined) return { _tag: "Keys", keys: list }
  const legacy = singleKey(single)
  if (list.some((k) => k.keyHex === legacy.keyHex)) return { _tag: "Keys", keys: list }
  if (list.some((k) => k.kid === legacy.kid)) {
    return {
      _tag: "Refused",
      setting: "SECRET_KEYS",
      message: `key id ${legacy.kid} is SECRET_KEY's (derived from it) but names another key here; choose another id`
    }
  }
  return { _tag: "Keys", keys: [...list, legacy] }
}
