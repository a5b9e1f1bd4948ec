// Request signing of DECISIONS.md §2, the pure part: query canonicalisation and the lines of the
// string to sign. The digests and HMACs are the Signer's (src/auth/Signer.ts).
import { percentDecodeBytes } from "./text.js"

/** RFC 3986 encoding of bytes: only A-Z a-z 0-9 - _ . ~ stay, every other byte is %XX (upper hex). */
export const rfc3986Bytes = (bytes: Uint8Array): string => {
  let out = ""
  for (const b of bytes) {
    const unreserved = (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) ||
      b === 0x2d || b === 0x5f || b === 0x2e || b === 0x7e
    out += unreserved ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, "0")}`
  }
  return out
}

/** RFC 3986 encoding of text (its UTF-8 bytes). */
export const rfc3986 = (s: string): string => rfc3986Bytes(new TextEncoder().encode(s))

/** Form-decodes one name or value to bytes and re-encodes them (DECISIONS §2 works on bytes). */
const canonical = (s: string): string => rfc3986Bytes(percentDecodeBytes(s, true))

/** The `sorted_query` line from the raw query string (without the leading `?`). */
export const sortedQuery = (rawQuery: string): string => {
  if (rawQuery === "") return ""
  const pairs: Array<readonly [string, string]> = []
  for (const part of rawQuery.split("&")) {
    if (part === "") continue
    const eq = part.indexOf("=")
    const name = eq === -1 ? part : part.slice(0, eq)
    const value = eq === -1 ? "" : part.slice(eq + 1)
    pairs.push([canonical(name), canonical(value)])
  }
  pairs.sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
  return pairs.map(([n, v]) => `${n}=${v}`).join("&")
}

export interface SigningInput {
  readonly method: string
  readonly path: string
  readonly rawQuery: string
  readonly appKey: string
  readonly timestamp: string
  readonly nonce: string
  readonly body: Uint8Array
}

/** The string to sign, given the body's MD5 (lower-case hex). */
export const canonicalString = (input: Omit<SigningInput, "body"> & { readonly bodyMd5: string }): string =>
  [
    input.method.toUpperCase(),
    input.path,
    sortedQuery(input.rawQuery),
    input.appKey,
    input.timestamp,
    input.nonce,
    input.bodyMd5
  ].join("\n")

export const NONCE_PATTERN = /^[A-Za-z0-9_-]{16,64}$/

/** The path of a request target, its query cut off (splitUrl's path, without the pair). */
export const pathOf = (url: string): string => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

/** Splits `/path?query` as sent; the path is not decoded. */
export const splitUrl = (url: string): { readonly path: string; readonly rawQuery: string } => {
  const q = url.indexOf("?")
  return q === -1 ? { path: url, rawQuery: "" } : { path: url.slice(0, q), rawQuery: url.slice(q + 1) }
}
